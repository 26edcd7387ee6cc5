package cli

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
)

// update rewrites the golden files under testdata/ (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// checkHelp pins a command's --help as testdata/<cmd>-help.golden: it goes to
// stdout, exit 0, nothing on stderr.
func checkHelp(t *testing.T, cmd string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(Env{Args: []string{cmd, "--help"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	golden.Check(t, filepath.Join("testdata", cmd+"-help.golden"), out.Bytes(), *update)
}
