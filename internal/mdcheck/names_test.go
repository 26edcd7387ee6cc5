package mdcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goDecls is what the repository's Go code declares, by name only (no types are
// checked): each package's top-level names, and each type's methods and fields
// (with the types it embeds, whose members it has too).
type goDecls struct {
	pkgs    map[string]map[string]bool // package name → top-level names
	methods map[string]map[string]bool // package name → its types' methods
	members map[string]map[string]bool // type name (any package) → methods and fields
	embeds  map[string][]string        // type name → the types it embeds
	all     map[string]bool            // every name above
}

func readDecls(t *testing.T) goDecls {
	t.Helper()
	d := goDecls{pkgs: map[string]map[string]bool{}, methods: map[string]map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}, all: map[string]bool{}}
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
		d.all[name] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(repo, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		if d.pkgs[pkg] == nil {
			d.pkgs[pkg], d.methods[pkg] = map[string]bool{}, map[string]bool{}
		}
		top := func(name string) { d.pkgs[pkg][name] = true; d.all[name] = true }
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					top(decl.Name.Name)
					continue
				}
				member(typeName(decl.Recv.List[0].Type), decl.Name.Name)
				d.methods[pkg][decl.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							top(n.Name)
						}
					case *ast.TypeSpec:
						top(spec.Name.Name)
						d.typeMembers(spec, member)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// typeMembers records the fields, interface methods and embedded types of spec.
func (d goDecls) typeMembers(spec *ast.TypeSpec, member func(typ, name string)) {
	var fields *ast.FieldList
	switch st := spec.Type.(type) {
	case *ast.StructType:
		fields = st.Fields
	case *ast.InterfaceType:
		fields = st.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			embedded := typeName(f.Type)
			member(spec.Name.Name, embedded)
			d.embeds[spec.Name.Name] = append(d.embeds[spec.Name.Name], embedded)
		}
		for _, n := range f.Names {
			member(spec.Name.Name, n.Name)
		}
	}
}

// typeName is the bare name of a (receiver or embedded) type: T for *T, pkg.T, T[K].
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// has reports whether type typ (or a type it embeds) has member name.
func (d goDecls) has(typ, name string) bool {
	if d.members[typ][name] {
		return true
	}
	for _, e := range d.embeds[typ] {
		if e != typ && d.has(e, name) {
			return true
		}
	}
	return false
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// goName is a Go name as the docs write one: Name, pkg.Name, Type.Method,
	// pkg.Type.Method; what follows it (a call's arguments, a literal's fields)
	// is cut off first.
	goName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	// fileExt ends a file name that reads like pkg.Name (schedule.md, loop.go).
	fileExt = regexp.MustCompile(`\.(md|go|yml|tsv|svg|json|xml|log|rc|sh|conf|txt)$`)
)

// resolve says what is wrong with the Go name a doc gives ("" when it is
// declared). in is the package the doc is speaking of (its line began
// "`pkg`: …"), "" for none: a bare name there is one of its functions or
// methods (or another top-level name), not a field.
func (d goDecls) resolve(name, in string) string {
	parts := strings.Split(name, ".")
	first, rest := parts[0], parts[1:]
	if len(rest) == 0 {
		// A lowercase word is as often English (`ok`, `list`, `failed`) as a
		// function, an uppercase one a variable (`TIMEOUT`): only a package or a
		// mixed-case name is checked.
		switch {
		case d.pkgs[first] != nil, strings.ToLower(first) == first, strings.ToUpper(first) == first:
			return ""
		case in != "" && !d.pkgs[in][first] && !d.methods[in][first]:
			return "package " + in + " declares no " + first
		case !d.all[first]:
			return "declared nowhere"
		}
		return ""
	}
	if top := d.pkgs[first]; top != nil {
		if !top[rest[0]] {
			return "package " + first + " declares no " + rest[0]
		}
		first, rest = rest[0], rest[1:]
		if len(rest) == 0 {
			return ""
		}
	}
	if d.members[first] == nil && d.embeds[first] == nil {
		return "no package or type " + first
	}
	if !d.has(first, rest[0]) {
		return "type " + first + " has no method or field " + rest[0]
	}
	return ""
}

// TestArchitectureNamesRealCode: every Go name that docs/architecture.md gives in a
// code span (`engine.Run`, `run.expand`, `dispatcher.fill`, `hook.Names.ListEnv`) is
// declared in the repository's code, so the map of phases to functions and the
// path of one item keep naming functions that exist as the code moves.
func TestArchitectureNamesRealCode(t *testing.T) {
	d := readDecls(t)
	data, err := os.ReadFile(filepath.Join(repo, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(data), "\n") {
		in := "" // the package this line speaks of: "`pkg`: names…"
		for _, m := range codeSpan.FindAllStringSubmatchIndex(line, -1) {
			span := strings.TrimPrefix(line[m[2]:m[3]], "*")
			if d.pkgs[span] != nil && strings.HasPrefix(line[m[1]:], ":") {
				in = span
				continue
			}
			if i := strings.IndexAny(span, "({ "); i >= 0 {
				span = span[:i]
			}
			if !goName.MatchString(span) || fileExt.MatchString(span) {
				continue
			}
			checked++
			if why := d.resolve(span, in); why != "" {
				t.Errorf("docs/architecture.md names `%s`: %s", line[m[2]:m[3]], why)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d Go names checked in docs/architecture.md: is the page still the map it was?", checked)
	}
}

// The resolver itself: what it accepts and refuses, on this repository's code.
func TestResolveNames(t *testing.T) {
	d := readDecls(t)
	for _, ok := range []string{"engine.Run", "run.expand", "dispatcher.fill", "hook.Names.ListEnv", "executor.Executor.Run", "dispatch.Item.Tag", "Layout.Claim", "ok", "engine"} {
		if why := d.resolve(ok, ""); why != "" {
			t.Errorf("resolve(%q) = %q, want declared", ok, why)
		}
	}
	if why := d.resolve("Run", "engine"); why != "" {
		t.Errorf("resolve(Run in engine) = %q, want declared", why)
	}
	if d.resolve("Markdown", "report") == "" { // a field of report.Files, not a function
		t.Error("resolve(Markdown in report) accepted a name the package does not declare at top level")
	}
	for _, bad := range []string{"engine.NoSuch", "run.noSuch", "noSuchType.Run", "hook.Names.NoSuch", "NoSuchName"} {
		if d.resolve(bad, "") == "" {
			t.Errorf("resolve(%q) accepted an undeclared name", bad)
		}
	}
}
