package core_test

import (
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// mod is the module path; the rules name packages relative to it.
const mod = "github.com/cairnkv/cairn"

// layers is the layer order inside core, lowest first, as ../shared/DESIGN.md §2 draws
// it: a core package may reach (import, directly or not) only core packages of a
// strictly lower layer. Every core package is in exactly one layer, so a new package
// is placed here on purpose.
var layers = [][]string{
	// Domain types and leaf helpers: the standard library only (core/s3/sse: the
	// segment format and key wrapping of encrypted S3 data).
	{"core", "core/jsonstr", "core/vclock", "core/stats", "core/datatype", "core/s3/sse"},
	// The shared vocabularies of index queries and S3 (types, codes, errors).
	{"core/index/query", "core/s3/s3types"},
	// The wire packages and HTTP plumbing: pure translation, below storage.
	{"core/kvapi/wire", "core/s3api/sig", "core/s3api/s3xml", "core/httpx"},
	// The only importer of goleveldb.
	{"core/storage"},
	// Storage-level building blocks and the extension contract; the conformance suites
	// every store and blob store implementation runs.
	// The cluster's replicated store (NATS JetStream in front of core/storage) and
	// replicated blob store, with the blob store's in-process NATS starter of tests.
	{"core/index", "core/hooks", "core/security", "core/storage/storagetest", "core/storage/blobtest", "core/cluster",
		"core/cluster/jsblob", "core/cluster/jsblob/internal/natstest"},
	// The services; the in-process cluster starter of tests.
	{"core/kv", "core/s3", "core/modules", "core/cluster/clustertest"},
	// MapReduce runs over the KV service.
	{"core/mapreduce"},
	// The two HTTP interfaces.
	{"core/kvapi", "core/s3api"},
	// Handlers, middleware and listeners.
	{"core/server"},
	// The in-process HTTP test harness over core/server.
	{"core/coretest"},
}

// httpPkgs are the packages that may import net/http and gorilla/mux (and so reach
// them); commands may too.
var httpPkgs = []string{"core/kvapi", "core/s3api", "core/httpx", "core/server", "core/coretest"}

// httpVia names, for a core package outside httpPkgs, the third-party packages through
// which it may reach net/http without serving HTTP itself: Prometheus's client links
// net/http, and core/stats only registers collectors; the embedded NATS server links
// net/http for its monitoring endpoints, which the cluster packages never enable.
var httpVia = map[string][]string{
	"core/stats":                            {"github.com/prometheus/"},
	"core/cluster":                          {"github.com/nats-io/"},
	"core/cluster/clustertest":              {"github.com/nats-io/"},
	"core/cluster/jsblob":                   {"github.com/nats-io/"},
	"core/cluster/jsblob/internal/natstest": {"github.com/nats-io/"},
}

// purePkgs are the wire packages: they may reach only the standard library and
// pureAllowed (no storage, no service, no third-party code).
var purePkgs = []string{"core/kvapi/wire", "core/s3api/sig", "core/s3api/s3xml"}

// pureAllowed are the module packages the wire packages may reach.
var pureAllowed = []string{"core", "core/jsonstr", "core/index/query", "core/s3/s3types"}

// TestDependencyRule enforces the package map of the design notes on the whole import
// graph (go list -deps), transitively:
//   - goleveldb is reachable only through core/storage;
//   - only the HTTP packages and commands import net/http or gorilla/mux, and no other
//     core package reaches them even indirectly (but core/stats through Prometheus);
//   - core/kvapi/wire, core/s3api/sig and core/s3api/s3xml reach only the standard
//     library and the leaf packages (core, core/jsonstr, core/index/query,
//     core/s3/s3types);
//   - core never reaches plugins; sdk never reaches core or plugins;
//   - the core package reaches only the standard library; core/security only the
//     standard library and core/storage;
//   - inside core, a package reaches only packages of lower layers (layers).
func TestDependencyRule(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{.ImportPath}} {{if .Standard}}std{{else}}-{{end}}{{range .Imports}} {{.}}{{end}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := parseGraph(string(out))
	if n := len(g.modulePkgs()); n < 20 {
		t.Fatalf("go list saw only %d packages of the module", n)
	}
	for _, v := range checkDeps(g, layers) {
		t.Error(v)
	}
}

// TestDependencyCheckerCatches proves the checker on synthetic graphs, in go list's
// format: each rule passes a conforming graph and reports its violation, naming the
// import chain.
func TestDependencyCheckerCatches(t *testing.T) {
	// A conforming graph: every rule holds.
	base := []string{
		"fmt std", "errors std", "net/http std fmt", "net std",
		"github.com/syndtr/goleveldb/leveldb - fmt",
		"github.com/gorilla/mux - net/http",
		"github.com/prometheus/client_golang/prometheus - net/http",
		"M/core - errors",
		"M/core/index/query - M/core",
		"M/core/storage - M/core github.com/syndtr/goleveldb/leveldb",
		"M/core/stats - github.com/prometheus/client_golang/prometheus",
		"M/core/kvapi/wire - M/core M/core/index/query",
		"M/core/index - M/core/index/query M/core/storage",
		"M/core/kv - M/core M/core/index M/core/storage",
		"M/core/kvapi - M/core/kv M/core/kvapi/wire net/http github.com/gorilla/mux",
		"M/core/security - M/core/storage",
		"M/plugins/native - M/core",
		"M/sdk/abi - fmt",
		"M/cmd/cairn - M/core/kvapi M/plugins/native net/http",
	}
	testLayers := [][]string{
		{"core", "core/stats"}, {"core/index/query"}, {"core/kvapi/wire"}, {"core/storage"},
		{"core/index", "core/security"}, {"core/kv"}, {"core/kvapi"},
	}
	tests := []struct {
		name string
		// add are lines added to (or replacing, by package path) the base graph.
		add []string
		// want are substrings of the violations expected, one per violation; none
		// for a conforming graph.
		want []string
	}{
		{"conforming graph", nil, nil},
		{"goleveldb imported outside storage",
			[]string{"M/core/kv - M/core M/core/index M/core/storage github.com/syndtr/goleveldb/leveldb"},
			[]string{"core/kv reaches goleveldb other than through core/storage: core/kv → github.com/syndtr/goleveldb/leveldb",
				"core/kvapi reaches goleveldb other than through core/storage: core/kvapi → core/kv → github.com",
				"cmd/cairn reaches goleveldb other than through core/storage: cmd/cairn → core/kvapi → core/kv → github.com"}},
		{"goleveldb through a third-party package",
			[]string{"example.com/kvwrap - github.com/syndtr/goleveldb/leveldb", "M/plugins/native - M/core example.com/kvwrap"},
			[]string{"example.com/kvwrap reaches goleveldb", "plugins/native reaches goleveldb other than through core/storage: plugins/native → example.com/kvwrap → github.com/syndtr/goleveldb/leveldb",
				"cmd/cairn reaches goleveldb other than through core/storage: cmd/cairn → plugins/native → example.com/kvwrap"}},
		{"net/http imported by a plugin",
			[]string{"M/plugins/native - M/core net/http"},
			[]string{"plugins/native imports net/http: only the HTTP packages"}},
		{"net/http reached indirectly by a service",
			[]string{"M/core/index - M/core/index/query M/core/storage M/core/stats"},
			[]string{"core/index reaches net/http: only the HTTP packages may, even indirectly (core/index → core/stats → github.com/prometheus/client_golang/prometheus → net/http)",
				"core/kv reaches net/http: only the HTTP packages may, even indirectly (core/kv → core/index → core/stats"}},
		{"stats reaching net/http other than through Prometheus",
			[]string{"M/core/stats - github.com/prometheus/client_golang/prometheus net/http"},
			[]string{"core/stats imports net/http", "core/stats reaches net/http: only the HTTP packages may, even indirectly (core/stats → net/http)"}},
		{"wire reaching storage",
			[]string{"M/core/kvapi/wire - M/core M/core/index"},
			[]string{"core/kvapi/wire must stay pure but reaches core/index", "core/kvapi/wire reaches core/index of a layer not below its own",
				"core/kvapi/wire reaches core/storage of a layer not below its own: core/kvapi/wire → core/index → core/storage"}},
		{"wire reaching third-party code",
			[]string{"M/core/kvapi/wire - M/core github.com/gorilla/mux"},
			[]string{"core/kvapi/wire imports github.com/gorilla/mux", "core/kvapi/wire reaches github.com/gorilla/mux", "core/kvapi/wire must stay pure but reaches github.com/gorilla/mux"}},
		{"core reaching plugins",
			[]string{"M/core/kv - M/core M/core/index M/core/storage M/plugins/native"},
			[]string{"core/kv reaches plugins/native: core never reaches plugins",
				"core/kvapi reaches plugins/native: core never reaches plugins (core/kvapi → core/kv → plugins/native)"}},
		{"sdk reaching core",
			[]string{"M/sdk/abi - fmt M/core/index/query"},
			[]string{"sdk/abi reaches core/index/query: sdk never reaches core or plugins"}},
		{"core package reaching a module package",
			[]string{"M/core - errors M/core/index/query", "M/core/index/query - errors"},
			[]string{"core reaches core/index/query: the core package uses only the standard library", "core reaches core/index/query of a layer not below its own"}},
		{"security reaching another package",
			[]string{"M/core/security - M/core/storage M/core/index"},
			[]string{"core/security reaches core/index: it uses only the standard library and core/storage", "core/security reaches core/index of a layer not below its own"}},
		{"a layer upside down",
			[]string{"M/core/storage - M/core github.com/syndtr/goleveldb/leveldb M/core/kv", "M/core/kv - M/core"},
			[]string{"core/storage reaches core/kv of a layer not below its own: core/storage → core/kv",
				"core/index reaches core/kv of a layer not below its own: core/index → core/storage → core/kv",
				"core/security reaches core/kv of a layer not below its own: core/security → core/storage → core/kv"}},
		{"a package outside the layer table",
			[]string{"M/core/newpkg - M/core"},
			[]string{"core/newpkg is in no layer of the table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := parseGraph(strings.ReplaceAll(mergeLines(base, tt.add), "M/", mod+"/"))
			got := checkDeps(g, testLayers)
			if len(got) != len(tt.want) {
				t.Fatalf("%d violations, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for _, w := range tt.want {
				if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, w) }) {
					t.Errorf("no violation mentions %q; got:\n%s", w, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// mergeLines returns base with each line of add replacing the base line of the same
// package, or appended, as go list's output would have it.
func mergeLines(base, add []string) string {
	lines := slices.Clone(base)
	for _, a := range add {
		name := strings.Fields(a)[0]
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Fields(l)[0] == name })
		if i >= 0 {
			lines[i] = a
		} else {
			lines = append(lines, a)
		}
	}
	return strings.Join(lines, "\n")
}

// graph is an import graph: package path → the package.
type graph map[string]*pkgNode

// pkgNode is one package of the graph.
type pkgNode struct {
	std     bool
	imports []string
}

// parseGraph reads lines of "path std|- imports..." (go list -deps -f as
// TestDependencyRule runs it).
func parseGraph(out string) graph {
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		g[f[0]] = &pkgNode{std: f[1] == "std", imports: f[2:]}
	}
	return g
}

// isStd reports whether p is in the standard library ("C" is cgo's pseudo-package,
// which the standard library's net imports).
func (g graph) isStd(p string) bool { return p == "C" || g[p] != nil && g[p].std }

// modulePkgs returns the module's packages, sorted.
func (g graph) modulePkgs() []string {
	var out []string
	for p := range g {
		if p == mod || strings.HasPrefix(p, mod+"/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// chain returns the import chain from from to the first package (in import order)
// for which target holds, never passing through a package for which avoid holds, or
// nil when there is none. from itself is neither a target nor avoided.
func (g graph) chain(from string, target, avoid func(string) bool) []string {
	seen := map[string]bool{from: true}
	var walk func(p string) []string
	walk = func(p string) []string {
		n := g[p]
		if n == nil {
			return nil
		}
		for _, imp := range n.imports {
			if seen[imp] || avoid != nil && avoid(imp) {
				continue
			}
			seen[imp] = true
			if target(imp) {
				return []string{imp}
			}
			if rest := walk(imp); rest != nil {
				return append([]string{imp}, rest...)
			}
		}
		return nil
	}
	if rest := walk(from); rest != nil {
		return append([]string{from}, rest...)
	}
	return nil
}

// rel returns p relative to the module (unchanged outside it).
func rel(p string) string {
	if p == mod {
		return p
	}
	return strings.TrimPrefix(p, mod+"/")
}

// showChain renders an import chain with module paths made relative.
func showChain(c []string) string {
	out := make([]string, len(c))
	for i, p := range c {
		out[i] = rel(p)
	}
	return strings.Join(out, " → ")
}

func inCore(p string) bool { return p == mod+"/core" || strings.HasPrefix(p, mod+"/core/") }

func isLevelDB(p string) bool { return strings.HasPrefix(p, "github.com/syndtr/goleveldb") }

func isHTTP(p string) bool {
	return p == "net/http" || strings.HasPrefix(p, "net/http/") || strings.HasPrefix(p, "github.com/gorilla/mux")
}

func hasPrefixIn(p string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(p, pre) })
}

func isModule(p string, names []string) bool { return slices.Contains(names, rel(p)) }

// checkDeps returns every violation of the rules of TestDependencyRule in g, with
// layerTable as the layer order inside core.
func checkDeps(g graph, layerTable [][]string) []string {
	var v []string
	layerOf := map[string]int{}
	for i, l := range layerTable {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	paths := make([]string, 0, len(g))
	for p := range g {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	storage := mod + "/core/storage"
	for _, p := range paths {
		n := g[p]
		r := rel(p)
		if !isLevelDB(p) && p != storage {
			if c := g.chain(p, isLevelDB, func(q string) bool { return q == storage }); c != nil {
				v = append(v, fmt.Sprintf("%s reaches goleveldb other than through core/storage: %s", r, showChain(c)))
			}
		}
		if !strings.HasPrefix(p, mod+"/") && p != mod {
			continue // the rest are rules on the module's packages
		}
		isCmd := strings.HasPrefix(p, mod+"/cmd/")
		for _, imp := range n.imports {
			if isHTTP(imp) && !isModule(p, httpPkgs) && !isCmd {
				v = append(v, fmt.Sprintf("%s imports %s: only the HTTP packages may", r, imp))
			}
		}
		if strings.HasPrefix(p, mod+"/sdk") {
			if c := g.chain(p, func(q string) bool {
				return inCore(q) || strings.HasPrefix(q, mod+"/plugins")
			}, nil); c != nil {
				v = append(v, fmt.Sprintf("%s reaches %s: sdk never reaches core or plugins (%s)", r, rel(c[len(c)-1]), showChain(c)))
			}
		}
		if !inCore(p) {
			continue
		}
		v = append(v, checkCorePkg(g, p, layerOf)...)
	}
	for _, l := range layerTable {
		for _, p := range l {
			if g[mod+"/"+p] == nil {
				v = append(v, fmt.Sprintf("the layer table names %s, which go list did not see", p))
			}
		}
	}
	return v
}

// checkCorePkg returns the violations of the rules on core package p.
func checkCorePkg(g graph, p string, layerOf map[string]int) []string {
	var v []string
	r := rel(p)
	if !isModule(p, httpPkgs) {
		via := httpVia[r]
		if c := g.chain(p, isHTTP, func(q string) bool { return hasPrefixIn(q, via) }); c != nil {
			v = append(v, fmt.Sprintf("%s reaches %s: only the HTTP packages may, even indirectly (%s)", r, c[len(c)-1], showChain(c)))
		}
	}
	if c := g.chain(p, func(q string) bool { return strings.HasPrefix(q, mod+"/plugins") }, nil); c != nil {
		v = append(v, fmt.Sprintf("%s reaches %s: core never reaches plugins (%s)", r, rel(c[len(c)-1]), showChain(c)))
	}
	std := g.isStd
	if isModule(p, purePkgs) {
		if c := g.chain(p, func(q string) bool { return !std(q) && !isModule(q, pureAllowed) }, nil); c != nil {
			v = append(v, fmt.Sprintf("%s must stay pure but reaches %s (%s)", r, rel(c[len(c)-1]), showChain(c)))
		}
	}
	switch r {
	case "core":
		if c := g.chain(p, func(q string) bool { return !std(q) }, nil); c != nil {
			v = append(v, fmt.Sprintf("core reaches %s: the core package uses only the standard library (%s)", rel(c[len(c)-1]), showChain(c)))
		}
	case "core/security":
		storage := mod + "/core/storage"
		if c := g.chain(p, func(q string) bool { return !std(q) }, func(q string) bool { return q == storage }); c != nil {
			v = append(v, fmt.Sprintf("core/security reaches %s: it uses only the standard library and core/storage (%s)", rel(c[len(c)-1]), showChain(c)))
		}
	}
	own, ok := layerOf[r]
	if !ok {
		return append(v, fmt.Sprintf("%s is in no layer of the table: place it in core/deps_test.go's layers", r))
	}
	for _, q := range g.reach(p) {
		if !inCore(q) {
			continue
		}
		if l, ok := layerOf[rel(q)]; ok && l >= own {
			v = append(v, fmt.Sprintf("%s reaches %s of a layer not below its own: %s", r, rel(q),
				showChain(g.chain(p, func(x string) bool { return x == q }, nil))))
		}
	}
	return v
}

// reach returns every package reachable from p (p excluded), sorted.
func (g graph) reach(p string) []string {
	seen := map[string]bool{p: true}
	stack := []string{p}
	var out []string
	for len(stack) > 0 {
		n := g[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if n == nil {
			continue
		}
		for _, imp := range n.imports {
			if !seen[imp] {
				seen[imp] = true
				out = append(out, imp)
				stack = append(stack, imp)
			}
		}
	}
	sort.Strings(out)
	return out
}
