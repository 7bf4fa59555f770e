package internal_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The floor plan (STYLE.md "A layout that shows the architecture"), held
// by these tests. Imports point inward: the edges (httpapi, the web
// console and the public pages) and the runners (scheduler, deliver)
// reach persistence only through app; app owns the workflows; store runs
// SQL and decides nothing; the domain and the small kernels do no I/O.

const mod = "github.com/tocsin/tocsin/internal/"

// The rooms. Every internal package is in exactly one; a new package
// fails TestLayering until it is placed.
var (
	// kernels: small, dependency-free helpers every layer may use (and
	// racedetector, which the tests of every layer may use).
	kernels = []string{"errs", "ids", "clean", "ratelimit", "stamp", "racedetector", "wait"}
	// domain: the pure model (states, deadlines, recurrences, channel
	// rendering and signing): no clock, no I/O.
	domain = []string{"monitor", "incident", "heartbeat", "notify", "maintenance", "account", "recur", "metrics", "statuspage"}
	// adapters: what wraps the outside world (SQL, the network, mail,
	// keys, configuration).
	adapters = []string{"clientaddr", "store", "store/pingjournal", "store/pingblock", "store/filelock", "probe", "netguard", "mailer", "secrets", "config"}
	// app: the use cases and workflows.
	appLayer = []string{"app"}
	// edges and runners: the API, the web console and the public pages,
	// background loops, delivery.
	edges = []string{"httpapi", "scheduler", "deliver", "web/console", "web/public"}
	// test support: what tests share (fresh databases, a browser, the
	// loops and servers serve would run). Only tests import it, so it may
	// reach any room; nothing outside it may import it.
	testSupport = []string{"store/storetest", "browsertest", "scheduler/schedulertest", "web/webtest"}
)

// ioPkgs is what the domain and the kernels must not reach, even transitively.
var ioPkgs = []string{"net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "scheduler",
	mod + "deliver", mod + "probe", mod + "netguard", mod + "mailer", mod + "secrets", mod + "config", mod + "web/console", mod + "web/public"}

// directRules: what a package must not import itself.
var directRules = map[string][]string{
	"httpapi":   {mod + "store", "database/sql", mod + "config", mod + "scheduler", mod + "deliver"},
	"scheduler": {mod + "store", "database/sql", "net/http", mod + "httpapi", mod + "config"},
	"deliver":   {mod + "store", "database/sql", mod + "httpapi", mod + "config", mod + "scheduler"},
	"app":       {"net/http", mod + "httpapi", mod + "web/console", mod + "web/public", mod + "config", mod + "scheduler", mod + "deliver", mod + "probe"},
	"store":     {mod + "app", mod + "httpapi", mod + "web/console", mod + "web/public", mod + "config", mod + "scheduler", mod + "deliver", mod + "probe", "net/http"},
	"probe":     {"database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
	"mailer":    {"database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
	"secrets":   {mod + "store", mod + "app", mod + "httpapi"},
	"netguard":  {mod + "store", mod + "app", mod + "httpapi"},
	// filelock coordinates processes beside a database file: no SQL.
	"store/filelock": {"database/sql", mod + "store", mod + "app"},
	// The web's products: the signed-in console and the public pages.
	"web/console": {mod + "store", "database/sql", mod + "config", mod + "scheduler", mod + "deliver"},
	"web/public":  {mod + "store", "database/sql", mod + "config", mod + "scheduler", mod + "deliver", mod + "web/console"},
}

type pkgInfo struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages is `go list` over every internal package.
func listPackages(t *testing.T) map[string]pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkgInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		name := strings.TrimPrefix(f[0], mod)
		pkgs[name] = pkgInfo{ImportPath: f[0], Imports: strings.Fields(f[1]), Deps: strings.Fields(f[2])}
	}
	if len(pkgs) < 15 {
		t.Fatalf("go list found %d packages; the checks would prove nothing", len(pkgs))
	}
	return pkgs
}

// depViolations: what of deps a package of the domain or the kernels must
// not reach; kernels must not reach the domain either.
func depViolations(pkg string, deps []string) []string {
	bad := ioPkgs
	if slices.Contains(kernels, pkg) {
		bad = append(slices.Clone(ioPkgs), prefixed(domain)...)
	}
	var out []string
	for _, d := range deps {
		if slices.Contains(bad, d) {
			out = append(out, fmt.Sprintf("internal/%s reaches %s", pkg, d))
		}
	}
	return out
}

