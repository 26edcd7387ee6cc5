package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

// Tags with white space, glob characters, backslashes and bash's extended-pattern
// syntax, beside siblings an unescaped filter would also select, matched the TE way
// (split, then case) and the bash way ([[ == ]]): every one round-trips.
func TestVerifyGlobTags(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "verify/glob")
	r := sgpu(t, dir, nil, "verify", "glob.conf")
	want := "odd: 14 tags round-tripped, 0 mismatches\nbashy: 11 tags round-tripped, 0 mismatches\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// Filter logic that breaks the round trip in every way verify names: substring
// matches, a duplicate tag, a tag gated off at re-entry, a tag mangled by echo when
// listed, a failing re-entry, white-space twins. The output is pinned in
// testdata/verify/bad/verify.golden; the opaque suite is not run.
func TestVerifyCatchesBrokenFilters(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "verify/bad")
	r := sgpu(t, dir, nil, "verify", "-j", "3", "bad.conf")
	if r.code != 1 {
		t.Errorf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	golden.Check(t, filepath.Join("..", "testdata", "verify", "bad", "verify.golden"), []byte(r.stdout), *update)
	if strings.Contains(r.stderr, "never run by verify") {
		t.Error("verify ran the opaque suite")
	}
	if !strings.Contains(r.stderr, `warning: suite "sub" listing: line 6: duplicate tag "dup"`) {
		t.Errorf("no warning of the duplicate tag:\n%s", r.stderr)
	}
}

