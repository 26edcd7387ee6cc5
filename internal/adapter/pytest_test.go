package adapter

import (
	"errors"
	"github.com/rocm/sgpu-queue/internal/config"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The fixture's test files, in pytest's collection order.
var fixtureFiles = []string{
	"tests/test_error.py",
	"tests/test_fail.py",
	"tests/test_pass.py",
	"tests/test_skip.py",
	"tests/dir with space/test_with space.py",
	"tests/nested/deeper/test_deep.py",
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestPytestListsFiles(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	a := mustNew(t, spec(t, "u u.log pytest,python="+py+" tests"))
	first, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sorted(fixtureFiles), sorted(tags(first))); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	// Weights key on tags: a second listing gives the same ones in the same order.
	again, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tags(first), tags(again)); diff != "" {
		t.Errorf("second listing differs (-first +second):\n%s", diff)
	}
	// The folder operand is gone from every item's command; the file is there once.
	// With JUnit on, the xunit1 family comes first (its file attributes name the
	// failed tests of a re-run), so a junit_family of the suite's own would win.
	for _, it := range first.Items {
		c := a.Command(it, Run{Dir: repo, JUnit: "/j/u/" + it.Tag + ".xml"})
		want := []string{"-m", "pytest", "-o", "junit_family=xunit1", "--junitxml=/j/u/" + it.Tag + ".xml", it.Tag}
		if diff := cmp.Diff(want, c.Args); diff != "" || c.Path != py || c.Dir != repo {
			t.Errorf("item %q: command %s %q in %s (-want +got args):\n%s", it.Tag, c.Path, c.Args, c.Dir, diff)
		}
	}
}

func TestPytestSplitTest(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	a := mustNew(t, spec(t, `u u.log pytest,split=test,python=`+py+` -m "not slow" tests/test_pass.py tests/nested`))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tests/test_pass.py::test_one",
		"tests/test_pass.py::test_two",
		"tests/test_pass.py::test_param[a b]",
		"tests/test_pass.py::test_param[x/1]",
		`tests/test_pass.py::test_param[\xfc]`,
		"tests/test_pass.py::test_param[[br]]",
		"tests/nested/deeper/test_deep.py::test_deep",
	}
	if diff := cmp.Diff(sorted(want), sorted(tags(l))); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	// Each node id runs exactly its one test, brackets, spaces and escapes included.
	junit := t.TempDir()
	for _, it := range l.Items {
		t.Run(it.Tag, func(t *testing.T) {
			t.Parallel()
			r := runItem(t, a, it, repo, filepath.Join(junit, strings.NewReplacer("/", "_", " ", "_").Replace(it.Tag)+".xml"))
			name := it.Tag[strings.Index(it.Tag, "::")+2:]
			if diff := cmp.Diff(map[string]string{name: "passed"}, r.statuses()); diff != "" || r.rc != 0 {
				t.Errorf("rc %d, cases (-want +got):\n%s\n%s", r.rc, diff, r.out)
			}
		})
	}
}

// Per-file items, run for real: each runs its own file only (not the folder of the
// suite's arguments again), exits as pytest does, and writes JUnit where asked.
func TestPytestRunsItems(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	a := mustNew(t, spec(t, `u u.log "pytest,python=`+py+`,env=FIXTURE_SUITE_ENV=from env=" -p no:cacheprovider tests`))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		rc    int
		cases map[string]string
	}{
		"tests/test_error.py": {1, map[string]string{"test_needs_broken_fixture": "error", "test_fine_too": "passed"}},
		"tests/test_fail.py":  {1, map[string]string{"test_fine": "passed", "test_broken_math": "failed"}},
		"tests/test_pass.py": {0, map[string]string{"test_one": "passed", "test_two": "passed",
			"test_param[a b]": "passed", "test_param[x/1]": "passed", `test_param[\xfc]`: "passed", "test_param[[br]]": "passed"}},
		"tests/test_skip.py":                      {0, map[string]string{"test_skipped": "skipped", "test_skipif": "skipped", "test_known_bug": "skipped"}},
		"tests/dir with space/test_with space.py": {0, map[string]string{"test_in_a_folder_with_a_space": "passed", "test_env_from_the_suite_line": "passed"}},
		"tests/nested/deeper/test_deep.py":        {0, map[string]string{"test_deep": "passed", "test_deep_slow": "passed"}},
	}
	junit := filepath.Join(t.TempDir(), "junit", "u") // as <prefix><label>/<tag><suffix>
	for _, it := range l.Items {
		t.Run(it.Tag, func(t *testing.T) {
			t.Parallel()
			w, ok := want[it.Tag]
			if !ok {
				t.Fatalf("unexpected item %q", it.Tag)
			}
			r := runItem(t, a, it, repo, filepath.Join(junit, it.Tag+".xml"), "HIP_VISIBLE_DEVICES=3")
			if r.rc != w.rc {
				t.Errorf("rc = %d, want %d\n%s", r.rc, w.rc, r.out)
			}
			if diff := cmp.Diff(w.cases, r.statuses()); diff != "" {
				t.Errorf("test cases (-want +got): only the item's own file runs\n%s", diff)
			}
			cs := r.cases()
			if c, ok := cs["test_two"]; ok && c.prop("gpus") != "3" {
				t.Errorf("test_two saw HIP_VISIBLE_DEVICES=%q, want the item's pin 3", c.prop("gpus"))
			}
			if c, ok := cs["test_env_from_the_suite_line"]; ok && c.prop("suite_env") != "from env=" {
				t.Errorf("the suite's env= reached the test as %q, want %q", c.prop("suite_env"), "from env=")
			}
		})
	}
}

