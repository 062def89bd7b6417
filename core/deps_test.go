package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRule enforces the package map of the design notes on the direct imports
// of every non-test package:
//   - only core/storage imports goleveldb;
//   - only the HTTP packages (core/kvapi, core/s3api, core/httpx, core/server), the
//     in-process HTTP test harness core/coretest and commands import net/http or
//     gorilla/mux; core/kvapi/wire stays free of them;
//   - core never imports plugins; sdk never imports core or plugins;
//   - the core package itself imports only the standard library;
//   - core/security imports only the standard library and core/storage.
func TestDependencyRule(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/cairnkv/cairn/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/cairnkv/cairn"
	httpPkgs := map[string]bool{
		mod + "/core/kvapi": true, mod + "/core/s3api": true, mod + "/core/httpx": true, mod + "/core/server": true,
		mod + "/core/coretest": true, // the in-process HTTP test harness over core/server
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		checked++
		for _, imp := range imports {
			switch {
			case strings.HasPrefix(imp, "github.com/syndtr/goleveldb") && pkg != mod+"/core/storage":
				t.Errorf("%s imports %s: only core/storage may import goleveldb", pkg, imp)
			case (imp == "net/http" || strings.HasPrefix(imp, "github.com/gorilla/mux")) &&
				!httpPkgs[pkg] && !strings.HasPrefix(pkg, mod+"/cmd/"):
				t.Errorf("%s imports %s: only the HTTP packages may", pkg, imp)
			case strings.HasPrefix(pkg, mod+"/core") && strings.HasPrefix(imp, mod+"/plugins"):
				t.Errorf("%s imports %s: core never imports plugins", pkg, imp)
			case strings.HasPrefix(pkg, mod+"/sdk") && (strings.HasPrefix(imp, mod+"/core") || strings.HasPrefix(imp, mod+"/plugins")):
				t.Errorf("%s imports %s: sdk never imports core or plugins", pkg, imp)
			case pkg == mod+"/core" && strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				t.Errorf("core imports %s: the core package uses only the standard library", imp)
			case pkg == mod+"/core/security" && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && imp != mod+"/core/storage":
				t.Errorf("core/security imports %s: it uses only the standard library and core/storage", imp)
			}
		}
	}
	if checked < 5 {
		t.Fatalf("go list saw only %d packages", checked)
	}
}
