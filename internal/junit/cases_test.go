package junit

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/adaptertest"
)

// rerunTree is a pytest tree with the names a re-run must get right: parameters
// with spaces, dots, brackets, "::" and "/", classes, nested classes, a folder with
// a space, a folder with a dot, a method inherited from a base class in another
// file, a fixture error and a file that does not import.
var rerunTree = map[string]string{
	"tests/test_x.py": `import pytest
from base_cases import Base


def test_plain():
    pass


@pytest.mark.parametrize("w", ["a b", "x.y", "[br]", "a::b", "p/q", "ok"])
def test_param(w):
    assert w == "ok"


class TestA:
    def test_m(self):
        assert False

    class TestB:
        @pytest.mark.parametrize("n", [1.5, "s p", 2])
        def test_n(self, n):
            assert n == 2


class TestInh(Base):
    pass


@pytest.fixture
def broken():
    raise RuntimeError("fixture fails")


def test_err(broken):
    pass


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass
`,
	"tests/base_cases.py": `class Base:
    def test_inherited(self):
        assert False
`,
	"tests/dir with space/test_s p.py": "def test_s():\n    assert False\n",
	"tests/sub.dir/test_d.py":          "def test_d():\n    assert False\n\ndef test_d_ok():\n    pass\n",
	"tests/test_broken.py":             "import no_such_module_here\n",
}

// pytestJUnit runs real pytest on the tree in dir (its rootdir) with the JUnit family
// given, and returns the JUnit file and the node ids pytest itself collected.
func pytestJUnit(t *testing.T, dir, family string) (junit string, collected []string) {
	t.Helper()
	py := adaptertest.Python(t)
	env := append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "LC_ALL=C.UTF-8")
	junit = filepath.Join(t.TempDir(), family+".xml")
	run := exec.Command(py, "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors",
		"-o", "junit_family="+family, "--junitxml="+junit, "tests")
	run.Dir, run.Env = dir, env
	if out, err := run.CombinedOutput(); err == nil {
		t.Fatalf("pytest passed a tree with failures:\n%s", out)
	}
	co := exec.Command(py, "-m", "pytest", "-p", "no:cacheprovider", "--continue-on-collection-errors", "--collect-only", "-q", "tests")
	co.Dir, co.Env = dir, env
	out, _ := co.Output() // exit 1: the file that does not import
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "::") {
			collected = append(collected, l)
		}
	}
	return junit, collected
}

