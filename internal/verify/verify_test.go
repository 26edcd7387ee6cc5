package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/runenv"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		tag  string
		got  []string
		want Kind
	}{
		{"a", []string{"a"}, RoundTrip},
		{"a", nil, Nothing},
		{"a", []string{"a", "ab"}, Several},
		{"a", []string{"ab", "a"}, Several},
		{"a", []string{"a", "a"}, Several}, // two call lines share the tag
		{"a", []string{"b"}, Other},
		{"a", []string{"b", "c"}, Other},
		{"odd *tag", []string{"odd *tag"}, RoundTrip},
	}
	for _, tt := range tests {
		if got := Classify(tt.tag, tt.got); got != tt.want {
			t.Errorf("Classify(%q, %q) = %v, want %v", tt.tag, tt.got, got, tt.want)
		}
	}
}

func TestSuiteWrite(t *testing.T) {
	many := []string{"t"}
	for i := 0; i < 10; i++ {
		many = append(many, fmt.Sprintf("t%d", i))
	}
	tests := []struct {
		name string
		s    Suite
		want string
	}{
		{"opaque", Suite{Label: "core", Mode: config.Opaque, Skip: unchecked[config.Opaque]}, "core: opaque, skipped (one item that runs the whole script: no tags to round-trip)\n"},
		{"clean", Suite{Label: "torch", Mode: config.List, Tags: 123}, "torch: 123 tags round-tripped, 0 mismatches\n"},
		{"cmd", Suite{Label: "smoke", Mode: config.Cmd, Skip: "each line is its own command: no selection to check"}, "smoke: cmd, skipped (each line is its own command: no selection to check)\n"},
		{"adapter", Suite{Label: "core", Mode: config.CTest, Tags: 12, Mismatches: []Mismatch{
			{Tag: "Gone.Test", Kind: Nothing},
			{Tag: "OperatorTest/Cast", Kind: Other, Got: []string{"OperatorTest/Cast/0"}},
		}}, "core: 10 ctest items each select exactly themselves, 2 mismatches\n  Gone.Test: selected nothing\n  OperatorTest/Cast: selected another: OperatorTest/Cast/0\n"},
		{"listing failed", Suite{Label: "jax", Mode: config.List, Err: errors.New("ci.conf:2: suite \"jax\": its census listing (TE_CI_LIST_ITEMS=1) exited with 4\nModuleNotFoundError")},
			"jax: listing failed, nothing round-tripped:\n    | ci.conf:2: suite \"jax\": its census listing (TE_CI_LIST_ITEMS=1) exited with 4\n    | ModuleNotFoundError\n"},
		{"every kind", Suite{Label: "s", Mode: config.List, Tags: 9, Mismatches: []Mismatch{
			{Tag: "odd *tag", Kind: Nothing},
			{Tag: "a", Kind: Several, Got: []string{"a", "ab"}},
			{Tag: "d", Kind: Several, Got: []string{"d", "d"}},
			{Tag: "x", Kind: Other, Got: []string{"y\tz"}},
			{Tag: "t", Kind: Several, Got: many},
			{Tag: "f", Kind: Failed, Err: &expand.Error{Msg: "its census listing (TE_CI_LIST_ITEMS=1 TEST_FILTER=f) exited with 3; it must list its items and exit 0", Tail: "boom\n"}},
			{Tag: "g", Kind: Failed, Err: &expand.Error{Msg: "census listing cancelled"}},
		}}, `s: 2 tags round-tripped, 7 mismatches
  "odd *tag" (TEST_FILTER=odd[[:space:]][*]tag): selected nothing
  a (TEST_FILTER=a): selected several: a, ab
  d (TEST_FILTER=d): selected several: d, d
  x (TEST_FILTER=x): selected another: "y\tz"
  t (TEST_FILTER=t): selected several: t, t0, t1, t2, t3, t4, t5, t6, … and 3 more
  f (TEST_FILTER=f): re-entry failed: its census listing (TE_CI_LIST_ITEMS=1 TEST_FILTER=f) exited with 3; it must list its items and exit 0
    | boom
  g (TEST_FILTER=g): re-entry failed: census listing cancelled
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			tt.s.Write(&b, "TEST_FILTER")
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

// suite writes a config of one list suite whose script is body, and returns the
// options to verify it.
func suite(t *testing.T, body string) Options {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.sh"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "s.conf")
	if err := os.WriteFile(conf, []byte("s s.log list s.sh\nw w.log opaque s.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Options{
		Configs: config.Sources{Files: []string{conf}},
		Target:  runenv.Options{RepoRoot: dir, Env: []string{"PATH=" + os.Getenv("PATH")}},
	}
}

// lister is a script body listing tags a b c d with exact matching, each re-entry
// running hook (a shell command) first.
func lister(hook string) string {
	return `for t in a b c d; do
	if [ -n "$TEST_FILTER" ]; then
		[ "$t" = "$TEST_FILTER" ] || continue
		` + hook + `
	fi
	echo "TE_CI_ITEM $t"
done
`
}

// Every re-entry waits until all four have started: they finish only when Jobs lets
// them run at once.
func TestReentriesRunInParallel(t *testing.T) {
	o := suite(t, lister(`: >"$MARKS/$t"; i=0; while [ "$(ls "$MARKS" | wc -l)" -lt 4 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ $i -lt 200 ] || exit 5`))
	marks := t.TempDir()
	o.Target.Env = append(o.Target.Env, "MARKS="+marks)
	o.Jobs = 4
	var out bytes.Buffer
	o.Out = &out
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode() != exitcode.OK || out.String() != "s: 4 tags round-tripped, 0 mismatches\nw: opaque, skipped (one item that runs the whole script: no tags to round-trip)\n" {
		t.Errorf("exit %d, out:\n%s", res.ExitCode(), out.String())
	}
}

// A slow suite shows a progress line per interval, not per tag; a fast one none.
func TestProgress(t *testing.T) {
	o := suite(t, lister("sleep 0.3"))
	o.Jobs = 1
	// Read after Run: it waits for its progress printer to end.
	var prog bytes.Buffer
	o.Progress, o.ProgressEvery = &prog, 200*time.Millisecond
	res, err := Run(context.Background(), o)
	if err != nil || res.ExitCode() != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	lines := strings.Split(strings.TrimSpace(prog.String()), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "verify: s: ") || !strings.Contains(lines[0], " of 4 tags re-entered (") {
		t.Errorf("progress:\n%s", prog.String())
	}
	o = suite(t, lister(":"))
	o.Progress, o.ProgressEvery = &prog, time.Hour
	prog.Reset()
	if _, err := Run(context.Background(), o); err != nil || prog.String() != "" {
		t.Errorf("a fast suite printed progress %q (%v)", prog.String(), err)
	}
}

func TestListingProblems(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"listing fails", `echo "ImportError: torch" >&2; exit 4`, `its census listing (TE_CI_LIST_ITEMS=1) exited with 4`},
		// As a run says it (expand.NoItems), with what the listing printed instead.
		{"listing empty", `echo nothing`, `printed no "TE_CI_ITEM <tag>" line: check that the script honours the hook contract at level 99
    | nothing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), suite(t, tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode() != exitcode.Failed || res.Suites[0].Err == nil || !strings.Contains(res.Suites[0].Err.Error(), tt.want) {
				t.Errorf("exit %d, suite %+v", res.ExitCode(), res.Suites[0])
			}
		})
	}
}

