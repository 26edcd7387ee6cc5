package executor

import (
	"fmt"
	"syscall"
)

// NoCoreDumps sets this process's soft RLIMIT_CORE to 0 for every command it starts, so a crashing test writes no
// core into uploaded logs (docs/hooks.md, "Core dumps"), as TE's `ulimit -c 0`. It is set once, not per child:
// os/exec has no hook between fork and exec, and a later prlimit races. A test may raise the soft limit again.
func NoCoreDumps() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		return fmt.Errorf("core dumps stay as they were: reading RLIMIT_CORE: %w", err)
	}
	if lim.Cur == 0 {
		return nil
	}
	lim.Cur = 0
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		return fmt.Errorf("core dumps stay as they were: setting RLIMIT_CORE to 0: %w", err)
	}
	return nil
}
