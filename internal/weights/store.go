package weights

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
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

// File stores the table in a local file, replaced atomically.
type File struct {
	Path string
}

func (f File) String() string { return f.Path }

// UnreadableError is a weight table that is there but could not be read (its
// permissions, a directory in its place): a run orders without it and never writes
// over it, so the keys it holds are kept.
type UnreadableError struct {
	Path string
	Err  error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("weight table %s could not be read: %v", e.Path, e.Err)
}
func (e *UnreadableError) Unwrap() error { return e.Err }

// Load implements Store. A missing file is an empty table; an unreadable one is an
// empty table and an *UnreadableError.
func (f File) Load(ctx context.Context) (*Table, []string, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil, nil
	}
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
// this run's to drop.
func (f File) Save(ctx context.Context, t *Table) error {
	if _, err := os.ReadFile(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &UnreadableError{Path: f.Path, Err: err}
	}
	var b bytes.Buffer
	if err := t.Format(&b); err != nil {
		return err
	}
	return atomicfile.Write(f.Path, b.Bytes(), 0o644)
}
