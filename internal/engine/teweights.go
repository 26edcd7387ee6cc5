package engine

import (
	"context"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// pooledKeys are the weight keys of the items whose width is the pool (an
// undeclared mGPU item, gpus=all): their weights are kept per pool size
// (weights.SplitPool).
func pooledKeys(items []expand.Item) map[string]bool {
	pooled := map[string]bool{}
	for _, it := range items {
		if it.AllGPUs {
			pooled[it.Key()] = true
		}
	}
	return pooled
}

// seedTE fills the run's table from TE's current tables of the run's queues
// (ci-weights/test_weights.<queue>.<arch>.l<level>.g<pool size>.txt), for the keys
// it lacks, so the first run after switching from TE's run_queue.sh is ordered. They
// are read, never written (docs/files.md "The weight table"). It returns what it
// added, for phase 6 to fill the table it reads again alike.
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
