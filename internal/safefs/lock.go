package safefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// DefaultLockWait bounds the wait for another run's hold, which lasts a few small reads and writes: longer is a
// stopped run.
const DefaultLockWait = 2 * time.Minute

// lockPoll is how often a waiting LockDir tries again.
const lockPoll = 50 * time.Millisecond

// LockError is a lock not taken: Busy when held past the wait (or cancelled), else the file system refused locks
// (NFS), which a caller may go on without.
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

// LockDir takes an exclusive flock(2) on dir, waiting up to wait, and returns the release. No lock file: nothing
// to commit or clean, and the kernel drops the lock when the holder dies.
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
