package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Spec is what --shard I/K [--plan FILE] asks of a run (docs/runners.md); Shards 0 is no shard.
// A shard learns nothing: merge learns once from every shard's rows.
type Spec struct {
	Shard, Shards int
	PlanFile      string
}

// Job is a run's shard, as Spec.Read found it.
type Job struct {
	Shard, Shards int
	Plan          *Plan  // nil: every item by HashShard
	Raw           []byte // the plan file, copied into the log dir
	Ref           *record.PlanRef
}

// Of is the shard of the item of this key; a shard run and merge both place items by this one method.
func (j *Job) Of(key string) int {
	if j.Plan != nil {
		return j.Plan.ShardOf(key)
	}
	return HashShard(key, j.Shards)
}

// Read checks the spec and reads its plan in phase 0, so a bad plan stops the run before anything
// runs; nil for no shard.
func (s Spec) Read(face optname.Face) (*Job, error) {
	switch {
	case s.Shards == 0 && s.PlanFile != "":
		return nil, fmt.Errorf("%s without %s: say which shard of the plan this job runs, e.g. %s",
			face.Given("plan", s.PlanFile), face.Name("shard"), face.Set("shard", "1/K"))
	case s.Shards == 0:
		return nil, nil
	case s.Shard < 1 || s.Shard > s.Shards || s.Shards > MaxShards:
		return nil, fmt.Errorf("%s: want I/K with 1 ≤ I ≤ K ≤ %d",
			face.Given("shard", fmt.Sprintf("%d/%d", s.Shard, s.Shards)), MaxShards)
	}
	j := &Job{Shard: s.Shard, Shards: s.Shards}
	if s.PlanFile == "" {
		return j, nil
	}
	data, err := safefs.ReadFile(s.PlanFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", face.Name("plan"), err)
	}
	p, err := Read(bytes.NewReader(data), s.PlanFile)
	if err != nil {
		return nil, err
	}
	if len(p.Shards) != s.Shards {
		return nil, fmt.Errorf("%s: plan %s splits the items over %d shards; give %s (the matrix of the plan job's output)",
			face.Given("shard", fmt.Sprintf("%d/%d", s.Shard, s.Shards)), s.PlanFile, len(p.Shards),
			face.Set("shard", fmt.Sprintf("I/%d", len(p.Shards))))
	}
	sum := sha256.Sum256(data)
	j.Plan, j.Raw = p, data
	j.Ref = &record.PlanRef{File: s.PlanFile, SHA256: hex.EncodeToString(sum[:]), Weights: p.Weights.SHA256}
	return j, nil
}

// Record is run.json's "shard" of a run of suites.
func (j *Job) Record(suites []config.Suite) *record.ShardRun {
	return &record.ShardRun{Shard: j.Shard, Shards: j.Shards, Plan: j.Ref, Config: ConfigDigest(suites)}
}

// PoolWarning warns when a plan's GPUs per shard differ from the pool ids; "" when they agree or there is no plan.
func PoolWarning(p *Plan, file, whose string, ids []string) string {
	if p == nil || p.GPUs == len(ids) {
		return ""
	}
	return fmt.Sprintf("plan %s was made for %d GPUs per shard, but %s has %d GPU(s) (%s): the shards are balanced, "+
		"and their wall clocks predicted, for another runner; "+
		"make the plan with sgpu-queue plan --gpus %d (the action: mode plan, input gpus)",
		textfmt.Printable(file), p.GPUs, whose, len(ids), strings.Join(ids, ","), len(ids))
}

// ConfigDigest hashes the suites without File, Line and Path, which differ between checkouts of one commit.
func ConfigDigest(suites []config.Suite) string {
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