// A faithful fixture of TransformerEngine's filter logic (ci/_utils.sh, pytorch.sh,
// jax.sh: tags from path and variant, the split-then-case filter, fatal duplicate
// tags, level and capability gates), and the demo: both round-trip, census and
// queue.
func TestVerifyTEAndDemo(t *testing.T) {
	t.Parallel()
	te := fixture(t, "verify/te")
	tests := []struct {
		args []string
		want string
	}{
		// The census at level 3 is every tag there is; the queue at level 1 what this
		// host runs (no MXFP8 here).
		{[]string{"--level", "3", "-j", "4"}, "torch: 34 tags round-tripped, 0 mismatches\njax: 8 tags round-tripped, 0 mismatches\n"},
		{[]string{"--level", "1", "--queue"}, "torch: 22 tags round-tripped, 0 mismatches\njax: 8 tags round-tripped, 0 mismatches\n"},
	}
	for _, tt := range tests {
		r := sgpu(t, te, nil, append(append([]string{"verify"}, tt.args...), "te.conf")...)
		want := tt.want + "core: opaque, skipped (one item that runs the whole script: no tags to round-trip)\n"
		if r.code != 0 || r.stdout != want {
			t.Errorf("verify %v: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", tt.args, r.code, r.stdout, want, r.stderr)
		}
	}
	demo := fixture(t, "demo")
	r := sgpu(t, demo, nil, "verify", "ci/sgpu.conf")
	if r.code != 0 || !strings.Contains(r.stdout, "torch: 10 tags round-tripped, 0 mismatches\njax: 4 tags round-tripped, 0 mismatches\n") {
		t.Errorf("demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "verify/bad")
	os.WriteFile(filepath.Join(dir, "broken.conf"), []byte("sub sub.log list ci/sub.sh\nx x.log parallel ci/ok.sh\ngone gone.log list ci/nope.sh\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"verify"}, "sgpu-queue verify: no CONFIG given"},
		{"missing config", []string{"verify", "nope.conf"}, "nope.conf"},
		{"bad config lines", []string{"verify", "broken.conf"}, `sgpu-queue: broken.conf:2: suite "x": unknown mode "parallel"`},
		{"missing command", []string{"verify", "broken.conf"}, `sgpu-queue: broken.conf:3: command "ci/nope.sh" of suite "gone" not found`},
		{"bad level", []string{"verify", "--level", "../x", "bad.conf"}, `--level "../x"`},
		{"bad jobs", []string{"verify", "--jobs", "-2", "bad.conf"}, "--jobs -2"},
		{"bad hook var", []string{"verify", "--hook-var", "bogus=X", "bad.conf"}, "--hook-var"},
		{"a run-only flag", []string{"verify", "--retries", "2", "bad.conf"}, "flag provided but not defined: -retries"},
		{"bad repo root", []string{"verify", "--repo-root", "nowhere", "bad.conf"}, "--repo-root nowhere"},
	}
	for _, tt := range tests {
		r := sgpu(t, dir, nil, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tt.name, r.code, r.stderr, tt.want)
		}
		if r.stdout != "" && tt.name != "no config" {
			t.Errorf("%s: a rejected verify printed %q", tt.name, r.stdout)
		}
	}
	r := sgpu(t, dir, nil, "verify", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: sgpu-queue verify") {
		t.Errorf("--help: exit %d, stdout %q", r.code, r.stdout)
	}
}

// A run of the glob fixture: every item runs exactly its own call line, once.
func TestGlobTagsRunExactly(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "verify/glob")
	trace := filepath.Join(dir, "trace.txt")
	r := sgpu(t, dir, []string{"SGPU_TRACE=" + trace}, "run", "--gpus", "0,1", "glob.conf")
	if r.code != 0 || !strings.Contains(r.stdout, "all 2 suites passed") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// What the suites list is what must have run, each once.
	listed := map[string][]string{}
	for _, suite := range []string{"odd", "bashy"} {
		for _, l := range lines(readFile(t, filepath.Join(dir, "ci", suite+".sh"))) {
			if tag, ok := strings.CutPrefix(l, "call '"); ok {
				listed[suite] = append(listed[suite], strings.TrimSuffix(tag, "'"))
			}
		}
	}
	if len(listed["odd"]) != 14 || len(listed["bashy"]) != 11 {
		t.Fatalf("fixture tags %q", listed)
	}
	ran := map[string]int{}
	for _, l := range lines(readFile(t, trace)) {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 || (f[1] != "0" && f[1] != "1") {
			t.Fatalf("bad trace line %q", l)
		}
		ran[f[0]+"/"+f[2]]++
	}
	var want []string
	layout := logdir.Layout{Root: filepath.Join(dir, "test-results", "logs")}
	for suite, tags := range listed {
		for _, tag := range tags {
			want = append(want, suite+"/"+tag)
			if n := ran[suite+"/"+tag]; n != 1 {
				t.Errorf("%s/%q ran %d times", suite, tag, n)
			}
			var calls []string
			for _, l := range lines(readFile(t, layout.ItemLog(suite, tag))) {
				if strings.HasPrefix(l, "call ") {
					calls = append(calls, l)
				}
			}
			if len(calls) != 1 || calls[0] != "call "+tag {
				t.Errorf("the log of %s/%q shows the call lines %q", suite, tag, calls)
			}
		}
	}
	if len(ran) != len(want) {
		sort.Strings(want)
		t.Errorf("ran %v, want %v", sortedKeys(ran), want)
	}
}

// Inside the test container: verify lists and re-enters there, with the container's
// environment plus --pass-env.
func TestVerifyInContainer(t *testing.T) {
	t.Parallel()
	dir, name, _ := containerFixture(t)
	env := []string{"WITH_SLEEPER=1"}
	r := sgpu(t, dir, env, "verify", "--container", name, "box.conf")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "box: 5 tags round-tripped, 0 mismatches\nwhole: opaque") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = sgpu(t, dir, env, "verify", "--container", name, "--pass-env", "WITH_*", "box.conf")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "box: 6 tags round-tripped, 0 mismatches\n") {
		t.Errorf("with --pass-env: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := sgpu(t, dir, nil, "verify", "--container", "no-such-container-here", "box.conf"); r.code != 2 || !strings.Contains(r.stderr, "--container no-such-container-here") {
		t.Errorf("missing container: exit %d\n%s", r.code, r.stderr)
	}
}
