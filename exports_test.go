package traceq_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interfaceMethods are methods that satisfy an interface (fmt.Stringer,
// error, errors.Is, gonum's plot.Plotter, sort, io, json): called through
// the interface, never by name.
var interfaceMethods = map[string]bool{
	"String": true, "Error": true, "Unwrap": true, "Is": true, "As": true,
	"Plot": true, "DataRange": true, "GlyphBoxes": true, "Thumbnail": true, "Ticks": true,
	"Len": true, "Less": true, "Swap": true, "Read": true, "Write": true, "Close": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
	"Set": true, "Get": true,
}

// TestNoDeadExports: every exported function and method of the module's
// library packages (internal/ apart) is called by its package's own code, or named by
// another package (its tests included) or the documentation. An export
// that only its own tests call is dead API: unexport or remove it. Names
// are compared without types: a method counts as used wherever a
// selector of its name appears, so this finds the dead, not all of them.
func TestNoDeadExports(t *testing.T) {
	type decl struct {
		pos      token.Position
		dir, pkg string
		name     string
		recv     string
		isMethod bool
	}
	var decls []decl
	// own[dir]: identifiers and selector names in a package's code;
	// others[dir]: the selectors (pkg.Name, x.Name) of every other file,
	// tests included, keyed by the directory they are in.
	type uses struct{ idents, sels map[string]int }
	code := map[string]uses{}
	tests := map[string]uses{}
	var docs strings.Builder
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			b, err := os.ReadFile(p)
			docs.Write(b)
			return err
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(p)
		isTest := strings.HasSuffix(p, "_test.go")
		m := code
		if isTest {
			m = tests
		}
		u, ok := m[dir]
		if !ok {
			u = uses{map[string]int{}, map[string]int{}}
			m[dir] = u
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					u.sels[x.Name+"."+n.Sel.Name]++
				}
				u.sels["."+n.Sel.Name]++
			case *ast.Ident:
				u.idents[n.Name]++
			}
			return true
		})
		if isTest || f.Name.Name == "main" || strings.HasPrefix(dir, "internal") {
			return nil // internal packages are the tests' tools
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			dc := decl{pos: fset.Position(fd.Pos()), dir: dir, pkg: f.Name.Name, name: fd.Name.Name}
			if fd.Recv != nil {
				if interfaceMethods[dc.name] {
					continue
				}
				dc.isMethod = true
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if g, ok := typ.(*ast.IndexExpr); ok {
					typ = g.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					dc.recv = id.Name
				}
			}
			decls = append(decls, dc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decls {
		used := false
		for dir, u := range code {
			if d.isMethod {
				used = u.sels["."+d.name] > 0
			} else if dir == d.dir {
				used = u.idents[d.name] > 1 // the declaration is one
			} else {
				used = u.sels[d.pkg+"."+d.name] > 0
			}
			if used {
				break
			}
		}
		for dir, u := range tests {
			if used || dir == d.dir {
				continue
			}
			used = d.isMethod && u.sels["."+d.name] > 0 || !d.isMethod && u.sels[d.pkg+"."+d.name] > 0
		}
		if !used {
			used = strings.Contains(docs.String(), d.pkg+"."+d.name) || d.recv != "" && strings.Contains(docs.String(), d.recv+"."+d.name)
		}
		if !used {
			t.Errorf("%s: %s.%s is exported, and only its own tests call it: unexport or remove it", d.pos, d.pkg, d.name)
		}
	}
}