// Real pytest's JUnit in both families: the failed and errored cases and the count
// come back, and in xunit1 each case written in its own file gives the node id
// pytest itself collected; the others give none, so their item re-runs whole.
func TestPytestNodeIDsFromRealPytest(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, rerunTree, time.Now())
	failed := []struct{ classname, name, id string }{
		{"tests.test_x", "test_param[a b]", "tests/test_x.py::test_param[a b]"},
		{"tests.test_x", "test_param[x.y]", "tests/test_x.py::test_param[x.y]"},
		{"tests.test_x", "test_param[[br]]", "tests/test_x.py::test_param[[br]]"},
		{"tests.test_x", "test_param[a::b]", "tests/test_x.py::test_param[a::b]"},
		{"tests.test_x", "test_param[p/q]", "tests/test_x.py::test_param[p/q]"},
		{"tests.test_x.TestA", "test_m", "tests/test_x.py::TestA::test_m"},
		{"tests.test_x.TestA.TestB", "test_n[1.5]", "tests/test_x.py::TestA::TestB::test_n[1.5]"},
		{"tests.test_x.TestA.TestB", "test_n[s p]", "tests/test_x.py::TestA::TestB::test_n[s p]"},
		{"tests.test_x.TestInh", "test_inherited", ""}, // file="tests/base_cases.py"
		{"tests.test_x", "test_err", "tests/test_x.py::test_err"},
		{"tests.dir with space.test_s p", "test_s", "tests/dir with space/test_s p.py::test_s"},
		{"tests.sub.dir.test_d", "test_d", "tests/sub.dir/test_d.py::test_d"},
		{"", "tests.test_broken", ""}, // the collection error
	}
	const total = 18 // 17 collected and the collection error
	for _, family := range []string{"xunit1", "xunit2"} {
		t.Run(family, func(t *testing.T) {
			junit, collected := pytestJUnit(t, dir, family)
			if len(collected) != total-1 {
				t.Fatalf("pytest collected %d tests, the table expects %d: %q", len(collected), total-1, collected)
			}
			got, n, err := FailedCases(junit)
			if err != nil {
				t.Fatal(err)
			}
			if n != total {
				t.Errorf("total %d, want %d", n, total)
			}
			type row struct{ Classname, Name, ID string }
			var gotRows, wantRows []row
			for _, c := range got {
				id, ok := PytestNodeID(c)
				if ok != (id != "") {
					t.Errorf("%+v: id %q with ok %v", c, id, ok)
				}
				if ok && !slices.Contains(collected, id) {
					t.Errorf("%+v: id %q is not one pytest collected", c, id)
				}
				gotRows = append(gotRows, row{c.Classname, c.Name, id})
			}
			for _, f := range failed {
				if family == "xunit2" {
					f.id = "" // no file attribute: no id, the item re-runs whole
				}
				wantRows = append(wantRows, row{f.classname, f.name, f.id})
			}
			less := func(a, b row) int { return strings.Compare(a.Classname+"\x00"+a.Name, b.Classname+"\x00"+b.Name) }
			slices.SortFunc(gotRows, less)
			slices.SortFunc(wantRows, less)
			if d := cmp.Diff(wantRows, gotRows); d != "" {
				t.Errorf("failed cases and their node ids (-want +got):\n%s", d)
			}
		})
	}
}

func TestPytestNodeID(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Case
		want string
	}{
		{"module function", Case{File: "tests/test_x.py", Classname: "tests.test_x", Name: "test_a"}, "tests/test_x.py::test_a"},
		{"class", Case{File: "tests/test_x.py", Classname: "tests.test_x.TestA", Name: "test_a"}, "tests/test_x.py::TestA::test_a"},
		{"nested classes", Case{File: "t.py", Classname: "t.TestA.TestB", Name: "x[1.5-a b]"}, "t.py::TestA::TestB::x[1.5-a b]"},
		{"parameter with :: and dots", Case{File: "t.py", Classname: "t", Name: "x[a::b.c]"}, "t.py::x[a::b.c]"},
		{"dotted folder", Case{File: "a.b/t.py", Classname: "a.b.t.C", Name: "x"}, "a.b/t.py::C::x"},
		{"doctest text file", Case{File: "docs/x.txt", Classname: "docs.x.txt", Name: "x.txt"}, "docs/x.txt::x.txt"},
		{"xunit2: no file", Case{Classname: "tests.test_x", Name: "test_a"}, ""},
		{"inherited from another file", Case{File: "tests/base.py", Classname: "tests.test_x.TestA", Name: "test_a"}, ""},
		{"collection error", Case{File: "tests/test_x.py", Name: "tests.test_x"}, ""},
		{"--junit-prefix", Case{File: "tests/test_x.py", Classname: "pre.tests.test_x", Name: "test_a"}, ""},
		{"module name only a prefix", Case{File: "tests/test_x.py", Classname: "tests.test_xy", Name: "test_a"}, ""},
		{"trailing dot", Case{File: "t.py", Classname: "t.C.", Name: "x"}, ""},
		{"empty class", Case{File: "t.py", Classname: "t..C", Name: "x"}, ""},
		{"no name", Case{File: "t.py", Classname: "t"}, ""},
		{"newline in name", Case{File: "t.py", Classname: "t", Name: "a\nb"}, ""},
		{"colon in a class", Case{File: "t.py", Classname: "t.A:B", Name: "x"}, ""},
		{"line break in the classname", Case{File: "t", Classname: "t.\r", Name: "0"}, ""},
		{":: in file", Case{File: "t.py::x", Classname: "t.py::x", Name: "y"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := PytestNodeID(c.in)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("PytestNodeID(%+v) = %q, %v; want %q", c.in, got, ok, c.want)
			}
		})
	}
}

