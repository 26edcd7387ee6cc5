package action

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	githubactions "github.com/sethvargo/go-githubactions"

	"github.com/rocm/sgpu-queue/internal/settings"
)

// actionYML returns the input and output names action.yml declares.
func actionYML(t *testing.T) (inputs, outputs map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "action.yml"))
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
	for _, k := range settings.Knobs {
		want[k.Name] = true
	}
	for _, in := range Inputs {
		want[in] = true
	}
	if got, exp := keys(inputs), keys(want); strings.Join(got, " ") != strings.Join(exp, " ") {
		t.Errorf("action.yml inputs\n  %v\nthe code reads\n  %v", got, exp)
	}
	wantOut := map[string]bool{}
	for _, o := range Outputs {
		wantOut[o] = true
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
		{"", "", false},
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
}
