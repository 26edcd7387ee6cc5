package mdcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// goNames is what the repository's Go code declares: per package (by its name), its
// top-level functions, types, variables and constants; per type name (of any
// package), its methods and fields.
type goNames struct {
	pkgs    map[string]map[string]bool
	members map[string]map[string]bool
	// methods are the methods and fields of each package's types, by package.
	methods map[string]map[string]bool
	// jsonKeys are the json tags of struct fields: `merge.parts` names a key of
	// run.json, not Go.
	jsonKeys map[string]bool
}

// declared reads every non-test Go file under internal/ and main.go.
func declared(t *testing.T) goNames {
	t.Helper()
	n := goNames{pkgs: map[string]map[string]bool{}, members: map[string]map[string]bool{}, methods: map[string]map[string]bool{}, jsonKeys: map[string]bool{}}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][v] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(repo, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		if n.pkgs[pkg] == nil {
			n.pkgs[pkg] = map[string]bool{}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(n.pkgs, pkg, d.Name.Name)
					continue
				}
				add(n.members, recvType(d.Recv.List[0].Type), d.Name.Name)
				add(n.methods, pkg, d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(n.pkgs, pkg, s.Name.Name)
						typeMembers(s, func(m string) { add(n.members, s.Name.Name, m); add(n.methods, pkg, m) })
						jsonTags(s, n.jsonKeys)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							add(n.pkgs, pkg, id.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// recvType is the name of a method's receiver type: T, *T, T[P].
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// typeMembers calls f with each field of a struct type and each method of an
// interface type.
func typeMembers(s *ast.TypeSpec, f func(string)) {
	var fields *ast.FieldList
	switch t := s.Type.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, fl := range fields.List {
		for _, id := range fl.Names {
			f(id.Name)
		}
		if len(fl.Names) == 0 { // embedded: its name is a member too
			f(recvType(fl.Type))
		}
	}
}

// jsonTags adds the json tag names of a struct type's fields to keys.
func jsonTags(s *ast.TypeSpec, keys map[string]bool) {
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return
	}
	for _, fl := range st.Fields.List {
		if fl.Tag == nil {
			continue
		}
		tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
		if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
}

// has reports whether the dotted name exists: pkg.Name, pkg.Type.Member,
// Type.Member, or, inside a package's context (ctx), Name or Type.Member.
func (n goNames) has(ctx, name string) (known, ok bool) {
	parts := strings.Split(name, ".")
	if len(parts) > 1 && !slices.ContainsFunc(parts, func(p string) bool { return !n.jsonKeys[p] }) {
		return true, true // a path of JSON keys (run.json's merge.parts)
	}
	if decls, isPkg := n.pkgs[parts[0]]; isPkg && len(parts) > 1 {
		if !decls[parts[1]] && !n.members[parts[1]][parts[1]] {
			return true, false
		}
		return true, len(parts) == 2 || n.members[parts[1]][parts[2]]
	}
	if len(parts) == 1 {
		if ctx == "" {
			return false, false
		}
		return true, n.pkgs[ctx][parts[0]] || n.methods[ctx][parts[0]]
	}
	if m, isType := n.members[parts[0]]; isType {
		return true, m[parts[1]]
	}
	if ctx != "" {
		return true, false
	}
	return false, false
}

var (
	// dotted is a code span naming Go: identifiers joined by dots, maybe a call.
	dotted = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}(\(\))?$`)
	// fileExt ends a code span that names a file, not Go (run.json, loop.go).
	fileExt = regexp.MustCompile(`\.(json|tsv|md|svg|xml|go|sh|log|rc|conf|yml|yaml|txt|partial|py|cmds|weights|golden)$`)
	// tableCtx is "`pkg`: " in a table cell of architecture.md: the names after it
	// are that package's.
	tableCtx = regexp.MustCompile("`([a-z]+)`: ")
)

// TestDocsNameGoThatExists: every Go name the docs write as `pkg.Func`,
// `pkg.Type.Method` or `Type.Method` (and, in the phase table of architecture.md,
// each bare name after its "`pkg`:") is declared in the code, so the map a
// contributor follows leads to real functions.
func TestDocsNameGoThatExists(t *testing.T) {
	names := declared(t)
	pages, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	pages = append(pages, filepath.Join(repo, "README.md"))
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, page)
		var bad []string
		eachTextLine(string(data), func(line string) {
			for _, seg := range contexts(line, rel == filepath.Join("docs", "architecture.md")) {
				for _, span := range CodeSpans(seg.text) {
					span = strings.TrimSuffix(strings.TrimPrefix(span, "*"), "()")
					if !dotted.MatchString(span) || fileExt.MatchString(span) {
						continue
					}
					known, ok := names.has(seg.pkg, span)
					if !known {
						continue
					}
					checked++
					if !ok {
						bad = append(bad, span)
					}
				}
			}
		})
		sort.Strings(bad)
		for _, b := range bad {
			t.Errorf("%s names `%s`, which the code does not declare", rel, b)
		}
	}
	if checked < 100 {
		t.Errorf("only %d Go names checked: is the parser finding the packages?", checked)
	}
}

type segment struct{ pkg, text string }

// contexts splits a table row of architecture.md's phase table at each "`pkg`: ",
// so the bare names after it are looked up in pkg; other lines are one segment.
func contexts(line string, table bool) []segment {
	if !table || !strings.HasPrefix(line, "| ") {
		return []segment{{"", line}}
	}
	var out []segment
	locs := tableCtx.FindAllStringSubmatchIndex(line, -1)
	if len(locs) == 0 {
		return []segment{{"", line}}
	}
	out = append(out, segment{"", line[:locs[0][0]]})
	for i, l := range locs {
		end := len(line)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out = append(out, segment{line[l[2]:l[3]], line[l[1]:end]})
	}
	return out
}
