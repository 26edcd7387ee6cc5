package cli

import (
	"bytes"
	"path/filepath"
	"testing"

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
