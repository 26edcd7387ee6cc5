package adapter

import (
	"errors"
	"fmt"
	"github.com/rocm/sgpu-queue/internal/config"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/golden"
)

func TestParseCommands(t *testing.T) {
	in := "\xef\xbb\xbf# smoke tests, one per line\n" +
		"\n" +
		"hello   echo hello world\r\n" +
		"   # an indented comment\n" +
		"quoted\tprintf '%s|' \"a b\" 'c  d'  \n" +
		"mxfp4..ck+x=1  sh -c 'exit 0'\n" +
		"  indented-tag   true\n"
	got, err := ParseCommands([]byte(in), "ci/smoke.cmds")
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Tag: "hello", Args: []string{"echo hello world"}},
		{Tag: "quoted", Args: []string{`printf '%s|' "a b" 'c  d'`}},
		{Tag: "mxfp4..ck+x=1", Args: []string{"sh -c 'exit 0'"}},
		{Tag: "indented-tag", Args: []string{"true"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

// Every bad line is reported, each as file:line with the fix; the messages are
// pinned in testdata/cmd-errors.golden (-update rewrites it).
func TestParseCommandsErrors(t *testing.T) {
	in := "ok echo fine\n" +
		"lonely\n" +
		"ok echo again\n" +
		"bell echo \x07\n" +
		"# fine\n" +
		"long " + strings.Repeat("x", maxCmdLine) + "\n" +
		"never reached\n"
	items, err := ParseCommands([]byte(in), "ci/smoke.cmds")
	if err == nil {
		t.Fatal("no error")
	}
	if len(items) != 1 || items[0].Tag != "ok" {
		t.Errorf("items before the errors = %+v, want the one good line", items)
	}
	golden.Check(t, "testdata/cmd-errors.golden", []byte(err.Error()+"\n"), *update)
}

func FuzzParseCommands(f *testing.F) {
	f.Add([]byte("a echo a\n# c\n\nb  sh -c 'x y'\r\n"))
	f.Add([]byte("a\na b\na c\n\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := ParseCommands(data, "f")
		seen := map[string]bool{}
		for _, it := range items {
			if it.Tag == "" || strings.ContainsAny(it.Tag, " \t\r\n") || seen[it.Tag] {
				t.Fatalf("tag %q (empty, spaced or repeated)", it.Tag)
			}
			seen[it.Tag] = true
			if len(it.Args) != 1 || it.Args[0] == "" || strings.ContainsAny(it.Args[0], "\r\n") || strings.TrimSpace(it.Args[0]) != it.Args[0] {
				t.Fatalf("item %q command %q", it.Tag, it.Args)
			}
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f:") {
					t.Fatalf("error line %q does not name the file and line", line)
				}
			}
		}
	})
}

// A command file listed and run for real: exit codes, the repo root as working
// directory, the suite's env=, JUnit written where SGPU_JUNIT_XML says.
func TestCmdRunsItems(t *testing.T) {
	repo := t.TempDir()
	file := "ci/smoke cmds.txt" // a path with a space
	if err := os.MkdirAll(filepath.Join(repo, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := "ok      test \"$(pwd)\" = \"$REPO\" && test \"$SUITE_ENV\" = 'a b'\n" +
		"fails   echo failing >&2; exit 3\n" +
		"junit   printf '<testsuite name=\"s\" tests=\"1\"><testcase name=\"c\"/></testsuite>' > \"$SGPU_JUNIT_XML\"\n" +
		"nojunit test -z \"${SGPU_JUNIT_XML+set}\"\n"
	if err := os.WriteFile(filepath.Join(repo, file), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	a := mustNew(t, spec(t, `s s.log "cmd,env=SUITE_ENV=a b" 'ci/smoke cmds.txt'`))
	l, err := list(t, a, repo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok", "fails", "junit", "nojunit"}, tags(l)); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	junit := filepath.Join(t.TempDir(), "j.xml")
	for _, c := range []struct {
		item  int
		junit string
		rc    int
	}{{0, "", 0}, {1, "", 3}, {2, junit, 0}, {3, "", 0}} {
		r := runItem(t, a, l.Items[c.item], repo, c.junit, "REPO="+repo, JUnitVar+"=/outer/value")
		if r.rc != c.rc {
			t.Errorf("item %s: rc %d, want %d\n%s", l.Items[c.item].Tag, r.rc, c.rc, r.out)
		}
		if c.junit != "" && fmt.Sprint(r.statuses()) != "map[c:passed]" {
			t.Errorf("item %s: JUnit %v", l.Items[c.item].Tag, r.statuses())
		}
	}
}

func TestCmdListingFails(t *testing.T) {
	repo := t.TempDir()
	_, err := list(t, mustNew(t, spec(t, "s s.log cmd ci/none.txt")), repo)
	if err == nil || !strings.Contains(err.Error(), `test.conf:1: suite "s": cannot read the command file ci/none.txt (cat exited with 1`) {
		t.Errorf("missing file: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(repo, "empty.txt"), []byte("# nothing yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := list(t, mustNew(t, spec(t, "s s.log cmd empty.txt")), repo); !errors.Is(err, ErrNoItems) {
		t.Errorf("no lines: err = %v, want ErrNoItems", err)
	}
	if err := os.WriteFile(filepath.Join(repo, "bad.txt"), []byte("a true\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := list(t, mustNew(t, spec(t, "s s.log cmd bad.txt")), repo); err == nil || !strings.Contains(err.Error(), `bad.txt:2: tag "b" has no command`) {
		t.Errorf("bad line: err = %v", err)
	}
	for _, args := range [][]string{nil, {"a.txt", "b.txt"}} {
		if _, err := New(config.Suite{Label: "s", File: "c.conf", Line: 4, Mode: config.Cmd, Args: args}); err == nil || !strings.HasPrefix(err.Error(), `c.conf:4: suite "s": want "<label> <logfile> cmd <file>"`) {
			t.Errorf("args %q: err = %v", args, err)
		}
	}
}
