package rerun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

func TestStateCheck(t *testing.T) {
	list := logdir.FormatItems([]record.ItemID{{Label: "torch", Tag: "a"}})
	key := StateKey{Queue: "sgpu", Arch: "gfx942", Level: "99", Code: "c1"}
	state := func(change func(*State)) *State {
		s := &State{Version: StateVersion, StateKey: key, Failed: Digest(list)}
		change(s)
		return s
	}
	same := func(*State) {}
	for _, c := range []struct {
		name  string
		state *State
		want  StateKey
		trust Trust
		why   string
	}{
		{"its own key", state(same), key, Keyed, ""},
		{"no record", nil, key, Unkeyed, "no record of the code it was written for"},
		{"another format", state(func(s *State) { s.Version = 9 }), key, Unkeyed, "its record is of format 9, not 1"},
		{"the list was rewritten since (TE's script, a hand)", state(func(s *State) { s.Failed = Digest([]byte("x\n")) }), key,
			Unkeyed, "it changed since sgpu-queue wrote it"},
		{"another level", state(func(s *State) { s.Level = "1" }), key, Foreign,
			"it was written for queue sgpu, arch gfx942, level 1, code c1"},
		{"another queue", state(func(s *State) { s.Queue = "mgpu" }), key, Foreign,
			"it was written for queue mgpu, arch gfx942, level 99, code c1"},
		{"another commit", state(func(s *State) { s.Code = "0123456789abcdef0123" }), key, Foreign,
			"it was written for code 0123456789ab…, this run tests c1"},
		{"written outside git, run in it", state(func(s *State) { s.Code = "" }), key, Foreign,
			"it was written for no known code, this run tests c1"},
		{"a run that knows no code compares none", state(func(s *State) { s.Code = "c9" }),
			StateKey{Queue: "sgpu", Arch: "gfx942", Level: "99"}, Keyed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			trust, why := c.state.Check(c.want, list)
			if trust != c.trust || why != c.why {
				t.Errorf("Check = %v, %q; want %v, %q", trust, why, c.trust, c.why)
			}
		})
	}
}

