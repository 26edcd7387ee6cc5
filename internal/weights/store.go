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
	// that leave the run able to go on (a corrupt line, an unreadable file, a cache
	// that is down) are warnings, not errors.
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

// Load implements Store. A missing file is an empty table; an unreadable one is a
// warning and an empty table.
func (f File) Load(ctx context.Context) (*Table, []string, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil, nil
	}
	if err != nil {
		return New(), []string{fmt.Sprintf("weight table %s unreadable, starting from an empty table: %v", f.Path, err)}, nil
	}
	t, warns := Parse(bytes.NewReader(data), f.Path)
	return t, warns, nil
}

// Save implements Store: the table is replaced atomically (atomicfile.Write): a
// reader or a crash never sees half a table; a symlinked table is updated through
// the link (its target changes, the link stays) and keeps its mode.
func (f File) Save(ctx context.Context, t *Table) error {
	var b bytes.Buffer
	if err := t.Format(&b); err != nil {
		return err
	}
	return atomicfile.Write(f.Path, b.Bytes(), 0o644)
}