// The path operands are told from option values by pytest's own reading, so an
// option the table does not know (the fixture conftest adds --fixture-level) is
// kept with its value, and options that take values stay in every item.
func TestPytestOperands(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	tests := []struct {
		line  string
		items []string
		opts  []string
	}{
		{
			line:  `u u.log pytest,python=` + py + ` --rootdir=. -o console_output_style=classic -p no:cacheprovider -m "not slow" -k "not nothing_matches" tests/nested "tests/dir with space" tests/test_fail.py`,
			items: []string{"tests/nested/deeper/test_deep.py", "tests/dir with space/test_with space.py", "tests/test_fail.py"},
			opts:  []string{"--rootdir=.", "-o", "console_output_style=classic", "-p", "no:cacheprovider", "-m", "not slow", "-k", "not nothing_matches"},
		},
		{
			line:  `u u.log pytest,python=` + py + ` --fixture-level 3 tests/test_fail.py -vk fine`,
			items: []string{"tests/test_fail.py"},
			opts:  []string{"--fixture-level", "3", "-vk", "fine"},
		},
		{
			line:  `u u.log pytest,python=` + py + ` -q --durations 5 -- tests/test_skip.py`,
			items: []string{"tests/test_skip.py"},
			opts:  []string{"-q", "--durations", "5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			a := mustNew(t, spec(t, tt.line))
			l, err := list(t, a, repo)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sorted(tt.items), sorted(tags(l))); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			for _, it := range l.Items {
				c := a.Command(it, Run{Dir: repo})
				want := append(append([]string{"-m", "pytest"}, tt.opts...), it.Tag)
				if diff := cmp.Diff(want, c.Args); diff != "" {
					t.Errorf("item %q args (-want +got):\n%s", it.Tag, diff)
				}
			}
			// And the command really runs only that file: one JUnit test file's cases.
			r := runItem(t, a, l.Items[0], repo, filepath.Join(t.TempDir(), "j.xml"))
			if len(r.cases()) == 0 || r.rc > 1 {
				t.Errorf("rc %d, cases %v\n%s", r.rc, r.statuses(), r.out)
			}
		})
	}
}

func TestPytestAmbiguousOperand(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	a := mustNew(t, spec(t, "u u.log pytest,python="+py+" --fixture-level tests/test_fail.py tests/test_fail.py"))
	_, err := list(t, a, repo)
	if err == nil || !strings.Contains(err.Error(), "write option values with '='") {
		t.Fatalf("err = %v, want the ask to write the value with '='", err)
	}
}

// pytest's rootdir is tests/ here (its ini file is there): node ids are relative to
// it, the items' tags and commands to the repo root they run from.
func TestPytestRootdirBelowRepo(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest-subini")
	a := mustNew(t, spec(t, "u u.log pytest,split=test,python="+py+" tests"))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"tests/unit/test_a.py::test_a", "tests/unit/test_a.py::test_b"}, tags(l)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	r := runItem(t, a, l.Items[1], repo, filepath.Join(t.TempDir(), "j.xml"))
	if diff := cmp.Diff(map[string]string{"test_b": "passed"}, r.statuses()); diff != "" || r.rc != 0 {
		t.Errorf("rc %d, cases (-want +got):\n%s\n%s", r.rc, diff, r.out)
	}
}

