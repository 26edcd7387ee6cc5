package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// sharding is what --shard I/K [--plan FILE] gives a run (docs/runners.md):
// it runs the items the plan gives shard I, and every item the plan does not know
// (or every item, without a plan) by the hash of its key.
type sharding struct {
	shard, shards int
	plan          *shard.Plan // nil: every item by shard.HashShard
	raw           []byte      // the plan file, copied into the log dir
	ref           *record.PlanRef
}

// of is the shard of the item of this key, by the rule merge uses too.
func (s *sharding) of(key string) int { return shard.Of(s.plan, key, s.shards) }

// readSharding checks --shard and reads --plan, in phase 0: a plan that cannot be
// read, or that is not of K shards, stops the run before anything runs.
func (r *run) readSharding() error {
	o := r.o
	switch {
	case o.Shards == 0 && o.PlanFile != "":
		return fmt.Errorf("%s without %s: say which shard of the plan this job runs, e.g. %s",
			o.Face.Given("plan", o.PlanFile), o.Face.Name("shard"), o.Face.Set("shard", "1/K"))
	case o.Shards == 0:
		return nil
	case o.Shard < 1 || o.Shard > o.Shards || o.Shards > shard.MaxShards:
		return fmt.Errorf("%s: want I/K with 1 ≤ I ≤ K ≤ %d",
			o.Face.Given("shard", fmt.Sprintf("%d/%d", o.Shard, o.Shards)), shard.MaxShards)
	}
	s := &sharding{shard: o.Shard, shards: o.Shards}
	if o.PlanFile != "" {
		data, err := safefs.ReadFile(o.PlanFile)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Face.Name("plan"), err)
		}
		p, err := shard.Read(bytes.NewReader(data), o.PlanFile)
		if err != nil {
			return err
		}
		if len(p.Shards) != o.Shards {
			return fmt.Errorf("%s: plan %s splits the items over %d shards; give %s (the matrix of the plan job's output)",
				o.Face.Given("shard", fmt.Sprintf("%d/%d", o.Shard, o.Shards)), o.PlanFile, len(p.Shards),
				o.Face.Set("shard", fmt.Sprintf("I/%d", len(p.Shards))))
		}
		sum := sha256.Sum256(data)
		s.plan, s.raw = p, data
		s.ref = &record.PlanRef{File: o.PlanFile, SHA256: hex.EncodeToString(sum[:]), Weights: p.Weights.SHA256}
	}
	r.shard = s
	return nil
}

// keepShard is the shard's step after phase 1: of the items listed, it keeps the
// ones of its shard; the listing itself is kept for the log dir (queue/listed.tsv),
// so that merge can tell an item this host never listed from one that never ran.
func (r *run) keepShard(e *expansion) {
	s := r.shard
	e.listed = make([]record.ItemID, len(e.items))
	var kept []schedule.Item
	planned, hashed := 0, 0
	for i, it := range e.items {
		e.listed[i] = it.ItemID
		if s.of(it.Key()) != s.shard {
			continue
		}
		kept = append(kept, it)
		if s.plan != nil && s.plan.Planned(it.Key()) {
			planned++
		} else {
			hashed++
		}
	}
	how := "every item by the hash of its key (no --plan)"
	if s.plan != nil {
		how = fmt.Sprintf("%d planned, %d by the hash of their key (not in the plan)", planned, hashed)
	}
	r.printf("  shard %d/%d: %d of %d listed items: %s\n", s.shard, s.shards, len(kept), len(e.items), how)
	e.items = kept
}

// checkPlanPool warns when the plan was made for runners of another size than
// this one: the shard still runs its items, but the plan's balance and predicted
// wall clocks are not this runner's.
func (r *run) checkPlanPool(pool gpu.Pool) {
	if w := planPoolWarning(r.shard.plan, r.o.PlanFile, "this runner's pool", pool.IDs); w != "" {
		r.warn(w)
	}
}

// planPoolWarning is the warning for a plan of p.GPUs GPUs per shard run on the
// pool ids (whose: "this runner's pool"); "" when they agree or there is no plan.
func planPoolWarning(p *shard.Plan, file, whose string, ids []string) string {
	if p == nil || p.GPUs == len(ids) {
		return ""
	}
	return fmt.Sprintf("plan %s was made for %d GPUs per shard, but %s has %d GPU(s) (%s): the shards are balanced, "+
		"and their wall clocks predicted, for another runner; "+
		"make the plan with sgpu-queue plan --gpus %d (the action: mode plan, input gpus)",
		textfmt.Printable(file), p.GPUs, whose, len(ids), strings.Join(ids, ","), len(ids))
}

// writeShardFiles writes a shard's listing and the plan it followed into its log
// dir, for merge.
func (r *run) writeShardFiles(e *expansion) error {
	if err := r.layout.WriteFile(r.layout.ListedTSV(), logdir.FormatItems(e.listed)); err != nil {
		return r.stateError(err)
	}
	if r.shard.raw == nil {
		return nil
	}
	return r.stateError(r.layout.WriteFile(r.layout.PlanJSON(), r.shard.raw))
}

// shardRecord is run.json's "shard".
func (r *run) shardRecord(suites []config.Suite) *record.ShardRun {
	if r.shard == nil {
		return nil
	}
	return &record.ShardRun{Shard: r.shard.shard, Shards: r.shard.shards, Plan: r.shard.ref, Config: configDigest(suites)}
}

// configDigest is the SHA-256 of what the suites say, without where their
// config file or repository lies (File, Line, Path differ between checkouts of
// one commit): merge refuses shards that ran different configs.
func configDigest(suites []config.Suite) string {
	type def struct {
		Label, LogFile, Mode, Command string
		Args                          []string
		Options                       config.Options
	}
	defs := make([]def, 0, len(suites))
	for _, s := range suites {
		defs = append(defs, def{s.Label, s.LogFile, string(s.Mode), s.Command, s.Args, s.Options})
	}
	data, err := json.Marshal(defs)
	if err != nil {
		return "" // plain strings and numbers: cannot happen; "" is "not recorded"
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// hasItems reports whether the suite has items in the queue (a shard may have none
// of a suite: its setup is then not needed).
func hasItems(items []schedule.Item, s config.Suite) bool {
	for _, it := range items {
		if it.Label == s.Label {
			return true
		}
	}
	return false
}

// recordJUnit puts the merged JUnit files the run wrote into its run.json, relative
// to its log dir: a shard's where merge finds them beside a downloaded log dir, any
// run's where the report reads each failed item's test cases.
func (r *run) recordJUnit(meta *record.Meta) {
	var rels []string
	for _, p := range r.res.JUnit {
		rel, err := filepath.Rel(r.o.LogDir, p)
		if err != nil {
			r.warn(fmt.Sprintf("JUnit file %s: %v; the report and merge will not find it", p, err))
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	if meta.Shard != nil {
		meta.Shard.JUnit = rels
	} else {
		meta.JUnit = rels
	}
	r.writeMeta(meta)
}
