package rerun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

func TestTests(t *testing.T) {
	done := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	for _, c := range []struct {
		name  string
		ev    Evidence
		tests []string
		why   string
	}{
		{name: "one of ten failed", ev: Evidence{HasFailed: true, Failed: []string{"t.py::b"}, Total: 10},
			tests: []string{"t.py::b"}},
		{name: "exactly half", ev: Evidence{HasFailed: true, Failed: []string{"t.py::a", "t.py::b"}, Total: 4},
			tests: []string{"t.py::a", "t.py::b"}},
		{name: "more than half", ev: Evidence{HasFailed: true, Failed: []string{"a", "b", "c"}, Total: 4},
			why: "3 of its 4 tests is more than half of it"},
		{name: "a narrowed attempt keeps narrowing", ev: Evidence{HasFailed: true, Failed: []string{"a"}, Total: 2, Narrowed: true},
			tests: []string{"a"}},
		{name: "empty .failed: failed outside its tests", ev: Evidence{HasFailed: true, Total: 10},
			why: "nothing in it named a failing test"},
		{name: "no count to size against", ev: Evidence{HasFailed: true, Failed: []string{"a"}},
			why: "its report does not say how many tests it has"},
		{name: "no sidecar: the JUnit's failed cases", ev: Evidence{JUnitFailed: []string{"x", "y", "x"}, Total: 9},
			tests: []string{"x", "y"}},
		{name: "an empty .failed wins over the JUnit", ev: Evidence{HasFailed: true, JUnitFailed: []string{"x"}, Total: 9},
			why: "nothing in it named a failing test"},
		{name: "died: failures and the unrun tail", ev: Evidence{HasFailed: true, Failed: []string{"b"}, Partial: true,
			Collected: []string{"a", "b", "c", "d", "e", "f"}, Done: done("a", "b", "c", "d")},
			tests: []string{"b", "e", "f"}},
		{name: "died early: too much of it", ev: Evidence{Partial: true, Collected: []string{"a", "b", "c"}, Done: done("a")},
			why: "2 of its 3 tests is more than half of it"},
		{name: "died before collecting", ev: Evidence{Partial: true, HasFailed: true, Failed: []string{"a"}, Total: 100},
			why: "it died before recording what it had collected"},
		{name: "a JUnit failure that cannot be a line: the adapter's reason", ev: Evidence{Unnamed: "its failed test \"a\\nb\" …", Total: 9},
			why: "its failed test \"a\\nb\" …"},
		{name: "a .failed sidecar names them all the same", ev: Evidence{HasFailed: true, Failed: []string{"t.py::a"}, Unnamed: "…", Total: 9},
			tests: []string{"t.py::a"}},
		{name: "a tab in a .failed id", ev: Evidence{HasFailed: true, Failed: []string{"t.py::a[x\ty]"}, Total: 9},
			why: `its failed test "t.py::a[x\ty]" holds a newline, CR or tab, so it cannot be a line of a tests file`},
		{name: "a newline in a collected id of a dead process", ev: Evidence{Partial: true, Collected: []string{"a", "b\nc", "d", "e"},
			Done: done("a", "d", "e")},
			why: `its failed test "b\nc" holds a newline, CR or tab, so it cannot be a line of a tests file`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tests, why := Tests(c.ev)
			if diff := cmp.Diff(c.tests, tests); diff != "" || why != c.why {
				t.Errorf("why %q, want %q; tests: %s", why, c.why, diff)
			}
		})
	}
}