// A test file that does not import is an item of its own, named in a warning with
// the cause, and the other files are listed (pytest's --continue-on-collection-errors);
// run, that item fails with the traceback in its output and its JUnit file.
func TestPytestCollectionErrorIsAnItem(t *testing.T) {
	py := pytestPython(t)
	for _, split := range []string{"", ",split=test"} {
		t.Run("split"+split, func(t *testing.T) {
			repo := fixture(t, "pytest-broken")
			a := mustNew(t, spec(t, "u u.log pytest"+split+",python="+py+" tests"))
			l, err := list(t, a, repo)
			if err != nil {
				t.Fatal(err)
			}
			ok := "tests/test_ok.py"
			if split != "" {
				ok += "::test_ok"
			}
			if got, want := tags(l), []string{ok, "tests/test_import_error.py"}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("items %q, want %q", got, want)
			}
			if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "pytest could not collect tests/test_import_error.py") ||
				!strings.Contains(l.Warnings[0], "no_such_module_sgpu_fixture") {
				t.Errorf("warnings %q", l.Warnings)
			}
			r := runItem(t, a, l.Items[1], repo, filepath.Join(t.TempDir(), "j.xml"))
			if r.rc == 0 || !strings.Contains(r.out, "no_such_module_sgpu_fixture") {
				t.Errorf("the broken file's item: rc %d, output:\n%s", r.rc, r.out)
			}
		})
	}
}

func TestPytestListingFails(t *testing.T) {
	py := pytestPython(t)
	// An interpreter without pytest: the real one with its site-packages cut off.
	nopytest := filepath.Join(t.TempDir(), "python-without-pytest")
	if err := os.WriteFile(nopytest, []byte("#!/bin/sh\nexec "+py+" -S \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, fixture, line string
		is                  error
		msg                 []string
	}{
		{"a conftest.py that does not import", "pytest-conftest-broken", "u u.log pytest,python=" + py + " tests", nil,
			[]string{"test.conf:1: suite \"u\": ", "no_such_module_sgpu_conftest"}},
		{"nothing collected", "pytest", `u u.log pytest,python=` + py + ` -k "no_such_test" tests`, ErrNoItems,
			[]string{"pytest collected no tests (exit 5)"}},
		{"no such path", "pytest", "u u.log pytest,python=" + py + " tests/no_such_dir", nil,
			[]string{"pytest rejected the arguments (exit 4", "no_such_dir"}},
		{"no pytest", "pytest", "u u.log pytest,python=" + nopytest + " tests", ErrNoPytest,
			[]string{nopytest + " cannot import pytest: install pytest for it, or name the interpreter that has it with python="}},
		{"no interpreter", "pytest", "u u.log pytest,python=.venv/bin/python tests", nil,
			[]string{"cannot run its listing", ".venv/bin/python", "command not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := fixture(t, tt.fixture)
			_, err := list(t, mustNew(t, spec(t, tt.line)), repo)
			if err == nil {
				t.Fatal("listing succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %v\nwant it to say %q", err, m)
				}
			}
		})
	}
}