func importViolations(pkg string, imports []string) []string {
	var out []string
	if pkg == "store" {
		// store imports only the domain and the kernels (and its own
		// subpackages): the types it keeps, nothing that acts.
		allowed := prefixed(slices.Concat(domain, kernels))
		for _, imp := range imports {
			if strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, mod+"store/") && !slices.Contains(allowed, imp) {
				out = append(out, fmt.Sprintf("internal/store imports %s, neither domain nor kernel", imp))
			}
		}
	}
	for _, b := range directRules[pkg] {
		if slices.Contains(imports, b) {
			out = append(out, fmt.Sprintf("internal/%s imports %s", pkg, b))
		}
	}
	return out
}

// testSupportViolations: what of test support a package outside it
// imports (the imports go list reports are of its non-test files).
func testSupportViolations(pkg string, imports []string) []string {
	if slices.Contains(testSupport, pkg) {
		return nil
	}
	var out []string
	for _, imp := range imports {
		if slices.Contains(prefixed(testSupport), imp) {
			out = append(out, fmt.Sprintf("internal/%s imports %s, which only tests may import", pkg, imp))
		}
	}
	return out
}

func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mod + n
	}
	return out
}

// TestLayering: every package is placed, the domain and kernels reach no
// I/O even transitively, and no package imports across the plan.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	rooms := slices.Concat(kernels, domain, adapters, appLayer, edges, testSupport)
	for name := range pkgs {
		if name == "" || name == "github.com/tocsin/tocsin/internal" {
			continue
		}
		if !slices.Contains(rooms, name) {
			t.Errorf("internal/%s is in no room of the floor plan: place it in layering_test.go", name)
		}
		for _, v := range testSupportViolations(name, pkgs[name].Imports) {
			t.Error(v)
		}
	}
	for _, p := range slices.Concat(kernels, domain) {
		info, ok := pkgs[p]
		if !ok {
			t.Errorf("internal/%s is listed but does not exist", p)
			continue
		}
		for _, v := range depViolations(p, info.Deps) {
			t.Error(v)
		}
	}
	for p := range directRules {
		info, ok := pkgs[p]
		if !ok {
			t.Errorf("internal/%s has rules but does not exist", p)
			continue
		}
		if len(info.Imports) == 0 {
			t.Fatalf("internal/%s: no imports listed; the check would prove nothing", p)
		}
		for _, v := range importViolations(p, info.Imports) {
			t.Error(v)
		}
	}
}

// exportImporter type-checks against the compiled export data of the
// module's packages and their dependencies.
func exportImporter(t *testing.T, fset *token.FileSet, pkgs ...string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}

// checkFiles type-checks the non-test Go files of dir (or the given
// sources, for the tests of the checks) as package path.
func checkFiles(t *testing.T, fset *token.FileSet, imp types.Importer, path string, files []*ast.File) (*types.Package, *types.Info) {
	t.Helper()
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(path, fset, files, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	return pkg, info
}

func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	// The files this platform builds (go list applies the build
	// constraints), tests left out.
	out, err := exec.Command("go", "list", "-f", `{{join .GoFiles " "}}`, "./"+dir).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", dir, err)
	}
	var files []*ast.File
	for _, n := range strings.Fields(string(out)) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// representation lists the domain functions store may call: how a value
// is written and read back (codecs, parsers of stored text), never what
// to do. Each is named with why it is representation.
var representation = map[string]string{
	"heartbeat.Signal.String":  "a ping's signal as stored text",
	"heartbeat.ParseSignal":    "a ping's signal read back from stored text",
	"heartbeat.Label":          "a ping key's clean form, as stored (cleaning twice changes nothing)",
	"heartbeat.Runtime.Wake":   "the wake_at column: an index derived from the runtime stored beside it",
	"incident.SubjectType":     "which table an id names, read from its prefix",
	"monitor.Monitor.Interval": "the interval_seconds column as a duration",
	"monitor.Config.Clone":     "a copy of a stored config, so a cached one is never shared",
	"monitor.NextSlot":         "a monitor's slots: a fixed function of its id and interval, the stored form of its schedule",
}

