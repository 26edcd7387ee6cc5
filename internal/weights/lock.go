package weights

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
)

// DefaultLockWait bounds how long a run waits for another run's hold on the table:
// a hold lasts one read, one learning pass and one write of a small file, so a
// longer one is a run stopped (SIGSTOP) in the middle of it.
const DefaultLockWait = 2 * time.Minute

// lockPoll is how often a waiting run tries the lock again.
const lockPoll = 50 * time.Millisecond

// LockError is a table whose lock was not taken: Busy when another run held it past
// the wait; otherwise the file system refused the lock (an NFS mount without lock
// support), which Rewrite goes on without.
type LockError struct {
	Dir  string
	Busy bool
	Wait time.Duration
	Err  error
}

func (e *LockError) Error() string {
	if e.Busy {
		return fmt.Sprintf("weight table: another sgpu-queue run held the lock on %s for %s (stopped while saving?); not written", e.Dir, e.Wait)
	}
	return fmt.Sprintf("weight table: cannot lock %s: %v", e.Dir, e.Err)
}

func (e *LockError) Unwrap() error { return e.Err }

// Lock implements Locker: an exclusive flock(2) on the directory that holds the
// table's real file (a symlinked table's target, so every path to one table takes
// one lock), made when missing. No lock file is created: nothing is left in the tree
// to commit or clean, and the kernel drops the lock when the holder dies.
func (f File) Lock(ctx context.Context) (func(), error) {
	target, err := atomicfile.Resolve(f.Path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// O_NONBLOCK: whatever is there, the open never waits.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &LockError{Dir: dir, Err: err}
	}
	wait := f.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { d.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			d.Close()
			return nil, &LockError{Dir: dir, Err: err}
		}
		if time.Now().After(deadline) {
			d.Close()
			return nil, &LockError{Dir: dir, Busy: true, Wait: wait, Err: err}
		}
		select {
		case <-ctx.Done():
			d.Close()
			return nil, &LockError{Dir: dir, Busy: true, Wait: wait, Err: ctx.Err()}
		case <-time.After(lockPoll):
		}
	}
}
