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

// Store is where the table lives between runs: a local file, or the Actions cache.
type Store interface {
	// Load returns the stored table, or an empty one. Problems the run can live with are warnings; a table there but
	// unreadable is an *UnreadableError, and the run never saves over it.
	Load(ctx context.Context) (t *Table, warnings []string, err error)
	// Save stores the table.
	Save(ctx context.Context, t *Table) error
	// String names the store in logs: a path or a cache key.
	String() string
}

// Locker is a Store that other runs on this machine may save at once: Lock holds them off until unlock.
type Locker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// Rewrite saves a run's learning as a read-modify-write under the store's lock, so what another run saved since is
// kept (docs/weights.md "Runs at once"); without a lock, apply gets loaded. ctx ends only the wait for the lock.
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
		// Saving unlocked beats losing this run's learning.
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
	// LockWait bounds the wait for another run's lock; 0 is safefs.DefaultLockWait.
	LockWait time.Duration
}

func (f File) String() string { return f.Path }

// UnreadableError is a table that is there but unreadable: a run orders without it and never writes over it.
type UnreadableError struct {
	Path string
	Err  error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("weight table %s could not be read: %v", e.Path, e.Err)
}
func (e *UnreadableError) Unwrap() error { return e.Err }

// Load implements Store: a missing file is an empty table; a FIFO or device in its place is
// unreadable, never waited on.
func (f File) Load(ctx context.Context) (*Table, []string, error) {
	t, warns, err := read(f.Path, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return New(), nil, nil
	case err != nil:
		return New(), nil, &UnreadableError{Path: f.Path, Err: err}
	}
	return t, warns, nil
}

// read reads the table at path, a regular file of at most limit bytes (0: any size).
func read(path string, limit int64) (*Table, []string, error) {
	r, err := safefs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	if fi, err := r.Stat(); err == nil && limit > 0 && fi.Size() > limit {
		return nil, nil, fmt.Errorf("larger than %d MiB", limit>>20)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	t, warns := Parse(bytes.NewReader(data), path)
	return t, warns, nil
}

// Save implements Store: an atomic replace, through a symlink to its target, keeping the mode. An unreadable table is
// not replaced, as its keys are not this run's to drop. Rewrite, not Save, takes the lock.
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
