package engine

import (
	"context"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// pooledKeys are the keys of items as wide as the pool: kept per pool size.
func pooledKeys(items []expand.Item) map[string]bool {
	pooled := map[string]bool{}
	for _, it := range items {
		if it.AllGPUs {
			pooled[it.Key()] = true
		}
	}
	return pooled
}

// seedTE fills the keys the run's table lacks from TE's tables, read, never written,
// so the first run after TE's run_queue.sh is ordered (docs/files.md "The weight
// table"). It returns what it added, for phase 6.
func (r *run) seedTE(ctx context.Context, t *weights.Table, e *expansion, pool gpu.Pool, pooled map[string]bool) *weights.Table {
	seeds := weights.New()
	for _, q := range runQueues(e.suites) {
		path := weights.TEPath(r.o.Target.RepoRoot, q, pool.Arch, r.o.Target.Level, len(pool.IDs))
		added, warns := weights.Seed(ctx, t, path, pooled, len(pool.IDs))
		for _, w := range warns {
			r.warn(w)
		}
		if n := seeds.Fill(added); n > 0 {
			r.printf("  seeded %d weight(s) from TE's %s table %s\n", n, q, r.rel(path))
		}
	}
	return seeds
}
