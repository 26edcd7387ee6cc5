package cli

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
)

// The help of verify is pinned: it is what a user adopting the queue reads first.
func TestVerifyHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(Env{Args: []string{"verify", "--help"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	golden.Check(t, filepath.Join("testdata", "verify-help.golden"), out.Bytes(), *update)
}