// policyUses lists the store's uses of the domain's decisions: functions
// and methods (a transition, a bound, a message), and values that are
// not an enum of a domain type (a horizon, a window). Types, struct
// fields and enum constants are how the records look, and are fine.
func policyUses(fset *token.FileSet, info *types.Info) []string {
	var out []string
	for id, obj := range info.Uses {
		p := obj.Pkg()
		if p == nil || !slices.Contains(prefixed(domain), p.Path()) {
			continue
		}
		what := p.Name() + "." + obj.Name()
		switch o := obj.(type) {
		case *types.TypeName:
			continue
		case *types.Var:
			if o.IsField() {
				continue
			}
		case *types.Const:
			if n, ok := o.Type().(*types.Named); ok && n.Obj().Pkg() == p {
				continue // an enum value of the domain's own type
			}
		case *types.Func:
			if r := o.Signature().Recv(); r != nil {
				what = p.Name() + "." + types.TypeString(r.Type(), func(*types.Package) string { return "" }) + "." + o.Name()
			}
			if _, ok := representation[what]; ok {
				continue
			}
		}
		out = append(out, fmt.Sprintf("%s: store uses %s, a decision of the domain: app makes it and hands store the result", fset.Position(id.Pos()), what))
	}
	slices.Sort(out)
	return out
}

// storeTypesExported lists the exported API of the app package that shows
// a store type: its functions, methods, variables, and the exported
// fields of its types. New is the one exception: the composition root
// (cmd/tocsin) hands app its store, and nothing else builds an App.
func storeTypesExported(pkg *types.Package) []string {
	const storePath = mod + "store"
	var out []string
	seen := map[types.Type]bool{}
	var shows func(t types.Type) bool
	shows = func(t types.Type) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		defer delete(seen, t)
		switch t := t.(type) {
		case *types.Named:
			if t.Obj().Pkg() != nil && t.Obj().Pkg().Path() == storePath {
				return true
			}
			for a := range t.TypeArgs().Types() {
				if shows(a) {
					return true
				}
			}
			return false // a named type's own fields are checked as its own
		case *types.Alias:
			return shows(types.Unalias(t))
		case *types.Pointer:
			return shows(t.Elem())
		case *types.Slice:
			return shows(t.Elem())
		case *types.Array:
			return shows(t.Elem())
		case *types.Map:
			return shows(t.Key()) || shows(t.Elem())
		case *types.Chan:
			return shows(t.Elem())
		case *types.Signature:
			for v := range t.Params().Variables() {
				if shows(v.Type()) {
					return true
				}
			}
			for v := range t.Results().Variables() {
				if shows(v.Type()) {
					return true
				}
			}
		case *types.Struct:
			for f := range t.Fields() {
				if (f.Exported() || f.Embedded()) && shows(f.Type()) {
					return true
				}
			}
		case *types.Interface:
			for m := range t.Methods() {
				if m.Exported() && shows(m.Type()) {
					return true
				}
			}
		}
		return false
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() || name == "New" {
			continue
		}
		switch o := obj.(type) {
		case *types.TypeName:
			if shows(o.Type().Underlying()) {
				out = append(out, "app."+name+" shows a store type")
			}
			if n, ok := o.Type().(*types.Named); ok {
				for m := range n.Methods() {
					if m.Exported() && shows(m.Type()) {
						out = append(out, "app."+name+"."+m.Name()+" shows a store type")
					}
				}
			}
		default:
			if shows(o.Type()) {
				out = append(out, "app."+name+" shows a store type")
			}
		}
	}
	return out
}

// TestStoreDecidesNothing: store runs the SQL app asks for; the decisions
// (transitions, incidents, bounds, horizons, messages) are app's, and
// app hands them to the store with each call rather than installing them
// in it.
func TestStoreDecidesNothing(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, "./store/...")
	_, info := checkFiles(t, fset, imp, mod+"store", parseDir(t, fset, "store"))
	if len(info.Uses) < 1000 {
		t.Fatalf("%d uses found in store; the check would prove nothing", len(info.Uses))
	}
	for _, v := range policyUses(fset, info) {
		t.Error(v)
	}
	fields := 0
	for _, dir := range []string{"store", "store/pingjournal", "store/pingblock", "store/filelock"} {
		files := parseDir(t, fset, dir)
		_, info := checkFiles(t, fset, imp, mod+dir, files)
		v, n := installedCallbacks(fset, files, info)
		fields += n
		for _, v := range v {
			t.Error(v)
		}
	}
	if fields < 20 {
		t.Fatalf("%d field assignments found in store; the check would prove nothing", fields)
	}
}

