package internal_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// The web's views hold data, not means: a page's view model (a type of
// the console with a template method) and everything it holds show no
// type of app, nor of anything that does I/O, so no template can reach
// the database or the network. The handlers read through app and hand
// the views what they read.

// viewBans are the packages whose types no view may hold.
var viewBans = []string{mod + "app", mod + "store", "net/http", "database/sql", "context"}

// viewViolations lists the fields of pkg's view models, and of the types
// they hold, that show a type of viewBans.
func viewViolations(pkg *types.Package) []string {
	var out []string
	seen := map[types.Type]bool{}
	var walk func(where string, t types.Type)
	walk = func(where string, t types.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Named:
			if p := t.Obj().Pkg(); p != nil {
				for _, ban := range viewBans {
					if p.Path() == ban {
						out = append(out, fmt.Sprintf("%s holds %s.%s", where, p.Name(), t.Obj().Name()))
						return
					}
				}
				if p != pkg {
					return // the domain's types and the kernels' are data
				}
			}
			walk(where, t.Underlying())
		case *types.Alias:
			walk(where, types.Unalias(t))
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Signature:
			for v := range t.Params().Variables() {
				walk(where, v.Type())
			}
			for v := range t.Results().Variables() {
				walk(where, v.Type())
			}
		case *types.Struct:
			for f := range t.Fields() {
				walk(where+"."+f.Name(), f.Type())
			}
		case *types.Interface:
			for m := range t.Methods() {
				walk(where+"."+m.Name(), m.Type())
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		n, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		for m := range n.Methods() {
			if m.Name() == "template" {
				walk(pkg.Name()+"."+name, n)
			}
		}
	}
	return out
}

// countViews counts pkg's view models.
func countViews(pkg *types.Package) int {
	n := 0
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok {
			if named, ok := tn.Type().(*types.Named); ok {
				for m := range named.Methods() {
					if m.Name() == "template" {
						n++
					}
				}
			}
		}
	}
	return n
}

// TestViewsHoldNoMeans: the console's view models hold no app, store,
// request or context.
func TestViewsHoldNoMeans(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, "./web/console")
	pkg, _ := checkFiles(t, fset, imp, mod+"web/console", parseDir(t, fset, "web/console"))
	if n := countViews(pkg); n < 20 {
		t.Fatalf("%d view models found in the console; the check would prove nothing", n)
	}
	for _, v := range viewViolations(pkg) {
		t.Error(v)
	}
}

// TestViewsCheckCatchesMeans: a view holding app, directly or through a
// type of its own package, is reported; one holding the domain's types
// is not.
func TestViewsCheckCatchesMeans(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, "./app", "./monitor")
	src := `package console
import (
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
)
type Shell struct{ Name string }
type Row struct{ Actor app.Actor }
type Bad struct {
	Shell Shell
	App   *app.App
}
func (Bad) template() string { return "bad.html" }
type Deep struct{ Rows []Row }
func (Deep) template() string { return "deep.html" }
type Fine struct {
	Shell Shell
	State monitor.State
}
func (Fine) template() string { return "fine.html" }
`
	f, err := parser.ParseFile(fset, "views.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _ := checkFiles(t, fset, imp, mod+"web/console", []*ast.File{f})
	got := strings.Join(viewViolations(pkg), "\n")
	for _, want := range []string{"console.Bad.App holds app.App", "console.Deep.Rows.Actor holds app.Actor"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not reported; reported:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Fine") {
		t.Errorf("a view of the domain's types reported:\n%s", got)
	}
}
