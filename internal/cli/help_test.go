package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/golden"
)

// The help of every command is pinned: it is what a user reads first, and a flag or
// rule that changes shows in the diff (go test ./internal/cli -run TestHelp -update).
func TestHelp(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"help.golden", []string{"--help"}},
		{"run-help.golden", []string{"run", "--help"}},
		{"verify-help.golden", []string{"verify", "--help"}},
		{"plan-help.golden", []string{"plan", "--help"}},
		{"merge-help.golden", []string{"merge", "--help"}},
		{"simulate-help.golden", []string{"simulate", "--help"}},
		{"report-help.golden", []string{"report", "--help"}},
		{"action-help.golden", []string{"action", "--help"}},
		{"version-help.golden", []string{"version", "--help"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out, errb bytes.Buffer
			// No SGPU_* variable may leak into the defaults the help shows.
			code := Main(Env{Args: tt.args, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if code != 0 || errb.Len() != 0 {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
			golden.Check(t, filepath.Join("testdata", tt.golden), out.Bytes(), *update)
		})
	}
	// -h and -help are the same help.
	for _, flag := range []string{"-h", "-help"} {
		var long, short bytes.Buffer
		Main(Env{Args: []string{"run", "--help"}, Stdout: &long, Stderr: &long, Getenv: func(string) string { return "" }})
		Main(Env{Args: []string{"run", flag}, Stdout: &short, Stderr: &short, Getenv: func(string) string { return "" }})
		if short.String() != long.String() {
			t.Errorf("run %s differs from run --help", flag)
		}
	}
}

// The help of every command that reads a CONFIG names its modes, the adapters'
// included, and where the config and adapters are documented; every docs page a
// help names exists.
func TestHelpNamesModesAndDocs(t *testing.T) {
	help := func(args ...string) string {
		var out bytes.Buffer
		Main(Env{Args: args, Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }})
		return out.String()
	}
	modes := []config.Mode{config.List, config.Opaque, config.Pytest, config.CTest, config.Cmd}
	// A docs page: "docs/config.md", or a bare "adapters.md" in a list of them (not
	// "report/schedule.md", a file of the log dir).
	page := regexp.MustCompile(`(?:^|[\s(,:"])(?:docs/)?([a-z-]+\.md)\b`)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"verify", "--help"}, {"plan", "--help"}, {"action", "--help"}} {
		h := help(args...)
		for _, m := range modes {
			if !regexp.MustCompile(`\b` + string(m) + `\b`).MatchString(h) {
				t.Errorf("%v does not name mode %s", args, m)
			}
		}
		if !strings.Contains(h, "config.md") {
			t.Errorf("%v does not point to docs/config.md", args)
		}
		for _, m := range page.FindAllStringSubmatch(h, -1) {
			if _, err := os.Stat(filepath.Join("..", "..", "docs", m[1])); err != nil {
				t.Errorf("%v names %s: %v", args, m[1], err)
			}
		}
	}
	for _, opt := range []string{"gpus=", "env=", "setup=", "split=", "python=", "docs/adapters.md"} {
		if !strings.Contains(help("run", "--help"), opt) {
			t.Errorf("run --help does not name %s", opt)
		}
	}
}
