package settings

import (
	"strings"
	"testing"
)

// One text, three forms: an option as each face's user writes it, code, a docs page.
func TestText(t *testing.T) {
	tests := []struct {
		in                string
		help, yml, markdn string
	}{
		{"with {container}: variables", "with --container: variables", "with container: variables", "with `container`: variables"},
		{"names or globs (`HF_TOKEN`, `NVTE_*`)", "names or globs (HF_TOKEN, NVTE_*)", "names or globs (HF_TOKEN, NVTE_*)",
			"names or globs (`HF_TOKEN`, `NVTE_*`)"},
		// Code with a ';' stays one thing in plain text; other code is as it is.
		{"e.g. `DIR=$PWD/ci; . ci/_utils.sh`: every", "e.g. 'DIR=$PWD/ci; . ci/_utils.sh': every",
			"e.g. 'DIR=$PWD/ci; . ci/_utils.sh': every", "e.g. `DIR=$PWD/ci; . ci/_utils.sh`: every"},
		{"`it's; one`", `"it's; one"`, `"it's; one"`, "`it's; one`"},
		{"as under `ulimit -c 0`", "as under ulimit -c 0", "as under ulimit -c 0", "as under `ulimit -c 0`"},
		{"a page (docs/hooks.md#once-per-run), docs/reruns.md", "a page (docs/hooks.md#once-per-run), docs/reruns.md",
			"a page (docs/hooks.md#once-per-run), docs/reruns.md", "a page ([hooks.md](hooks.md#once-per-run)), [reruns.md](reruns.md)"},
		// Inside code, nothing is a name or a page; a '|' is escaped for a Markdown table.
		{"`{x} docs/cli.md` a|b `c|d`", "{x} docs/cli.md a|b c|d", "{x} docs/cli.md a|b c|d", "`{x} docs/cli.md` a\\|b `c\\|d`"},
		{"JSON {\"shard\": 1}", "JSON {\"shard\": 1}", "JSON {\"shard\": 1}", "JSON {\"shard\": 1}"},
	}
	for _, tt := range tests {
		for f, want := range []string{tt.help, tt.yml, tt.markdn} {
			if got := Text(tt.in, Form(f)); got != want {
				t.Errorf("Text(%q, %d) = %q, want %q", tt.in, f, got, want)
			}
		}
	}
}

// A knob's help, its description for the action and its default cell put together
// its one usage and the explicit fields of what differs between the faces.
func TestKnobForms(t *testing.T) {
	tests := []struct {
		k                   Knob
		help, yml, md, cell string
	}{
		{Knob{Name: "level", Usage: "test level, passed as `TEST_LEVEL`", Empty: "`$TEST_LEVEL`, else `99`"},
			"test level, passed as TEST_LEVEL (default: $TEST_LEVEL, else 99)",
			"Test level, passed as TEST_LEVEL. Default: $TEST_LEVEL, else 99.",
			"test level, passed as `TEST_LEVEL`", "`$TEST_LEVEL`, else `99`"},
		{Knob{Name: "grace", Kind: Duration, Default: "20s", Usage: "time to wait"},
			"time to wait (default 20s)", "Time to wait.", "time to wait", "`20s`"},
		// A default of false, or 0 for a duration, goes without saying in --help.
		{Knob{Name: "full", Kind: Bool, Default: "false", Usage: "run all"}, "run all", "Run all.", "run all", "`false`"},
		{Knob{Name: "max", Kind: Duration, Default: "0", Usage: "at most"}, "at most", "At most.", "at most", "`0`"},
		{Knob{Name: "retries", Kind: Number, Default: "0", Usage: "again"}, "again (default 0)", "Again.", "again", "`0`"},
		// One face's own words, and how the action reads a path or a list.
		{Knob{Name: "suites", Usage: "only these", CLI: "{suites} '' selects none", Action: "e.g. the scope job's output"},
			"only these; --suites '' selects none", "Only these. E.g. the scope job's output.", "only these; e.g. the scope job's output", ""},
		{Knob{Name: "pass-env", Kind: Lines, Usage: "with {container}: variables"},
			"with --container: variables (repeatable)", "With container: variables. One per line.",
			"with `container`: variables; one per line", ""},
		{Knob{Name: "mgpu-config", Kind: Lines, Path: true, Usage: "more configs"},
			"more configs (repeatable)",
			"More configs. Paths relative to the workspace, separated by spaces, commas or lines; globs allowed.",
			"more configs; paths relative to the workspace, separated by spaces, commas or lines; globs allowed", ""},
		{Knob{Name: "log-dir", Path: true, Usage: "the log dir", Empty: "`test-results/logs` under the repo root"},
			"the log dir (default: test-results/logs under the repo root)",
			"The log dir. Relative to the workspace. Default: test-results/logs under the repo root.",
			"the log dir; relative to the workspace", "`test-results/logs` under the repo root"},
		// A value or a name keeps its case; a capital stays.
		{Knob{Name: "mode", Default: "run", Usage: "`plan`: split"}, "plan: split (default run)", "plan: split.", "`plan`: split", "`run`"},
		{Knob{Name: "gpus", Usage: "GPU ids"}, "GPU ids", "GPU ids.", "GPU ids", ""},
	}
	for _, tt := range tests {
		if got := tt.k.Help(); got != tt.help {
			t.Errorf("%s: Help() = %q, want %q", tt.k.Name, got, tt.help)
		}
		if got := tt.k.Describe(ActionYML); got != tt.yml {
			t.Errorf("%s: Describe(ActionYML) = %q, want %q", tt.k.Name, got, tt.yml)
		}
		if got := tt.k.Describe(Markdown); got != tt.md {
			t.Errorf("%s: Describe(Markdown) = %q, want %q", tt.k.Name, got, tt.md)
		}
		if got := tt.k.DefaultCell(); got != tt.cell {
			t.Errorf("%s: DefaultCell() = %q, want %q", tt.k.Name, got, tt.cell)
		}
	}
}

// A text that would not read right in some form is refused, each problem named.
func TestCheckText(t *testing.T) {
	known := func(n string) bool { return n == "container" }
	tests := []struct{ in, want string }{
		{"with {container}: `a<b*c`, e.g. docs/hooks.md", ""},
		{"two\nlines", "a line break"},
		{"open `code", "a code span left open"},
		{"a `${{ github.token }}`", "${{"},
		{"a sentence.", "a final period"},
		{"a <label>", `outside`},
		{"globs like NVTE_*", `outside`},
		{"with {contianer}", "{contianer}, which names no option"},
	}
	for _, tt := range tests {
		err := CheckText(tt.in, known)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckText(%q) = %v, want nil", tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckText(%q) = %v, want it to say %q", tt.in, err, tt.want)
		}
	}
}