// ReadCases on files of other writers: CTest's bare <testsuite> with a test it could
// not run (a skip that failed the run, told by its message), results by priority,
// and what is not JUnit.
func TestReadCases(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, xml string
		want      []Case
		err       string
	}{
		{name: "ctest", xml: `<?xml version="1.0"?><testsuite name="x" tests="3">
<testcase name="a b[1]" classname="a b[1]" status="fail"><failure message=""/></testcase>
<testcase name="Missing" classname="Missing" status="notrun"><skipped message="Unable to find executable"/></testcase>
<testcase name="ok" classname="ok" status="run"/></testsuite>`,
			want: []Case{{Classname: "a b[1]", Name: "a b[1]", Result: CaseFailed},
				{Classname: "Missing", Name: "Missing", Result: CaseSkipped, Message: "Unable to find executable"},
				{Classname: "ok", Name: "ok"}}},
		{name: "error over failure, line kept", xml: `<testsuites><testsuite><testcase name="x" file="t.py" line="7">` +
			`<failure message="f"/><error message="e"/></testcase><testcase name="y" line="bad"/></testsuite></testsuites>`,
			want: []Case{{File: "t.py", Line: 7, Name: "x", Result: CaseErrored, Message: "e"}, {Name: "y"}}},
		{name: "sgpu-queue's types decide", xml: `<testsuite><testcase name="h"><failure type="sgpu-queue.unfinished"/></testcase>` +
			`<testcase name="m"><failure type="sgpu-queue.malformed-junit"/></testcase></testsuite>`,
			want: []Case{{Name: "h", Result: CaseUnfinished, Type: UnfinishedType}, {Name: "m", Result: CaseErrored, Type: MalformedType}}},
		{name: "not JUnit", xml: `<html/>`, err: "not JUnit"},
		{name: "empty", xml: ``, err: "empty file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".xml")
			if err := os.WriteFile(p, []byte(c.xml), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadCases(p)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p) {
					t.Fatalf("err %v, want one naming %s and %q", err, p, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("cases (-want +got):\n%s", d)
			}
		})
	}
	if _, _, err := FailedCases(filepath.Join(dir, "missing.xml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want a not-exist error", err)
	}
}

// A node id is only ever the case's file, "::", classes and its name: never a line
// break, never another file.
func FuzzPytestNodeID(f *testing.F) {
	f.Add("tests/test_x.py", "tests.test_x.TestA.TestB", "test_n[1.5-a b::c]")
	f.Add("a.b/t.py", "a.b.t", "x")
	f.Add("t.py", "t..C.", "")
	f.Fuzz(func(t *testing.T, file, classname, name string) {
		id, ok := PytestNodeID(Case{File: file, Classname: classname, Name: name})
		if !ok {
			if id != "" {
				t.Fatalf("no id but %q", id)
			}
			return
		}
		if !strings.HasPrefix(id, file+"::") || !strings.HasSuffix(id, "::"+name) || strings.ContainsAny(id, "\n\r") ||
			strings.Contains(strings.TrimSuffix(strings.TrimPrefix(id, file+"::"), name), ":::") {
			t.Fatalf("PytestNodeID(%q, %q, %q) = %q", file, classname, name, id)
		}
	})
}

// The cases sgpu-queue adds about an item are no test; a malformed file's and an unfinished test's are.
func TestAboutItem(t *testing.T) {
	for typ, want := range map[string]bool{
		"":                    false,
		"RuntimeError":        false,
		UnfinishedType:        false,
		MalformedType:         false,
		"sgpu-queue.cut-off":  true,
		"sgpu-queue.no-junit": true,
	} {
		if got := (Case{Result: CaseErrored, Type: typ}).AboutItem(); got != want {
			t.Errorf("AboutItem of type %q = %v, want %v", typ, got, want)
		}
	}
}
