package action

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// actionYML returns the input and output names action.yml declares.
func actionYML(t *testing.T) (inputs, outputs map[string]bool) {
	t.Helper()
	return yamlNames(t, filepath.Join("..", "..", "action.yml"))
}

// yamlNames returns the input and output names an action metadata file declares.
func yamlNames(t *testing.T, path string) (inputs, outputs map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inputs, outputs = map[string]bool{}, map[string]bool{}
	name := regexp.MustCompile(`^  ([a-z0-9-]+):$`)
	var section map[string]bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "inputs:":
			section = inputs
		case l == "outputs:":
			section = outputs
		case l != "" && !strings.HasPrefix(l, " "):
			section = nil
		case section != nil:
			if m := name.FindStringSubmatch(l); m != nil {
				section[m[1]] = true
			}
		}
	}
	return inputs, outputs
}

// action.yml and the code agree: every knob and action input is declared, and every
// declared input is read; the same for outputs.
func TestActionYMLMatchesTheCode(t *testing.T) {
	inputs, outputs := actionYML(t)
	want := map[string]bool{}
	for _, k := range Inputs() {
		want[k.Name] = true
	}
	if got, exp := keys(inputs), keys(want); strings.Join(got, " ") != strings.Join(exp, " ") {
		t.Errorf("action.yml inputs\n  %v\nthe code reads\n  %v", got, exp)
	}
	wantOut := map[string]bool{}
	for _, o := range Outputs {
		wantOut[o.Name] = true
	}
	if got, exp := keys(outputs), keys(wantOut); strings.Join(got, " ") != strings.Join(exp, " ") {
		t.Errorf("action.yml outputs\n  %v\nthe code sets\n  %v", got, exp)
	}
}

func keys(m map[string]bool) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// testAct is an action whose runner command file fileVar is a fresh file; it returns
// that file's path and the action's log.
func testAct(t *testing.T, fileVar string) (*act, string, *strings.Builder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "command-file")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{fileVar: path}
	log := &strings.Builder{}
	a := &act{e: Env{Getenv: func(k string) string { return env[k] }, Stdout: log}}
	a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv), githubactions.WithWriter(log))
	return a, path, log
}

// Outputs use the delimiter form with a fresh delimiter that no value line equals,
// even a value crafted to contain a plausible one.
func TestOutputsDelimiter(t *testing.T) {
	a, out, log := testAct(t, "GITHUB_OUTPUT")
	values := map[string]string{
		"plain":     "success",
		"multiline": "a\nb\n_GitHubActionsFileCommandDelimeter_\nsgpu_000",
		"empty":     "",
	}
	a.outputs(values)
	data, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	got := map[string]string{}
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("line %q is not name<<delim", lines[i])
		}
		var v []string
		for i++; lines[i] != delim; i++ {
			v = append(v, lines[i])
		}
		got[name] = strings.Join(v, "\n")
	}
	for k, v := range values {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if log.Len() != 0 {
		t.Errorf("unexpected log output %q", log.String())
	}
}

func TestFieldsAndPublishTargets(t *testing.T) {
	if got := fields(" ci/a.conf, ci/b.conf\nci/c.conf\t"); strings.Join(got, "|") != "ci/a.conf|ci/b.conf|ci/c.conf" {
		t.Errorf("fields = %q", got)
	}
	tests := []struct {
		in   string
		want string
		err  bool
	}{
		{"summary", "summary", false},
		{"Summary, check comment", "check comment summary", false},
		{"none", "", false},
		{"", "summary", false},
		{"none, summary", "", true},
		{"slack", "", true},
	}
	for _, tt := range tests {
		got, err := publishTargets(tt.in)
		if (err != nil) != tt.err || strings.Join(keys(got), " ") != tt.want {
			t.Errorf("publishTargets(%q) = %v, %v", tt.in, got, err)
		}
	}
}

// The summary stays under GitHub's 1 MiB cap, cut at a line with a note.
func TestSummaryCap(t *testing.T) {
	a, sum, _ := testAct(t, "GITHUB_STEP_SUMMARY")
	a.summary("## head\n" + strings.Repeat("| row | row |\n", 200000))
	data, _ := os.ReadFile(sum)
	if len(data) >= summaryLimit || !strings.HasPrefix(string(data), "## head\n") || !strings.Contains(string(data), "cut at GitHub's 1 MiB limit") {
		t.Errorf("summary of %d bytes, tail %q", len(data), string(data[len(data)-120:]))
	}
	// Cut inside a folded log tail: the fence and the <details> close before the note.
	a, sum, _ = testAct(t, "GITHUB_STEP_SUMMARY")
	a.summary("## head\n<details><summary>log</summary>\n\n```text\n" + strings.Repeat("ünïcödé line\n", 100000) + "```\n</details>\n")
	data, _ = os.ReadFile(sum)
	if !strings.Contains(string(data), "\n```\n\n</details>\n\n\n> The summary was cut at GitHub's 1 MiB limit") {
		t.Errorf("summary of %d bytes does not close what it opened; tail %q", len(data), string(data[len(data)-160:]))
	}
}

