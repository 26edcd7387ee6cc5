package executor

import (
	"fmt"
	"syscall"
)

// NoCoreDumps sets this process's soft RLIMIT_CORE to 0, so that every command it
// starts afterwards (and everything those start) inherits it: a crashing test writes
// no core file into the logs an action uploads (docs/hooks.md, "Core dumps"), as TE's
// `ulimit -c 0` did.
//
// It is a process limit, set once before any command starts, not per child: Go's
// os/exec offers no hook between fork and exec, lowering it around each start races
// with the other workers' starts, and a prlimit on the started pid comes after the
// child already runs (what it forks first keeps the old limit). sgpu-queue itself
// needs no core either. Only the soft limit is lowered, so a test that wants a core
// may still raise it (`ulimit -S -c unlimited`) up to the hard limit it was given.
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