// python= may name a project's venv relative to the repo root; it is found there
// whatever the directory sgpu-queue itself runs in.
func TestPytestVenvInterpreter(t *testing.T) {
	py := pytestPython(t)
	repo := fixture(t, "pytest")
	if err := os.MkdirAll(filepath.Join(repo, ".venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(repo, ".venv", "bin", "python")); err != nil {
		t.Fatal(err)
	}
	a := mustNew(t, spec(t, "u u.log pytest,python=.venv/bin/python tests/test_fail.py"))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	c := a.Command(l.Items[0], Run{Dir: repo})
	if c.Path != filepath.Join(repo, ".venv/bin/python") {
		t.Errorf("interpreter %q, want the repo's .venv/bin/python", c.Path)
	}
	if r := runItem(t, a, l.Items[0], repo, ""); r.rc != 1 || !strings.Contains(r.out, "1 failed, 1 passed") {
		t.Errorf("rc %d, want 1 with one failure:\n%s", r.rc, r.out)
	}
}

func TestPytestRefusesArgs(t *testing.T) {
	for _, arg := range []string{"--junitxml=out.xml", "--junit-xml", "--co", "--collect-only", "--fixtures", "-h"} {
		_, err := New(config.Suite{Label: "u", File: "c.conf", Line: 3, Mode: config.Pytest, Args: []string{"tests", arg}})
		if err == nil || !strings.HasPrefix(err.Error(), `c.conf:3: suite "u": argument "`+arg+`"`) {
			t.Errorf("%s: err = %v, want it refused naming the line and the argument", arg, err)
		}
	}
}

func TestStaticOperands(t *testing.T) {
	tests := []struct {
		args string // \x1f-separated
		want []int
	}{
		{"tests", []int{0}},
		{"-k\x1fnot slow\x1ftests\x1ft2", []int{2, 3}},
		{"-m\x1fgpu\x1f-p\x1fno:cacheprovider\x1f-c\x1fsetup.cfg\x1f-o\x1fa=b\x1f-W\x1ferror\x1f-r\x1fA\x1fx", []int{12}},
		{"-kfoo\x1f-k=foo\x1f-vk\x1fexpr\x1f-vx\x1ftests", []int{5}},
		{"--rootdir=.\x1f--rootdir\x1f.\x1f--timeout\x1f300\x1f-n\x1f4\x1fa", []int{7}},
		{"--unknown-flag\x1fa", []int{1}},
		{"-q\x1f--\x1f-weird.py\x1fb", []int{1, 2, 3}},
		{"-", []int{0}},
		{"", nil},
	}
	for _, tt := range tests {
		var args []string
		if tt.args != "" {
			args = strings.Split(tt.args, "\x1f")
		}
		if got := staticOperands(args); !cmp.Equal(tt.want, got) {
			t.Errorf("staticOperands(%q) = %v, want %v", args, got, tt.want)
		}
	}
}

func TestReconcileOperands(t *testing.T) {
	tests := []struct {
		args   []string
		pytest []string
		want   []string // the options left
		err    string
	}{
		{[]string{"-k", "x", "tests"}, []string{"tests"}, []string{"-k", "x"}, ""},
		{[]string{"--level", "3", "tests"}, []string{"tests"}, []string{"--level", "3"}, ""},
		{[]string{"--cov", "tests", "tests/a.py"}, []string{"tests/a.py"}, []string{"--cov", "tests"}, ""},
		{[]string{"-q", "--", "-x.py"}, []string{"-x.py"}, []string{"-q"}, ""},
		{[]string{"-x", "a", "a"}, []string{"a"}, nil, "cannot tell which"},
		{[]string{"--opt", "a", "b"}, []string{"a", "b"}, []string{"--opt"}, ""},
		{[]string{"tests"}, nil, []string{"tests"}, ""},
	}
	for _, tt := range tests {
		drop, err := reconcileOperands(tt.args, staticOperands(tt.args), tt.pytest)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("reconcile(%q, %q): err = %v, want %q", tt.args, tt.pytest, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("reconcile(%q, %q): %v", tt.args, tt.pytest, err)
			continue
		}
		if got := withoutIndices(tt.args, drop); !cmp.Equal(tt.want, got, cmpopts.EquateEmpty()) {
			t.Errorf("reconcile(%q, %q) leaves %q, want %q", tt.args, tt.pytest, got, tt.want)
		}
	}
}

func FuzzParseCollection(f *testing.F) {
	f.Add([]byte("tests/a.py::t\n\n1 test collected in 0.01s\n\nsgpu-queue-pytest-collection " +
		`{"rootdir":"/r/tests","invocation_dir":"/r","operands":["tests"],"items":["unit/a.py::t[x]","unit/a.py::u","b.py::c::d"]}` + "\n"))
	f.Add([]byte("sgpu-queue-pytest-collection {\"rootdir\":\"/r\",\"invocation_dir\":\"/r/sub\",\"items\":[\"../x.py::t\",\"::t\",\"a\\nb::c\",\"-a.py::t\"]}\n" +
		"sgpu-queue-pytest-collection {\"rootdir\":\"/r\",\"invocation_dir\":\"/r\",\"items\":[\"a.py::t\"]}"))
	f.Add([]byte("sgpu-queue-pytest-collection {\"rootdir\":\"r\",\"invocation_dir\":\"/r\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCollection(data)
		if err != nil {
			return
		}
		for _, split := range []string{"", "test"} {
			p := &pytestSuite{s: config.Suite{Label: "u", File: "f", Line: 1}}
			p.s.Options.Split = split
			l, err := p.items(c, []string{"-q"})
			if err != nil {
				if !errors.Is(err, ErrNoItems) && !strings.Contains(err.Error(), "node id") {
					t.Fatalf("items: %v", err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, it := range l.Items {
				if it.Tag == "" || seen[it.Tag] || strings.ContainsAny(it.Tag, "\r\n") || split == "" && strings.Contains(it.Tag, "::") {
					t.Fatalf("split %q: tag %q (empty, repeated, multi-line or not a file)", split, it.Tag)
				}
				seen[it.Tag] = true
				if args := p.Command(it, Run{}).Args; args[len(args)-1] != it.Tag && args[len(args)-1] != "./"+it.Tag {
					t.Fatalf("item %q runs operand %q", it.Tag, args[len(args)-1])
				}
			}
		}
	})
}