// The census is the default; Queue lists what this host runs.
func TestCensusOrQueue(t *testing.T) {
	body := `echo "TE_CI_ITEM a"; [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && echo "TE_CI_ITEM gated"; exit 0`
	for _, queue := range []bool{false, true} {
		o := suite(t, body)
		o.Queue = queue
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		// No filter logic at all: every re-entry selects every tag, which only the
		// census (two tags) shows.
		tags, mismatches := 2, 2
		if queue {
			tags, mismatches = 1, 0
		}
		if s := res.Suites[0]; s.Tags != tags || len(s.Mismatches) != mismatches {
			t.Errorf("queue=%v: %d tags, mismatches %+v", queue, s.Tags, s.Mismatches)
		}
	}
}

func TestCancelled(t *testing.T) {
	o := suite(t, lister("sleep 5"))
	o.Target.Grace = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.ExitCode() != exitcode.Interrupted || len(res.Suites) != 0 {
		t.Errorf("cancelled: %+v", res)
	}
}

func TestConfigErrors(t *testing.T) {
	o := suite(t, "exit 0")
	o.Configs.Files = append(o.Configs.Files, filepath.Join(o.Target.RepoRoot, "missing.conf"))
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("missing config: %v", err)
	}
	var ce *config.Error
	o = suite(t, "exit 0")
	os.WriteFile(o.Configs.Files[0], []byte("s s.log list nope.sh\n"), 0o644)
	if _, err := Run(context.Background(), o); !errors.As(err, &ce) {
		t.Errorf("missing command: %v", err)
	}
	o = suite(t, "exit 0")
	o.Target.Level = "../1"
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), `--level "../1"`) {
		t.Errorf("bad level: %v", err)
	}
}

// The re-entries run as a run's listings do: each bounded by ListTimeout, and what
// one leaves running is killed and warned of, as the engine's executor does.
func TestReentriesAsARunLists(t *testing.T) {
	o := suite(t, lister(`case $t in b) sleep 30 & ;; c) exec sleep 30 ;; esac`))
	o.Target.ListTimeout, o.Target.Grace = 500*time.Millisecond, 100*time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// Less than the 30 s the hanging re-entry sleeps, at any speed: it was stopped.
	if d := time.Since(start); d >= 30*time.Second {
		t.Errorf("verify took %s: the hanging re-entry was not stopped at its list-timeout", d)
	}
	s := res.Suites[0]
	if res.ExitCode() != exitcode.Failed || len(s.Mismatches) != 1 || s.Mismatches[0].Tag != "c" || s.Mismatches[0].Kind != Failed ||
		!strings.Contains(s.Mismatches[0].Err.Error(), "did not end within 500ms (list-timeout)") {
		t.Errorf("exit %d, mismatches %+v", res.ExitCode(), s.Mismatches)
	}
	left := false
	for _, w := range res.Warnings {
		left = left || strings.Contains(w, `suite "s" census listing left a process`)
	}
	if !left {
		t.Errorf("no warning of the process re-entry b left running: %q", res.Warnings)
	}
}
