package weights

import (
	"context"
	"os"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Lock implements Locker: safefs.LockDir on the dir of the table's real file, so every path to one table takes
// one lock. A lock not taken is a *safefs.LockError.
func (f File) Lock(ctx context.Context) (func(), error) {
	target, err := atomicfile.Resolve(f.Path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return safefs.LockDir(ctx, "weight table", dir, f.LockWait)
}
