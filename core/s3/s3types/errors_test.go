package s3types

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStatus spot-checks the table against ../shared/spec/s3-details.md §3 and the
// fallback for a code the table does not know.
func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		code Code
		want int
	}{
		{AccessDenied, 403}, {SignatureDoesNotMatch, 403}, {NoSuchKey, 404}, {NoSuchBucket, 404},
		{BucketNotEmpty, 409}, {MissingContentLength, 411}, {PreconditionFailed, 412},
		{InvalidRange, 416}, {NotModified, 304}, {NotImplemented, 501}, {SlowDown, 503},
		{MaxMessageLengthExceeded, 400}, {RequestTimeout, 400}, {MethodNotAllowed, 405},
		{InternalError, 500}, {Code("NoSuchThing"), 500},
	} {
		if got := tt.code.Status(); got != tt.want {
			t.Errorf("%s.Status() = %d, want %d", tt.code, got, tt.want)
		}
	}
}

// TestOneTableOfCodes: every Code constant of this package has a status in statusOf and
// every entry of statusOf is a declared constant; and no other package under core
// declares an S3 error code of its own (a constant of type s3.Code or s3types.Code, or
// a conversion of a string literal to one), so the table stays the only one.
func TestOneTableOfCodes(t *testing.T) {
	declared := map[Code]bool{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				s, _ := strconv.Unquote(v.(*ast.BasicLit).Value)
				declared[Code(s)] = true
			}
		}
	}
	if len(declared) < 40 {
		t.Fatalf("found only %d Code constants in errors.go", len(declared))
	}
	for c := range declared {
		if _, ok := statusOf[c]; !ok {
			t.Errorf("code %s has no status in the table", c)
		}
	}
	for c := range statusOf {
		if !declared[c] {
			t.Errorf("the table lists %s, which is not a declared constant", c)
		}
	}
	for _, v := range foreignCodes(t, filepath.Join("..", "..")) {
		t.Errorf("%s declares an S3 error code outside s3types", v)
	}
}

// foreignCodes returns the places in the Go files under root (test files and this
// package excepted) that declare an S3 error code: a const or var of type s3.Code or
// s3types.Code with a value, or a conversion s3.Code("...") / s3types.Code("...").
func foreignCodes(t *testing.T, root string) []string {
	t.Helper()
	isCodeType := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Code" {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && (x.Name == "s3" || x.Name == "s3types")
	}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Base(filepath.Dir(path)) == "s3types" {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if n.Type != nil && isCodeType(n.Type) && len(n.Values) > 0 {
					found = append(found, fset.Position(n.Pos()).String())
				}
			case *ast.CallExpr:
				if isCodeType(n.Fun) && len(n.Args) == 1 {
					if _, ok := n.Args[0].(*ast.BasicLit); ok {
						found = append(found, fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestForeignCodesFound proves the search of TestOneTableOfCodes finds both forms.
func TestForeignCodesFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport \"github.com/cairnkv/cairn/core/s3\"\n\nconst mine s3.Code = \"Mine\"\n\nvar other = s3.Code(\"Other\")\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := foreignCodes(t, dir); len(got) != 2 {
		t.Fatalf("found %v, want the const and the conversion", got)
	}
}
