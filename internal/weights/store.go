package weights

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Store is where the table lives between runs: a local file for the CLI, the Actions
// cache for the action.
type Store interface {
	// Load returns the stored table, or an empty one when there is none yet. Problems
	// that leave the run able to go on (a corrupt line, a cache that is down) are
	// warnings, not errors; a table that is there but cannot be read is an
	// *UnreadableError with an empty table: the run goes on without it, and never
	// saves over it.
	Load(ctx context.Context) (t *Table, warnings []string, err error)
	// Save stores the table.
	Save(ctx context.Context, t *Table) error
	// String names the store in logs: a path or a cache key.
	String() string
}

// Locker is a Store that other runs on this machine may save at the same moment (a
// local file): Lock holds them off until unlock.
type Locker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// Rewrite saves what a run learned as a read-modify-write (docs/weights.md "Runs at
// once"): under the store's lock (a Locker) the table is read again and apply makes
// the table to save from it, so that what another run saved since this one loaded is
// kept. A store without a lock (the Actions cache: one immutable entry per run) gets
// apply(loaded), the table the run loaded. The warnings are the re-read's (its
// corrupt lines) and a lock the file system does not support. apply is called at
// most once, and not at all when the table cannot be read again. ctx ends only
// the wait for the lock (a *safefs.LockError wrapping its error): once the lock is
// held, or with none, the read and the write go through.
func Rewrite(ctx context.Context, s Store, loaded *Table, apply func(stored *Table) *Table) ([]string, error) {
	io := context.WithoutCancel(ctx)
	l, ok := s.(Locker)
	if !ok {
		return nil, s.Save(io, apply(loaded))
	}
	var warns []string
	unlock, err := l.Lock(ctx)
	var le *safefs.LockError
	switch {
	case errors.As(err, &le) && !le.Busy:
		// Saving unlocked is what every run did before the lock: better than
		// losing this run's learning.
		warns = append(warns, err.Error()+"; saved without it (a run saving at the same moment may lose its learning)")
	case err != nil:
		return nil, err
	default:
		defer unlock()
	}
	stored, more, err := s.Load(io)
	if err != nil {
		return warns, err
	}
	return append(warns, more...), s.Save(io, apply(stored))
}

// File stores the table in a local file, replaced atomically.
type File struct {
	Path string
	// LockWait bounds the wait for another run's lock (Lock); 0 is
	// safefs.DefaultLockWait.
	LockWait time.Duration
}

func (f File) String() string { return f.Path }

// UnreadableError is a weight table that is there but could not be read (its
// permissions, a directory or a FIFO in its place): a run orders without it and
// never writes over it, so the keys it holds are kept.
type UnreadableError struct {
	Path string
	Err  error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("weight table %s could not be read: %v", e.Path, e.Err)
}
func (e *UnreadableError) Unwrap() error { return e.Err }

// Load implements Store. A missing file is an empty table; an unreadable one is an
// empty table and an *UnreadableError. The file is opened without blocking
// (safefs.Open): a FIFO, device or socket in its place is unreadable, never waited
// on; a symlink is followed.
func (f File) Load(ctx context.Context) (*Table, []string, error) {
	r, err := safefs.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil, nil
	}
	if err != nil {
		return New(), nil, &UnreadableError{Path: f.Path, Err: err}
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return New(), nil, &UnreadableError{Path: f.Path, Err: err}
	}
	t, warns := Parse(bytes.NewReader(data), f.Path)
	return t, warns, nil
}

// Save implements Store: the table is replaced atomically (atomicfile.Write): a
// reader or a crash never sees half a table; a symlinked table is updated through
// the link (its target changes, the link stays) and keeps its mode. A table that is
// there but cannot be read is not replaced (*UnreadableError): its keys are not
// this run's to drop. Save takes no lock: Rewrite does, around its re-read.
func (f File) Save(ctx context.Context, t *Table) error {
	r, err := safefs.Open(f.Path)
	switch {
	case err == nil:
		r.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return &UnreadableError{Path: f.Path, Err: err}
	}
	var b bytes.Buffer
	if err := t.Format(&b); err != nil {
		return err
	}
	return atomicfile.Write(f.Path, b.Bytes(), 0o644)
}
