package engine

import (
	"fmt"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
)

// readSharding reads --shard and --plan (shard.Spec.Read), in phase 0.
func (r *run) readSharding() (err error) {
	r.shard, err = r.o.Sharding.Read(r.o.Face)
	return err
}

// keepShard keeps the items of the shard; the listing is kept too, so that merge
// can tell an item this host never listed from one that never ran.
func (r *run) keepShard(e *expansion) {
	s := r.shard
	e.listed = make([]record.ItemID, len(e.items))
	var kept []expand.Item
	planned, hashed := 0, 0
	for i, it := range e.items {
		e.listed[i] = it.ItemID
		if s.Of(it.Key()) != s.Shard {
			continue
		}
		kept = append(kept, it)
		if s.Plan != nil && s.Plan.Planned(it.Key()) {
			planned++
		} else {
			hashed++
		}
	}
	how := "every item by the hash of its key (no --plan)"
	if s.Plan != nil {
		how = fmt.Sprintf("%d planned, %d by the hash of their key (not in the plan)", planned, hashed)
	}
	r.printf("  shard %d/%d: %d of %d listed items: %s\n", s.Shard, s.Shards, len(kept), len(e.items), how)
	e.items = kept
}

// checkPlanPool warns when the plan was made for runners of another size: its
// balance and predicted wall clocks are not this runner's.
func (r *run) checkPlanPool(pool gpu.Pool) {
	if w := shard.PoolWarning(r.shard.Plan, r.o.Sharding.PlanFile, "this runner's pool", pool.IDs); w != "" {
		r.warn(w)
	}
}

// writeShardFiles writes a shard's listing and the plan it followed into its log
// dir, for merge.
func (r *run) writeShardFiles(e *expansion) error {
	if err := r.layout.WriteFile(r.layout.ListedTSV(), logdir.FormatItems(e.listed)); err != nil {
		return r.stateError(err)
	}
	if r.shard.Raw == nil {
		return nil
	}
	return r.stateError(r.layout.WriteFile(r.layout.PlanJSON(), r.shard.Raw))
}

func (r *run) shardRecord(suites []config.Suite) *record.ShardRun {
	if r.shard == nil {
		return nil
	}
	return r.shard.Record(suites)
}

// hasItems reports whether the suite has items in the queue (else no setup).
func hasItems(items []schedule.Item, s config.Suite) bool {
	for _, it := range items {
		if it.Label == s.Label {
			return true
		}
	}
	return false
}