// The default check name is the job and the leg's matrix values, in the workflow's
// order; a check-name input wins; a bad matrix input is a usage error.
func TestCheckName(t *testing.T) {
	tests := []struct {
		job, matrix, input string
		want, err          string
	}{
		{"build_and_test", `{"runner":"linux-mi325-8"}`, "", "sgpu-queue (build_and_test, linux-mi325-8)", ""},
		{"build_and_test", `{"runner": "linux-mi355-8", "arch": "gfx950", "n": 8, "opts": {"a": [1, 2]}}`, "", "sgpu-queue (build_and_test, linux-mi355-8, gfx950, 8, {\"a\": [1, 2]})", ""},
		{"sgpu", "null", "", "sgpu-queue (sgpu)", ""},
		{"sgpu", "", "", "sgpu-queue (sgpu)", ""},
		{"sgpu", "{}", "", "sgpu-queue (sgpu)", ""},
		{"", "", "", "sgpu-queue", ""},
		{"sgpu", `{"runner":"x"}`, "TE on MI300X", "TE on MI300X", ""},
		{"sgpu", `["x"]`, "", "", "input matrix: not a JSON object"},
		{"sgpu", `{"runner":"x"} trailing`, "", "", "input matrix: text after the object"},
		{"sgpu", `{"runner":`, "", "", "input matrix: "},
	}
	for _, tt := range tests {
		env := map[string]string{"GITHUB_JOB": tt.job, "INPUT_MATRIX": tt.matrix, "INPUT_CHECK-NAME": tt.input}
		a := &act{e: Env{Getenv: func(k string) string { return env[k] }}}
		a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv))
		got, err := a.checkName()
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("job %q matrix %q input %q: %q, %v; want %q, %q", tt.job, tt.matrix, tt.input, got, err, tt.want, tt.err)
		}
	}
}

// Legs get distinct, short, comma-free cache key parts, even when their names only
// differ in characters a key cannot hold.
func TestCacheLeg(t *testing.T) {
	seen := map[string]string{}
	for _, name := range []string{
		"sgpu-queue (build_and_test, linux-mi325-8)", "sgpu-queue (build_and_test, linux-mi355-8)",
		"a,b", "a;b", strings.Repeat("long name ", 40), strings.Repeat("long name ", 40) + "!",
	} {
		leg := CacheLeg(name)
		if len(leg) > 73 || strings.ContainsAny(leg, ", \n") {
			t.Errorf("CacheLeg(%q) = %q", name, leg)
		}
		if other, ok := seen[leg]; ok {
			t.Errorf("%q and %q share the leg %q", name, other, leg)
		}
		seen[leg] = name
	}
	if got := CacheLeg("sgpu-queue (build_and_test, linux-mi325-8)"); !strings.HasPrefix(got, "sgpu-queue__build_and_test__linux-mi325-8-") {
		t.Errorf("leg %q does not read as its check name", got)
	}
}

func TestPublishInputs(t *testing.T) {
	tests := []struct {
		commit, pr string
		want       pubInputs
		err        string
	}{
		{"", "", pubInputs{}, ""},
		{"9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01", "1234", pubInputs{commit: "9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c7d8e9f01", pr: 1234}, ""},
		{"9c1e5a7", "", pubInputs{}, `input commit "9c1e5a7": want a full commit id`},
		{"", "#12", pubInputs{}, `input pr-number "#12": want a pull request number`},
		{"", "0", pubInputs{}, `input pr-number "0"`},
	}
	for _, tt := range tests {
		env := map[string]string{"INPUT_COMMIT": tt.commit, "INPUT_PR-NUMBER": tt.pr}
		a := &act{e: Env{Getenv: func(k string) string { return env[k] }}}
		a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv))
		got, err := a.publishInputs()
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("commit %q pr %q: %+v, %v", tt.commit, tt.pr, got, err)
		}
	}
}

