package adapter

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/config"
)

// writeFiles writes files (slash path under dir -> content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// narrower is a's Narrower; the test fails when it has none.
func narrower(t *testing.T, a Adapter) Narrower {
	t.Helper()
	n, ok := a.(Narrower)
	if !ok {
		t.Fatalf("%T does not implement Narrower", a)
	}
	return n
}

// rerunModule has three tests; the one whose parameter is hostile (space, dot,
// brackets, "::") fails while RERUN_FAIL is set: a flaky test.
const rerunModule = `import os

import pytest


def test_ok():
    pass


class TestC:
    @pytest.mark.parametrize("w", ["a b.[c]::d", "ok"])
    def test_m(self, w):
        assert w == "ok" or not os.environ.get("RERUN_FAIL")
`

// A pytest item with three tests, one failing: TestIDs names that one (relative to
// the repo root, as the item's tag, wherever pytest's rootdir is) out of three, and
// the item narrowed to it runs exactly it, passing once it passes.
func TestPytestNarrowed(t *testing.T) {
	py := pytestPython(t)
	for _, tt := range []struct {
		name  string
		files map[string]string
		args  string
		tag   string
		err   error // from TestIDs
	}{
		{name: "rootdir is the repo root", files: map[string]string{"tests/dir with space/test_re run.py": rerunModule},
			args: "tests", tag: "tests/dir with space/test_re run.py"},
		{name: "rootdir below the repo root", files: map[string]string{"tests/pytest.ini": "[pytest]\n", "tests/unit/test_a b.py": rerunModule},
			args: "tests/unit", tag: "tests/unit/test_a b.py"},
		{name: "the suite asks for xunit2", files: map[string]string{"tests/test_x.py": rerunModule},
			args: "-o junit_family=xunit2 tests", tag: "tests/test_x.py", err: ErrCannotNarrow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			writeFiles(t, repo, tt.files)
			a := mustNew(t, spec(t, "u u.log pytest,python="+py+" -p no:cacheprovider "+tt.args))
			l, err := list(t, a, repo)
			if err != nil {
				t.Fatal(err)
			}
			if got := tags(l); len(got) != 1 || got[0] != tt.tag {
				t.Fatalf("items %q, want [%q]", got, tt.tag)
			}
			it := l.Items[0]
			first := runItem(t, a, it, repo, filepath.Join(t.TempDir(), "1.xml"), "RERUN_FAIL=1")
			if first.rc != 1 || len(first.cases()) != 3 {
				t.Fatalf("first attempt: rc %d, cases %v, want 1 and three\n%s", first.rc, first.statuses(), first.out)
			}
			ids, total, err := narrower(t, a).TestIDs(it, first.junit)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), first.junit) {
					t.Fatalf("TestIDs: %q, %v; want an error naming %s wrapping %v", ids, err, first.junit, tt.err)
				}
				return
			}
			want := tt.tag + "::TestC::test_m[a b.[c]::d]"
			if err != nil || total != 3 || !cmp.Equal(ids, []string{want}) {
				t.Fatalf("TestIDs = %q, %d, %v; want [%q], 3", ids, total, err, want)
			}
			c := a.Command(it, Run{Dir: repo, JUnit: "j.xml", Only: ids})
			if got := c.Args[len(c.Args)-1]; got != want || strings.Contains(strings.Join(c.Args, "\n"), "\n"+tt.tag+"\n") {
				t.Errorf("narrowed args %q: want the node id as the one operand", c.Args)
			}
			// The narrowed attempt: exactly that test, passing now; failing, it names itself.
			again := mustRun(t, a, it, ids, repo)
			if again.rc != 0 || !cmp.Equal(again.statuses(), map[string]string{"test_m[a b.[c]::d]": "passed"}) {
				t.Errorf("narrowed attempt: rc %d, cases %v; want 0 and the one test passed\n%s", again.rc, again.statuses(), again.out)
			}
			still := mustRun(t, a, it, ids, repo, "RERUN_FAIL=1")
			ids2, total2, err := narrower(t, a).TestIDs(it, still.junit)
			if still.rc != 1 || err != nil || total2 != 1 || !cmp.Equal(ids2, ids) {
				t.Errorf("narrowed attempt failing again: rc %d, TestIDs %q, %d, %v; want 1, the same id, 1", still.rc, ids2, total2, err)
			}
		})
	}
}