// installedCallbacks lists the behaviour installed in the store's types
// after construction: an assignment, in anything but a constructor (a
// function, not a method, named New… or Open…), to a field of func or
// interface type whose results carry the domain's types (a state, a
// transition, a heartbeat's settings: decisions). Through such a field
// the store would call back up into app, which installed it (a Set…
// method is the usual shape); app hands its decisions with each call
// instead. It also returns how many field assignments it looked at.
func installedCallbacks(fset *token.FileSet, files []*ast.File, info *types.Info) (out []string, fields int) {
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			constructor := fn.Recv == nil && slices.ContainsFunc([]string{"New", "new", "Open", "open"}, func(p string) bool {
				return strings.HasPrefix(fn.Name.Name, p)
			})
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok {
					return true
				}
				for _, lhs := range as.Lhs {
					sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr)
					if !ok {
						continue
					}
					s := info.Selections[sel]
					if s == nil || s.Kind() != types.FieldVal {
						continue
					}
					fields++
					field := s.Obj()
					if constructor || field.Pkg() == nil || !strings.HasPrefix(field.Pkg().Path(), mod+"store") || !decides(field.Type()) {
						continue
					}
					out = append(out, fmt.Sprintf("%s: %s sets %s.%s (%s) after construction: behaviour installed in the store that returns the domain's decisions; hand them with each call instead",
						fset.Position(sel.Pos()), fn.Name.Name, strings.TrimPrefix(types.TypeString(s.Recv(), func(*types.Package) string { return "" }), "*"),
						field.Name(), types.TypeString(field.Type(), (*types.Package).Name)))
				}
				return true
			})
		}
	}
	slices.Sort(out)
	return out, fields
}

// decides reports whether t is a func or an interface that returns one of
// the domain's types.
func decides(t types.Type) bool {
	returnsDomain := func(sig *types.Signature) bool {
		for v := range sig.Results().Variables() {
			if mentionsDomain(v.Type()) {
				return true
			}
		}
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Signature:
		return returnsDomain(u)
	case *types.Interface:
		for m := range u.Methods() {
			if returnsDomain(m.Signature()) {
				return true
			}
		}
	}
	return false
}

// mentionsDomain reports whether t is, or is made of (pointers, slices,
// maps, type arguments), a type of the domain.
func mentionsDomain(t types.Type) bool {
	switch t := t.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && slices.Contains(prefixed(domain), p.Path()) {
			return true
		}
		for a := range t.TypeArgs().Types() {
			if mentionsDomain(a) {
				return true
			}
		}
	case *types.Alias:
		return mentionsDomain(types.Unalias(t))
	case *types.Pointer:
		return mentionsDomain(t.Elem())
	case *types.Slice:
		return mentionsDomain(t.Elem())
	case *types.Array:
		return mentionsDomain(t.Elem())
	case *types.Map:
		return mentionsDomain(t.Key()) || mentionsDomain(t.Elem())
	}
	return false
}

// TestAppShowsNoStoreType: what app exports is free of store types, so
// the API and the web app, which only see app, cannot reach the store.
func TestAppShowsNoStoreType(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, "./app")
	pkg, _ := checkFiles(t, fset, imp, mod+"app", parseDir(t, fset, "app"))
	if len(pkg.Scope().Names()) < 50 {
		t.Fatalf("%d names in app; the check would prove nothing", len(pkg.Scope().Names()))
	}
	for _, v := range storeTypesExported(pkg) {
		t.Error(v)
	}
}

