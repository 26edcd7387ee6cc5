package record

import (
	"strconv"
	"strings"
	"time"
)

// ShardRun is what run.json records of a shard run; its listing is queue/listed.tsv, its plan queue/plan.json.
type ShardRun struct {
	Shard  int `json:"shard"`  // 1 … Shards
	Shards int `json:"shards"` // K
	// Plan is the plan file's identity; nil when every item went by hash.
	Plan *PlanRef `json:"plan,omitempty"`
	// JUnit are the shard's merged JUnit files, relative to its log dir, for merge to find.
	JUnit []string `json:"junit,omitempty"`
	// Config is the SHA-256 of the suites the run read: shards of one matrix run one config. "" in older log dirs.
	Config string `json:"config_sha256,omitempty"`
}

// PlanRef identifies a plan file.
type PlanRef struct {
	File   string `json:"file"`   // as the run was given it
	SHA256 string `json:"sha256"` // of its bytes: shards of one matrix share it
	// Weights is the SHA-256 of the weight table the plan was made from.
	Weights string `json:"weights_sha256,omitempty"`
}

// Merge is what run.json records of a merged run, so a report rebuild needs nothing else.
type Merge struct {
	Shards int      `json:"shards"`
	Plan   *PlanRef `json:"plan,omitempty"`
	// Parts has one entry per shard, 1 … Shards, reported or not.
	Parts []MergedShard `json:"parts"`
	// Advice is what one more runner would buy (shard.Advice).
	Advice string `json:"advice,omitempty"`
	// NotListed counts planned items no reporting shard listed (a host's capability probe skips them): not "never ran".
	NotListed int `json:"planned_not_listed,omitempty"`
	// Unclaimed are items another shard listed whose own shard did not, so none ran them: each fails, never ran.
	Unclaimed []Unclaimed `json:"unclaimed,omitempty"`
	// Carried are the items a shard's re-run did not run again: each counts as its latest outcome and teaches nothing.
	Carried []Carried `json:"carried,omitempty"`
}

// Unclaimed is an item listed by some shards and run by none (Merge.Unclaimed).
type Unclaimed struct {
	ItemID
	Shard    int   `json:"shard"`     // its own shard, which did not list it
	ListedBy []int `json:"listed_by"` // the shards whose listing has it
}

// MergedShard is one shard of a merged run.
type MergedShard struct {
	Shard    int    `json:"shard"`
	Reported bool   `json:"reported"`          // its log dir was merged
	LogDir   string `json:"log_dir,omitempty"` // as merge was given it
	// GPUs are its own ids; merged files name them "s<shard>:<id>".
	GPUs      []string  `json:"gpus,omitempty"`
	Started   time.Time `json:"started,omitempty"`
	Items     int       `json:"items"`
	Work      float64   `json:"work_seconds"`
	Wall      float64   `json:"wall_seconds"`
	Bound     float64   `json:"bound_seconds"`          // max(its work/GPUs, its longest item)
	Predicted float64   `json:"predicted_wall_seconds"` // the plan's, 0 without a plan
	Cancelled bool      `json:"cancelled,omitempty"`    // the shard's run was cancelled
	Finished  bool      `json:"finished"`               // the shard's phases 5–8 ran
	Stop      *Stop     `json:"stop,omitempty"`         // why it stopped early, or never reported
	BadDay              // its bad-day policies
}

// ShardGPU is shard s's GPU id in a merged run, "s2:0": in timings.tsv's gpu column, so TE's nine columns stay
// nine (docs/runners.md). Multi-GPU ids are each named so.
func ShardGPU(s int, id string) string {
	parts := strings.Split(id, ",")
	for i, p := range parts {
		parts[i] = "s" + strconv.Itoa(s) + ":" + p
	}
	return strings.Join(parts, ",")
}

// SplitShardGPU reads a ShardGPU name back; false for any other GPU id.
func SplitShardGPU(g string) (shard int, id string, ok bool) {
	parts := strings.Split(g, ",")
	for i, p := range parts {
		rest, found := strings.CutPrefix(p, "s")
		num, one, found2 := strings.Cut(rest, ":")
		if !found || !found2 {
			return 0, "", false
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || strconv.Itoa(n) != num || i > 0 && n != shard {
			return 0, "", false
		}
		shard, parts[i] = n, one
	}
	return shard, strings.Join(parts, ","), true
}

// GPUName is how messages name a gpu column's GPUs: "gpu1", "gpu2,3", or a merged run's "s2:1"
// (docs/files.md, "Merged runs").
func GPUName(g string) string {
	if _, _, ok := SplitShardGPU(g); ok {
		return g
	}
	return "gpu" + g
}
