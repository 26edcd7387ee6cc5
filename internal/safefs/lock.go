package safefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// DefaultLockWait bounds how long LockDir waits for another run's hold: a hold
// lasts one read, one merge and one write of a few small files, so a longer one is
// a run stopped (SIGSTOP) in the middle of it.
const DefaultLockWait = 2 * time.Minute

// lockPoll is how often a waiting LockDir tries again.
const lockPoll = 50 * time.Millisecond

// LockError is a directory whose lock was not taken: Busy when another run held it
// past the wait (or the wait was cancelled); otherwise the file system refused the
// lock (an NFS mount without lock support), which a caller may go on without.
type LockError struct {
	What string // what the lock guards, for the message: "weight table", "JUnit dir"
	Dir  string
	Busy bool
	Wait time.Duration
	Err  error
}

func (e *LockError) Error() string {
	if e.Busy && (errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)) {
		return fmt.Sprintf("%s: the wait for another sgpu-queue run's lock on %s was stopped (a signal); not written", e.What, e.Dir)
	}
	if e.Busy {
		return fmt.Sprintf("%s: another sgpu-queue run held the lock on %s for %s (stopped while saving?); not written", e.What, e.Dir, e.Wait)
	}
	return fmt.Sprintf("%s: cannot lock %s: %v", e.What, e.Dir, e.Err)
}

func (e *LockError) Unwrap() error { return e.Err }

// LockDir takes an exclusive flock(2) on directory dir (what names what it guards),
// waiting up to wait (DefaultLockWait for 0) for another holder, and returns the
// release. No lock file is made: nothing is left in the tree to commit or clean,
// and the kernel drops the lock when the holder dies. The directory must exist.
func LockDir(ctx context.Context, what, dir string, wait time.Duration) (release func(), err error) {
	// O_NONBLOCK: whatever is there, the open never waits.
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &LockError{What: what, Dir: dir, Err: err}
	}
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
			return nil, &LockError{What: what, Dir: dir, Err: err}
		}
		if time.Now().After(deadline) {
			d.Close()
			return nil, &LockError{What: what, Dir: dir, Busy: true, Wait: wait, Err: err}
		}
		select {
		case <-ctx.Done():
			d.Close()
			return nil, &LockError{What: what, Dir: dir, Busy: true, Wait: wait, Err: ctx.Err()}
		case <-time.After(lockPoll):
		}
	}
}