// GitHub shows 10 error and 10 warning annotations per step: with 12 failed suites the
// tenth error names the other three, and with 12 warnings the tenth says how many more
// are in the log, where every one of them is.
func TestAnnotationsCapped(t *testing.T) {
	a, _, log := testAct(t, "GITHUB_OUTPUT")
	a.obs = &observer{gh: a.gh, out: log}
	res := &engine.Result{ExitCode: 1}
	for i := range 12 {
		label := fmt.Sprintf("s%02d", i)
		res.Suites = append(res.Suites, verdict.Suite{Label: label, Failed: 1, RC: 1,
			Items: []verdict.Item{{ItemID: record.ItemID{Label: label, Tag: "t"}, Result: record.Result{Failed: true, RC: 1}, Finished: true, LogRel: "items/" + label + ".t.log"}}})
	}
	for i := range 12 {
		a.obs.Warn(fmt.Sprintf("warning %d", i))
	}
	a.present(res)
	a.obs.flushWarnings()
	var errs, warns []string
	for _, l := range strings.Split(log.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "::error"):
			errs = append(errs, l)
		case strings.HasPrefix(l, "::warning"):
			warns = append(warns, l)
		}
	}
	if len(errs) != maxAnnotations || !strings.Contains(errs[9], "3 more suites failed: s09, s10, s11") {
		t.Errorf("%d error annotations, the last %q", len(errs), errs[len(errs)-1])
	}
	if len(warns) != maxAnnotations || !strings.Contains(warns[9], "3 more warnings in the log") {
		t.Errorf("%d warning annotations, the last %q", len(warns), warns[len(warns)-1])
	}
	for i := range 12 {
		if !strings.Contains(log.String(), fmt.Sprintf("warning %d\n", i)) {
			t.Errorf("warning %d is nowhere in the log", i)
		}
	}
}

// The error that stops a run may carry a setup's output tail: in the job summary,
// which GitHub shows unmasked, the github-token and the runner's tokens are ***.
func TestStopScrubsTheSummary(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary")
	if err := os.WriteFile(summary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_STEP_SUMMARY": summary, "INPUT_GITHUB-TOKEN": "ghs_input0token", "ACTIONS_RUNTIME_TOKEN": "runtime0token"}
	log := &strings.Builder{}
	a := &act{e: Env{Getenv: func(k string) string { return env[k] }, Stdout: log}, targets: map[string]bool{"summary": true}}
	a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv), githubactions.WithWriter(log))
	a.stop(fmt.Errorf("suite %q setup exited with 1; log setup.log:\n  GH_TOKEN=ghs_input0token\n  RT=runtime0token", "s"))
	got, _ := os.ReadFile(summary)
	if strings.Contains(string(got), "0token") || !strings.Contains(string(got), "GH_TOKEN=***\n  RT=***") {
		t.Errorf("summary:\n%s", got)
	}
}

// Every bad input is said at once, one line each naming it: a bad publish, mode
// input or check input no longer hides a bad run setting, in any mode.
func TestInputErrorsAllAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]string
		want   []string // the start of each line, in order
	}{
		{"run", map[string]string{"publish": "bogus", "shards": "3", "retries": "many", "grace": "soon", "config": "ci/x.conf"},
			[]string{`input publish "bogus"`, "input shards is read by mode plan", `input grace "soon"`, `input retries "many"`}},
		{"run, no config", map[string]string{"pr-number": "#1", "commit": "abc", "retries": "-1"},
			[]string{`input commit "abc"`, `input pr-number "#1"`, "input config is empty", `input retries "-1"`}},
		{"merge", map[string]string{"mode": "merge", "matrix": "[", "shard-log-dirs": "none*/logs", "grace": "x"},
			[]string{"input matrix: not a JSON object", `input shard-log-dirs: "none*/logs" matches nothing`, `input grace "x"`}},
		{"merge, allow-mixed", map[string]string{"mode": "merge", "shard-log-dirs": "none*/logs", "allow-mixed": "yes", "grace": "x"},
			[]string{`input shard-log-dirs: "none*/logs" matches nothing`, `input grace "x"`, `input allow-mixed "yes": want true or false`}},
		{"run, allow-mixed", map[string]string{"allow-mixed": "true", "config": "ci/x.conf", "setup-env": "TEST_FILTER=x", "before": "bash -c 'x"},
			[]string{"input allow-mixed is read by mode merge only", `input before "bash -c 'x"`, "input setup-env: TEST_FILTER: sgpu-queue sets TEST_FILTER"}},
		{"bad mode", map[string]string{"mode": "sideways", "publish": "none,check", "retries": "two"},
			[]string{`input publish "none,check"`, `input mode "sideways"`, `input retries "two"`}},
		{"plan", map[string]string{"mode": "plan", "publish": "x", "shard": "1/2", "config": "c.conf"},
			[]string{`input publish "x"`, "input shard is read by mode run", "mode plan needs input arch", "no input shards given", "no input gpus given"}},
	}
	for _, tt := range tests {
		env := map[string]string{"GITHUB_WORKSPACE": t.TempDir()}
		for k, v := range tt.inputs {
			env["INPUT_"+strings.ToUpper(k)] = v
		}
		a := &act{e: Env{Getenv: func(k string) string { return env[k] }}}
		a.gh = githubactions.New(githubactions.WithGetenv(a.e.Getenv))
		a.ws = env["GITHUB_WORKSPACE"]
		_, err := a.readInputs()
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(tt.want) {
			t.Errorf("%s: %d lines, want %d:\n%v", tt.name, len(lines), len(tt.want), err)
			continue
		}
		for i, w := range tt.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: line %d %q, want it to start %q", tt.name, i+1, lines[i], w)
			}
		}
	}
}
