package kvapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// successStatuses are the statuses a handler may write itself: every other answer is an
// error returned to the funnel (writeError).
var successStatuses = map[string]bool{
	"StatusOK": true, "StatusCreated": true, "StatusNoContent": true,
	"StatusMultipleChoices": true, "StatusNotModified": true,
}

// writers are the functions that write a status, with the index of their status
// argument.
var writers = map[string]int{"WriteHeader": 0, "WriteFull": 1, "writeBody": 2, "writeEmpty": 1, "writeJSON": 2, "writeProduced": 2}

// TestOneFunnel keeps the KV interface's error answers in one place: outside
// errors.go, no code of the package writes a status other than a success one, and only
// the route adapter and the router's fallbacks (api.go) call writeError.
func TestOneFunnel(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "errors.go" {
			continue
		}
		for _, v := range funnelViolations(t, name, nil) {
			t.Error(v)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked only %d files", checked)
	}
}

// TestOneFunnelCatches proves the check on sources that bypass the funnel.
func TestOneFunnelCatches(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      int
	}{
		{"success", `package kvapi
func f(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent); httpx.WriteFull(w, http.StatusOK, "", nil) }`, 0},
		{"error status written", `package kvapi
func f(w http.ResponseWriter) { httpx.WriteFull(w, http.StatusNotFound, "text/plain", nil) }`, 1},
		{"error status by number", `package kvapi
func f(w http.ResponseWriter) { w.WriteHeader(409) }`, 1},
		{"writeError from a handler", `package kvapi
func (a *API) f(w http.ResponseWriter, r *http.Request) { a.writeError(w, r, nil) }`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := funnelViolations(t, "handler.go", []byte(tt.src)); len(got) != tt.want {
				t.Errorf("violations %q, want %d", got, tt.want)
			}
		})
	}
}

// funnelViolations parses the file name (or src, when given) and returns the places that
// answer an error outside the funnel.
func funnelViolations(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	var f *ast.File
	var err error
	if src != nil {
		f, err = parser.ParseFile(fset, name, src, 0)
	} else {
		f, err = parser.ParseFile(fset, name, nil, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn := calledName(call.Fun)
		if fn == "writeError" && name != "api.go" {
			out = append(out, fset.Position(call.Pos()).String()+": writeError called outside the route adapter")
		}
		i, ok := writers[fn]
		if !ok || i >= len(call.Args) {
			return true
		}
		switch arg := call.Args[i].(type) {
		case *ast.SelectorExpr:
			if strings.HasPrefix(arg.Sel.Name, "Status") && !successStatuses[arg.Sel.Name] {
				out = append(out, fset.Position(call.Pos()).String()+": "+fn+" writes http."+arg.Sel.Name+": return an error instead")
			}
		case *ast.BasicLit:
			if arg.Kind == token.INT && arg.Value >= "400" && len(arg.Value) == 3 {
				out = append(out, fset.Position(call.Pos()).String()+": "+fn+" writes "+arg.Value+": return an error instead")
			}
		}
		return true
	})
	return out
}

// calledName returns the name of the function or method a call calls.
func calledName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