// TestLayeringCatchesViolations breaks each rule on purpose and sees the
// checks report it, so that a check that quietly passes is caught.
func TestLayeringCatchesViolations(t *testing.T) {
	if v := depViolations("monitor", []string{"fmt", "net/http", mod + "clean"}); len(v) != 1 || !strings.Contains(v[0], "net/http") {
		t.Errorf("a domain package reaching net/http: %q", v)
	}
	if v := depViolations("errs", []string{mod + "monitor"}); len(v) != 1 {
		t.Errorf("a kernel reaching the domain: %q", v)
	}
	if v := importViolations("httpapi", []string{"net/http", mod + "app", mod + "store"}); len(v) != 1 {
		t.Errorf("httpapi importing store: %q", v)
	}
	if v := importViolations("web/console", []string{"net/http", mod + "app", mod + "web/public", mod + "store"}); len(v) != 1 || !strings.Contains(v[0], "store") {
		t.Errorf("the console importing store: %q", v)
	}
	if v := importViolations("web/public", []string{"net/http", mod + "app", mod + "web/console"}); len(v) != 1 {
		t.Errorf("the public pages importing the console: %q", v)
	}
	if v := importViolations("scheduler", []string{mod + "app", "database/sql"}); len(v) != 1 {
		t.Errorf("a runner reaching the database past app: %q", v)
	}
	if v := importViolations("store", []string{"database/sql", mod + "monitor", mod + "store/pingjournal", mod + "secrets"}); len(v) != 1 || !strings.Contains(v[0], "secrets") {
		t.Errorf("store importing an adapter: %q", v)
	}
	if v := testSupportViolations("web/console", []string{"net/http", mod + "app", mod + "store/storetest"}); len(v) != 1 || !strings.Contains(v[0], "storetest") {
		t.Errorf("the console importing test support: %q", v)
	}
	if v := testSupportViolations("scheduler/schedulertest", []string{mod + "store/storetest", mod + "scheduler", mod + "app"}); len(v) != 0 {
		t.Errorf("test support importing test support and the runners: %q", v)
	}

	fset := token.NewFileSet()
	imp := exportImporter(t, fset, "./store", "./notify", "./incident", "./monitor")
	src := `package store
import (
	"time"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
)
func giveUp(at time.Time) time.Time { return at.Add(notify.RetryHorizon) }
func bound(k notify.Kind) int { return notify.RateBound(k) }
func move(t monitor.Tracker, at time.Time, th monitor.Thresholds) monitor.Tracker {
	t, _ = t.Observe(monitor.ResultDown, "", at, th)
	return t
}
func status() incident.Status { return incident.Resolved }
var _ notify.Channel
`
	f, err := parser.ParseFile(fset, "violation.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, info := checkFiles(t, fset, imp, mod+"store", []*ast.File{f})
	got := strings.Join(policyUses(fset, info), "\n")
	for _, want := range []string{"notify.RetryHorizon", "notify.RateBound", "monitor.Tracker.Observe"} {
		if !strings.Contains(got, want) {
			t.Errorf("store using %s not reported; reported:\n%s", want, got)
		}
	}
	for _, fine := range []string{"incident.Resolved", "notify.Channel", "monitor.ResultDown"} {
		if strings.Contains(got, fine) {
			t.Errorf("%s (an enum value or a type) reported as a decision:\n%s", fine, got)
		}
	}

	installed := `package store
import (
	"time"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
)
type Rules interface {
	Settings(h heartbeat.Heartbeat) (heartbeat.Settings, error)
}
type Judge func(rt heartbeat.Runtime) (heartbeat.Runtime, []monitor.Transition)
type Sink interface{ Close() error }
type DB struct {
	rules Rules
	judge Judge
	sink  Sink
	now   func() time.Time
}
func Open(r Rules) *DB {
	db := &DB{}
	db.rules = r
	return db
}
func (db *DB) SetRules(r Rules)               { db.rules = r }
func (db *DB) Sweep(j Judge)                  { db.judge = j }
func (db *DB) SetSink(s Sink)                 { db.sink = s }
func (db *DB) SetClock(now func() time.Time)  { db.now = now }
func (db *DB) Ping(r Rules) (heartbeat.Settings, error) { return r.Settings(heartbeat.Heartbeat{}) }
`
	f, err = parser.ParseFile(fset, "installed.go", installed, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{f}
	_, info = checkFiles(t, fset, exportImporter(t, fset, "./heartbeat", "./monitor"), mod+"store", files)
	v, _ := installedCallbacks(fset, files, info)
	got = strings.Join(v, "\n")
	if len(v) != 2 || !strings.Contains(got, "SetRules sets DB.rules") || !strings.Contains(got, "Sweep sets DB.judge") {
		t.Errorf("callbacks installed after construction: want SetRules and Sweep reported; reported:\n%s", got)
	}
	for _, fine := range []string{"Open", "sink", "now", "Ping"} {
		if strings.Contains(got, fine) {
			t.Errorf("%s reported: set in a constructor, returning no decision, or a decision passed with a call:\n%s", fine, got)
		}
	}

	app := `package app
import "github.com/tocsin/tocsin/internal/store"
type Job struct{ store.Runtime }
type Fine struct{ db *store.DB }
func Open() (*store.DB, error) { return nil, nil }
func (Fine) Jobs() []*Job { return nil }
func (Fine) Rows() map[string][]store.Runtime { return nil }
func New(db *store.DB) *Fine { return &Fine{db} }
`
	f, err = parser.ParseFile(fset, "app.go", app, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _ := checkFiles(t, fset, imp, mod+"app", []*ast.File{f})
	got = strings.Join(storeTypesExported(pkg), "\n")
	for _, want := range []string{"app.Job ", "app.Open ", "app.Fine.Rows "} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not reported; reported:\n%s", want, got)
		}
	}
	for _, fine := range []string{"app.New", "app.Fine shows", "app.Fine.Jobs"} {
		if strings.Contains(got, fine) {
			t.Errorf("%s reported; it shows no store type:\n%s", fine, got)
		}
	}
}
