package executor

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// ulimitCore is what `ulimit -c` and `ulimit -H -c` print in a command Local starts.
func ulimitCore(t *testing.T) (soft, hard string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	var out strings.Builder
	res, err := Local{}.Run(context.Background(), Command{Path: sh, Args: []string{"-c", "ulimit -c; ulimit -H -c"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("sh: %v, rc %d", err, res.ExitCode)
	}
	f := strings.Fields(out.String())
	if len(f) != 2 {
		t.Fatalf("ulimit printed %q", out.String())
	}
	return f[0], f[1]
}

// TestNoCoreDumps: after NoCoreDumps a command started by Local sees `ulimit -c` 0,
// and the hard limit is what it was (a test may still raise its own soft limit).
func TestNoCoreDumps(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_CORE, &before) })
	if before.Max == 0 {
		t.Skip("the hard RLIMIT_CORE is 0 here: nothing to lower")
	}
	raised := syscall.Rlimit{Cur: before.Max, Max: before.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &raised); err != nil {
		t.Fatal(err)
	}
	soft, hardBefore := ulimitCore(t)
	if soft == "0" {
		t.Fatalf("the raised soft limit reads 0 in a child: the test proves nothing")
	}
	for i := range 2 { // a second call changes nothing
		if err := NoCoreDumps(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		soft, hard := ulimitCore(t)
		if soft != "0" || hard != hardBefore {
			t.Errorf("call %d: a child's ulimit -c is %s (hard %s), want 0 (hard %s, unchanged)", i+1, soft, hard, hardBefore)
		}
	}
}