// mustRun runs it narrowed to only, with a fresh JUnit file.
func mustRun(t *testing.T, a Adapter, it Item, only []string, repo string, env ...string) ran {
	t.Helper()
	r, err := tryNarrowed(a, it, only, repo, filepath.Join(t.TempDir(), "j.xml"), env...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Ids that are not the item's tests run the whole item: more than asked, never less.
func TestNarrowedForeignIDsRunWhole(t *testing.T) {
	p, err := newPytest(config.Suite{Label: "u"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCTest(config.Suite{Label: "c", Args: []string{"--test-dir", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	file := Item{Tag: "tests/test_x.py"}
	node := Item{Tag: "tests/test_x.py::test_p"}
	base := Item{Tag: "S.T", Args: []string{"S.T/0", "S.T/1"}}
	for _, tt := range []struct {
		name string
		a    Adapter
		it   Item
		only []string
		want string // the last operand, or the -R
	}{
		{"pytest: a test of the file", p, file, []string{"tests/test_x.py::T::a[1]"}, "tests/test_x.py::T::a[1]"},
		{"pytest: nil runs whole", p, file, nil, "tests/test_x.py"},
		{"pytest: empty runs whole", p, file, []string{}, "tests/test_x.py"},
		{"pytest: another file", p, file, []string{"tests/test_x.py::a", "tests/test_y.py::a"}, "tests/test_x.py"},
		{"pytest: a file's prefix", p, file, []string{"tests/test_x.pyc::a"}, "tests/test_x.py"},
		{"pytest: the same name, no test", p, file, []string{"tests/test_x.py"}, "tests/test_x.py"},
		{"pytest: a node's parameter", p, node, []string{"tests/test_x.py::test_p[1]"}, "tests/test_x.py::test_p[1]"},
		{"pytest: another node", p, node, []string{"tests/test_x.py::test_q"}, "tests/test_x.py::test_p"},
		{"pytest: newline", p, file, []string{"tests/test_x.py::a\n-x"}, "tests/test_x.py"},
		{"ctest: one of the names", c, base, []string{"S.T/1"}, `^S\.T/1$`},
		{"ctest: not a name of the item", c, base, []string{"S.T/1", "S.T/2"}, `^(S\.T/0|S\.T/1)$`},
		{"ctest: nil runs whole", c, base, nil, `^(S\.T/0|S\.T/1)$`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.a.Command(tt.it, Run{Only: tt.only})
			got := cmd.Args[len(cmd.Args)-1]
			if _, ok := tt.a.(*ctestSuite); ok {
				got = cmd.Args[len(cmd.Args)-2]
			}
			if got != tt.want {
				t.Errorf("args %q: got %q, want %q", cmd.Args, got, tt.want)
			}
		})
	}
}

// The CMake project of the ctest re-run tests: base "Rerun" has three tests with
// regular-expression characters and spaces in their names, each a prefix of the
// next, the hostile one failing while RERUN_FAIL is set; base "Gone" has a test
// whose program is missing (CTest says "notrun", skipped, and fails the run) beside
// its deliberate skips.
const rerunCMake = `cmake_minimum_required(VERSION 3.21)
project(rerun NONE)
enable_testing()
add_test(NAME "Rerun/a b[1].x" COMMAND sh -c "exit 0")
add_test(NAME "Rerun/a b[1].x(2)|*?+$^\\" COMMAND sh -c "test -z $RERUN_FAIL")
add_test(NAME "Rerun/a b" COMMAND sh -c "exit 0")
add_test(NAME "Gone/missing" COMMAND /nonexistent/sgpu-queue-rerun-test)
add_test(NAME "Gone/skipped" COMMAND sh -c "exit 77")
set_tests_properties("Gone/skipped" PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME "Gone/skipped re" COMMAND sh -c "echo SKIPME")
set_tests_properties("Gone/skipped re" PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPME")
add_test(NAME "Gone/ok" COMMAND sh -c "exit 0")
`

func TestCTestNarrowed(t *testing.T) {
	needCTest(t)
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{"rr/CMakeLists.txt": rerunCMake})
	if out, err := exec.CommandContext(context.Background(), "cmake", "-S", filepath.Join(repo, "rr"), "-B", filepath.Join(repo, "rr", "build")).CombinedOutput(); err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	a := mustNew(t, spec(t, "c c.log ctest,split=base --test-dir rr/build"))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]Item{}
	for _, it := range l.Items {
		items[it.Tag] = it
	}
	hostile := `Rerun/a b[1].x(2)|*?+$^\`
	for _, tt := range []struct {
		tag, fail string
		total     int
		rc        int // of the narrowed attempt
	}{
		{tag: "Rerun", fail: hostile, total: 3},
		{tag: "Gone", fail: "Gone/missing", total: 4, rc: 8},
	} {
		t.Run(tt.tag, func(t *testing.T) {
			it, ok := items[tt.tag]
			if !ok {
				t.Fatalf("no item %s in %q", tt.tag, tags(l))
			}
			first := runItem(t, a, it, repo, filepath.Join(t.TempDir(), "1.xml"), "RERUN_FAIL=1")
			if first.rc != 8 || len(first.cases()) != tt.total {
				t.Fatalf("first attempt: rc %d, cases %v; want 8 and %d\n%s", first.rc, first.statuses(), tt.total, first.out)
			}
			ids, total, err := narrower(t, a).TestIDs(it, first.junit)
			if err != nil || total != tt.total || !cmp.Equal(ids, []string{tt.fail}) {
				t.Fatalf("TestIDs = %q, %d, %v; want [%q], %d", ids, total, err, tt.fail, tt.total)
			}
			again := mustRun(t, a, it, ids, repo)
			if again.rc != tt.rc || len(again.cases()) != 1 || again.cases()[tt.fail].Name != tt.fail {
				t.Errorf("narrowed attempt: rc %d, cases %v; want %d and exactly %q\n%s", again.rc, again.statuses(), tt.rc, tt.fail, again.out)
			}
		})
	}
}

// A cmd item is its line: it cannot be narrowed, and Only changes nothing.
func TestCmdDoesNotNarrow(t *testing.T) {
	a := mustNew(t, config.Suite{Label: "s", Mode: config.Cmd, Args: []string{"cmds.txt"}})
	if _, ok := a.(Narrower); ok {
		t.Errorf("the cmd adapter implements Narrower")
	}
	it := Item{Tag: "t", Args: []string{"make check"}}
	whole, only := a.Command(it, Run{Dir: "/r"}), a.Command(it, Run{Dir: "/r", Only: []string{"x"}})
	if !cmp.Equal(whole.Args, only.Args) || !cmp.Equal(whole.Env, only.Env) {
		t.Errorf("Only changed a cmd item's command: %q %q, want %q %q", only.Args, only.Env, whole.Args, whole.Env)
	}
}

// A failed test whose name holds a newline, CR or tab cannot be a line of a tests
// file: the list and pytest adapters say so as a *NotALineError (an
// ErrCannotNarrow), with the file's test count.
func TestTestIDsNotALine(t *testing.T) {
	for name, ref := range map[string]string{"newline": "&#10;", "CR": "&#13;", "tab": "&#9;"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.xml")
			writeFiles(t, filepath.Dir(path), map[string]string{"t.xml": `<testsuite name="pytest" tests="3" failures="1">
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_a[x` + ref + `y]"><failure message="no"/></testcase>
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_b"/>
<testcase file="tests/test_x.py" classname="tests.test_x" name="test_c"/>
</testsuite>`})
			for _, a := range []Adapter{mustNew(t, spec(t, "s s.log list ci/s.sh")), mustNew(t, spec(t, "u u.log pytest tests"))} {
				ids, total, err := narrower(t, a).TestIDs(Item{Tag: "tests/test_x.py"}, path)
				var nl *NotALineError
				if !errors.As(err, &nl) || !errors.Is(err, ErrCannotNarrow) || total != 3 || ids != nil || !strings.HasPrefix(nl.Name, "test_a[x") {
					t.Errorf("%T: TestIDs = %q, %d, %v; want a *NotALineError of test_a[x…y], 3 tests", a, ids, total, err)
				}
			}
		})
	}
}