func TestReadSidecars(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "torch", "test_x.xml")
	if err := os.MkdirAll(filepath.Dir(junit), 0o755); err != nil {
		t.Fatal(err)
	}
	ev, err := ReadSidecars(junit)
	if err != nil || ev.HasFailed || ev.Partial || ev.Narrowed {
		t.Fatalf("no sidecars: %+v, %v", ev, err)
	}
	// As TE's plugin leaves them after a thread-method timeout: the kept failures,
	// a sidecar with its last line half written, the narrowed mark.
	write := func(suffix, text string) {
		if err := os.WriteFile(junit+suffix, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(FailedSuffix, "tests/test_x.py::test_a[1]\n\ntests/test_x.py::test_a[1]\n")
	write(PartialSuffix, `{"e": "collected", "nodeids": ["tests/test_x.py::test_a[1]", "tests/test_x.py::test_b", "tests/test_x.py::test_c"]}
{"e": "start", "nodeid": "tests/test_x.py::test_a[1]"}
{"e": "report", "nodeid": "tests/test_x.py::test_a[1]", "when": "setup", "outcome": "passed"}
{"e": "report", "nodeid": "tests/test_x.py::test_a[1]", "when": "call", "outcome": "failed", "msg": "assert 1 == 2"}
{"e": "start", "nodeid": "tests/test_x.py::test_b"}
{"e": "report", "nodeid": "tests/test_x.py::test_b", "when": "set`)
	write(NarrowedSuffix, "3\n")
	ev, err = ReadSidecars(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.HasFailed || !ev.Partial || !ev.Narrowed || len(ev.Collected) != 3 || !ev.Done["tests/test_x.py::test_a[1]"] || ev.Done["tests/test_x.py::test_b"] {
		t.Fatalf("sidecars read as %+v", ev)
	}
	tests, why := Tests(ev)
	want := []string{"tests/test_x.py::test_a[1]", "tests/test_x.py::test_b", "tests/test_x.py::test_c"}
	if diff := cmp.Diff(want, tests); diff != "" || why != "" {
		t.Errorf("why %q; %s", why, diff)
	}
	// A sidecar that is a directory cannot be read: an error, never a narrowing.
	other := filepath.Join(dir, "torch", "test_y.xml")
	if err := os.Mkdir(other+FailedSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSidecars(other); err == nil || !strings.Contains(err.Error(), "test_y.xml.failed") {
		t.Errorf("unreadable .failed: err %v", err)
	}
}

func TestProgressSetupEnds(t *testing.T) {
	p := ParseProgress([]byte(`{"e":"collected","nodeids":["a","","b","c"]}
{"e":"report","nodeid":"a","when":"setup","outcome":"skipped"}
{"e":"report","nodeid":"b","when":"setup","outcome":"failed"}
{"e":"report","nodeid":"c","when":"setup","outcome":"passed"}
not json
`))
	if diff := cmp.Diff([]string{"a", "b", "c"}, p.Collected); diff != "" {
		t.Error(diff)
	}
	if done := p.Done(); !done["a"] || !done["b"] || done["c"] {
		t.Errorf("done %v: want a (setup skipped) and b (setup failed), not c (still in flight)", done)
	}
}

func FuzzReadFailed(f *testing.F) {
	f.Add("torch\ttest_a\ncore\t\n")
	f.Add("\t\n\\t\\n\r\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "failed.tsv")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		keys, _, err := ReadFailed(p)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error on more than one line: %q", err)
			}
			return
		}
		// What was read writes back to a list that reads the same.
		if err := os.WriteFile(p, logdir.FormatItems(keys), 0o644); err != nil {
			t.Fatal(err)
		}
		again, _, err := ReadFailed(p)
		if err != nil || !cmp.Equal(keys, again) {
			t.Errorf("round trip: %v → %v (%v)", keys, again, err)
		}
	})
}

func FuzzParseProgress(f *testing.F) {
	f.Add([]byte(`{"e":"collected","nodeids":["a","b"]}` + "\n" + `{"e":"report","nodeid":"a","when":"call","outcome":"failed"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := ParseProgress(data)
		tests, why := Tests(Evidence{Partial: true, Collected: p.Collected, Done: p.Done(), HasFailed: true})
		if (tests == nil) == (why == "") {
			t.Errorf("tests %v with why %q: exactly one of them must be given", tests, why)
		}
		for _, id := range tests {
			if id == "" {
				t.Error("an empty test id")
			}
		}
	})
}