func TestStateTestsKept(t *testing.T) {
	s := &State{Tests: map[string]string{"torch.a.txt": Digest([]byte("t.py::a\n"))}}
	for _, c := range []struct {
		name, file, data string
		state            *State
		want             bool
	}{
		{"the file the list's run wrote", "torch.a.txt", "t.py::a\n", s, true},
		{"rewritten by another level's run", "torch.a.txt", "t.py::b\n", s, false},
		{"no digest: the list's run wrote none (the item re-ran whole)", "torch.b.txt", "t.py::a\n", s, false},
		{"no record at all", "torch.a.txt", "t.py::a\n", nil, false},
	} {
		if got := c.state.TestsKept(c.file, []byte(c.data)); got != c.want {
			t.Errorf("%s: TestsKept = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	root := t.TempDir()
	path := Files{Root: root, StateKey: StateKey{Queue: "sgpu", Arch: "gfx942", Level: "3"}}.State()
	if path != filepath.Join(root, "ci-rerun/sgpu/state.gfx942.l3.json") {
		t.Errorf("state path %s", path)
	}
	if s, err := ReadState(path); s != nil || err != nil {
		t.Errorf("missing: %v, %v; want nothing", s, err)
	}
	want := &State{Version: StateVersion, StateKey: StateKey{"sgpu", "gfx942", "3", "abc"}, Failed: Digest(nil),
		Tests: map[string]string{"a.b.txt": "00"}, Items: []record.Carried{{ItemID: record.ItemID{Label: "a", Tag: "b"}, Result: record.Result{Outcome: outcome.OK, Seconds: 1.5, Width: 2}}}}
	if err := WriteFile(root, path, FormatState(want)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a mangled record: %v; want an error naming it", err)
	}
}

// TestLoad: a run trusts a list by a record of its own key, or, knowing no code,
// a list with no record; anything else is a notice, the list still read.
func TestLoad(t *testing.T) {
	k := record.ItemID{Label: "a", Tag: "b"}
	list := []byte("a\tb\n")
	key := StateKey{Queue: "sgpu", Arch: "gfx942", Level: "3", Code: "c1"}
	for _, c := range []struct {
		name, record string
		code         string // the loading run's
		want         *Prior
		notice       string
	}{
		{"keyed", string(FormatState(&State{Version: StateVersion, StateKey: key, Failed: Digest(list)})), "c1",
			&Prior{Failed: []record.ItemID{k}, State: &State{Version: StateVersion, StateKey: key, Failed: Digest(list)}}, ""},
		{"no record, no code", "", "", &Prior{Failed: []record.ItemID{k}, ByList: true}, ""},
		{"no record, a code", "", "c1", &Prior{Failed: []record.ItemID{k}}, "no record of the code it was written for"},
		{"another code", string(FormatState(&State{Version: StateVersion, StateKey: key, Failed: Digest(list)})), "c2",
			&Prior{Failed: []record.ItemID{k}}, "it was written for code c1, this run tests c2"},
		{"a mangled record", "{", "c1", &Prior{Failed: []record.ItemID{k}}, "its record ci-rerun/sgpu/state.gfx942.l3.json cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := key
			want.Code = c.code
			f := Files{Root: t.TempDir(), StateKey: want}
			if err := WriteFile(f.Root, f.Failed(), list); err != nil {
				t.Fatal(err)
			}
			if c.record != "" {
				if err := WriteFile(f.Root, f.State(), []byte(c.record)); err != nil {
					t.Fatal(err)
				}
			}
			p, notice, err := Load(f)
			if err != nil || !strings.HasPrefix(notice, c.notice) || c.notice == "" && notice != "" {
				t.Errorf("notice %q, %v; want %q", notice, err, c.notice)
			}
			if diff := cmp.Diff(c.want, p); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// TestNext: a run rewrites only what it ran (docs/reruns.md#what-a-run-rewrites).
func TestNext(t *testing.T) {
	ok := func(label, tag string) record.Carried {
		return record.Carried{ItemID: record.ItemID{Label: label, Tag: tag}, Result: record.Result{Outcome: outcome.OK, Seconds: 2, Width: 1, Tries: 1}}
	}
	bad := func(label, tag string) record.Carried {
		c := ok(label, tag)
		c.Outcome, c.RC, c.Failed = outcome.Failed, 1, true
		return c
	}
	// item is the verdict c was kept from.
	item := func(c record.Carried) verdict.Item {
		return verdict.Item{ItemID: c.ItemID, Result: c.Result, Finished: true}
	}
	items := func(cs ...record.Carried) []verdict.Item {
		var out []verdict.Item
		for _, c := range cs {
			out = append(out, item(c))
		}
		return out
	}
	prior := &State{
		Tests: map[string]string{"sa.a1.txt": "d-a1", "sb.b1.txt": "d-b1", "sc.c1.txt": "d-c1"},
		Items: []record.Carried{bad("sa", "a1"), ok("sa", "a2"), bad("sb", "b1"), ok("sb", "b2"), bad("sc", "c1")},
	}
	priorFailed := []record.ItemID{{Label: "sa", Tag: "a1"}, {Label: "sb", Tag: "b1"}, {Label: "sc", Tag: "c1"}}
	labels := func(ls ...string) func(record.ItemID) bool {
		return func(k record.ItemID) bool { return strings.Contains(" "+strings.Join(ls, " ")+" ", " "+k.Label+" ") }
	}
	for _, c := range []struct {
		name   string
		prior  *State
		failed []record.ItemID
		ran    Ran
		want   []record.ItemID
		tests  map[string]string
		items  []record.Carried
	}{
		{name: "--suites sa, fixed: sb's entry stays, with its digest and outcomes",
			prior: prior, failed: priorFailed,
			ran:   Ran{Owns: labels("sa", "gone"), Listed: labels("sa"), Items: items(ok("sa", "a1"))},
			want:  []record.ItemID{{Label: "sb", Tag: "b1"}, {Label: "sc", Tag: "c1"}},
			tests: map[string]string{"sb.b1.txt": "d-b1", "sc.c1.txt": "d-c1"},
			items: []record.Carried{ok("sa", "a1"), ok("sa", "a2"), bad("sb", "b1"), ok("sb", "b2"), bad("sc", "c1")}},
		{name: "a full run of everything: only its own failures",
			prior: prior, failed: priorFailed,
			ran:   Ran{Owns: labels("sa", "sb", "sc"), Listed: labels("sa", "sb"), Items: items(ok("sa", "a1"), ok("sa", "a2"), ok("sb", "b1"), bad("sb", "b2"))},
			want:  []record.ItemID{{Label: "sb", Tag: "b2"}},
			tests: map[string]string{},
			items: []record.Carried{ok("sa", "a1"), ok("sa", "a2"), ok("sb", "b1"), bad("sb", "b2")}},
		{name: "its failures first, in their order, then the others', each once",
			prior: prior, failed: append(priorFailed, record.ItemID{Label: "sb", Tag: "b1"}),
			ran:   Ran{Owns: labels("sa"), Listed: labels("sa"), Items: items(ok("sa", "a2"), bad("sa", "a3"), bad("sa", "a1"))},
			want:  []record.ItemID{{Label: "sa", Tag: "a3"}, {Label: "sa", Tag: "a1"}, {Label: "sb", Tag: "b1"}, {Label: "sc", Tag: "c1"}},
			tests: map[string]string{"sb.b1.txt": "d-b1", "sc.c1.txt": "d-c1"},
			items: []record.Carried{bad("sa", "a1"), ok("sa", "a2"), bad("sa", "a3"), bad("sb", "b1"), ok("sb", "b2"), bad("sc", "c1")}},
		{name: "no prior state (another key's): nothing carried",
			ran:  Ran{Owns: labels("sa"), Listed: labels("sa"), Items: items(bad("sa", "a1"))},
			want: []record.ItemID{{Label: "sa", Tag: "a1"}}, tests: map[string]string{}, items: []record.Carried{bad("sa", "a1")}},
		{name: "a list with no record (outside git): its others stay, without digests",
			failed: priorFailed,
			ran:    Ran{Owns: labels("sa"), Listed: labels("sa"), Items: items(ok("sa", "a1"))},
			want:   []record.ItemID{{Label: "sb", Tag: "b1"}, {Label: "sc", Tag: "c1"}}, tests: map[string]string{}, items: []record.Carried{ok("sa", "a1")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, st := Next(c.prior, c.failed, c.ran)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("failed list: %s", diff)
			}
			if diff := cmp.Diff(c.tests, st.Tests); diff != "" {
				t.Errorf("tests digests: %s", diff)
			}
			if diff := cmp.Diff(c.items, st.Items); diff != "" {
				t.Errorf("items: %s", diff)
			}
		})
	}
}

// TestCode: the code key is GITHUB_SHA when set; in a git checkout HEAD, plus a
// digest of the tracked files' uncommitted changes (not untracked files, not the
// state folders); outside one, none.
func TestCode(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	if code, err := Code(ctx, outside, "", nil); code != "" || err != nil {
		t.Errorf("outside a checkout: %q, %v; want no code", code, err)
	}
	if code, _ := Code(ctx, outside, " abc\n", nil); code != "abc" {
		t.Errorf("GITHUB_SHA: %q", code)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT MISSING: the code of a checkout is not tested")
	}
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"},
			args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(rel, text string) {
		t.Helper()
		if err := safefs.WriteFile(root, filepath.Join(root, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("ci/run.sh", "echo 1\n")
	write("ci/other.sh", "echo other\n")
	write("ci-rerun/sgpu/failed.x.l1.tsv", "")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "HEAD")
	exclude := []string{"ci-rerun", "test-results/logs"}
	code := func() string {
		t.Helper()
		c, err := Code(ctx, root, "", exclude)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := code(); c != head {
		t.Errorf("a clean checkout: %q, want HEAD %s", c, head)
	}
	sub := filepath.Join(root, "ci")
	if c, _ := Code(ctx, sub, "", exclude); c != head {
		t.Errorf("from a folder below the top: %q, want HEAD", c)
	}
	write("untracked.txt", "x")
	write("ci-rerun/sgpu/failed.x.l1.tsv", "torch\ta\n") // tracked, but the tool's own state
	if c := code(); c != head {
		t.Errorf("with an untracked file and a changed state file: %q, want HEAD", c)
	}
	write("ci/run.sh", "echo 2\n")
	changed := code()
	if !strings.HasPrefix(changed, head+"+") || len(changed) != len(head)+17 {
		t.Errorf("an uncommitted change: %q, want HEAD+<16 hex>", changed)
	}
	if again := code(); again != changed {
		t.Errorf("the same change twice: %q then %q", changed, again)
	}
	write("ci/run.sh", "echo 3\n")
	if c := code(); c == changed {
		t.Errorf("another change keeps the key %q", c)
	}
	if c, _ := Code(ctx, root, "sha-from-github", exclude); c != "sha-from-github" {
		t.Errorf("GITHUB_SHA in a checkout: %q", c)
	}
	// The key is of what the files hold, wherever git is asked from, however git is
	// configured, staged or not; any other change is another key.
	write("ci/run.sh", "echo 2\n")
	if c := code(); c != changed {
		t.Errorf("the first change again: %q, want its key %q", c, changed)
	}
	git("add", "ci/run.sh")
	if c := code(); c != changed {
		t.Errorf("the same change staged: %q, want %q", c, changed)
	}
	git("config", "diff.relative", "true")
	if c, err := Code(ctx, sub, "", []string{"../ci-rerun", "../test-results/logs"}); c != changed {
		t.Errorf("from a folder below the top, with diff.relative set: %q (%v), want %q", c, err, changed)
	}
	seen := map[string]string{"the first change": changed}
	other := func(what string, change func()) {
		t.Helper()
		change()
		c := code()
		if prev, dup := seen[c]; dup || !strings.HasPrefix(c, head+"+") {
			t.Errorf("%s: key %q, that of %q", what, c, prev)
		}
		seen[c] = what
	}
	other("made executable", func() { os.Chmod(filepath.Join(root, "ci/run.sh"), 0o755) })
	other("another file changed too", func() { write("ci/other.sh", "x\n") })
	other("that file deleted", func() { os.Remove(filepath.Join(root, "ci/other.sh")) })
	other("a file made a link", func() { os.Symlink("run.sh", filepath.Join(root, "ci/other.sh")) })
	other("the link aimed elsewhere", func() {
		os.Remove(filepath.Join(root, "ci/other.sh"))
		os.Symlink("nowhere", filepath.Join(root, "ci/other.sh"))
	})
}
