package logdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// LockName is the lock file a run holds an exclusive flock(2) on from phase 0 to its end; the kernel drops it
// when the holder dies, however it dies.
const LockName = ".sgpu-queue.lock"

// Lock is a held log-dir lock.
type Lock struct{ f *os.File }

// BusyError is returned when another run holds the log dir's lock.
type BusyError struct {
	Dir    string
	Holder string       // "pid 123 on host h, started 2025-…", or "" when not yet written
	Face   optname.Face // names the log-dir option in the message (the engine sets it)
}

func (e *BusyError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "it is starting and has not named itself yet"
	}
	return fmt.Sprintf("log dir %s is in use by another sgpu-queue run (%s): wait for it to end, or give this run another %s",
		e.Dir, holder, e.Face.Name("log-dir"))
}

// lock takes the log dir's lock without waiting.
func (l Layout) lock() (*Lock, error) {
	path := l.path(LockName)
	// O_CLOEXEC: an item that outlives the run cannot keep the log dir locked.
	f, err := safefs.OpenFile(l.trusted(), path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			data, _ := safefs.ReadFile(path)
			return nil, &BusyError{Dir: l.Root, Holder: strings.TrimSpace(string(data))}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("pid %d on host %s, started %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(holder), 0)
		if err != nil {
			// The lock holds without its note; a second run then says the holder did not name itself.
			_ = f.Truncate(0)
		}
	}
	return &Lock{f: f}, nil
}

// Release drops the lock (closing the file drops the flock).
func (k *Lock) Release() error {
	if k == nil || k.f == nil {
		return nil
	}
	err := k.f.Close()
	k.f = nil
	return err
}

// InProgressError is Load's error while a run holds the lock (docs/files.md, "The lock"): its files are half written.
type InProgressError struct {
	Dir    string
	Holder string // as BusyError's
}

func (e *InProgressError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "it is starting and has not named itself yet"
	}
	return fmt.Sprintf("%s: a run is still in progress there (%s): wait for it to end, then try again", e.Dir, holder)
}

// inProgress reports whether a run holds the lock now, and who, by taking a shared lock and dropping it at once.
func (l Layout) inProgress() (holder string, busy bool, err error) {
	path := l.path(LockName)
	f, err := safefs.Open(path)
	var se *safefs.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil // no run ever locked it
	case errors.As(err, &se):
		return "", false, err
	case err != nil:
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			data, _ := safefs.ReadFile(path)
			return strings.TrimSpace(string(data)), true, nil
		}
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	return "", false, nil // closing the file drops the shared lock
}
