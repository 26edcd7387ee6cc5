package record

import (
	"strconv"
	"strings"
	"time"
)

// ShardRun is what run.json records of a shard run: which shard of which plan it
// ran. Its listing (every item it listed, before keeping its shard's) is
// queue/listed.tsv; the plan it followed is copied to queue/plan.json.
type ShardRun struct {
	Shard  int `json:"shard"`  // 1 … Shards
	Shards int `json:"shards"` // K
	// Plan is the plan file's identity; nil when the run had no plan (every item
	// went by the hash of its key).
	Plan *PlanRef `json:"plan,omitempty"`
	// JUnit are the merged JUnit files the shard wrote, relative to its log dir
	// (slash-separated), so that merge finds them beside the downloaded log dir.
	JUnit []string `json:"junit,omitempty"`
	// Config is the SHA-256 of the suites the run read (their labels, log
	// files, modes, options, commands and arguments): shards of one matrix run one
	// config. "" in log dirs written before it.
	Config string `json:"config_sha256,omitempty"`
}

// PlanRef identifies a plan file.
type PlanRef struct {
	File   string `json:"file"`   // as the run was given it
	SHA256 string `json:"sha256"` // of its bytes: shards of one matrix share it
	// Weights is the SHA-256 of the weight table the plan was made from.
	Weights string `json:"weights_sha256,omitempty"`
}

// Merge is what run.json records of a merged run: the shards it merged, each
// with its figures, so that a rebuild of the report needs nothing else.
type Merge struct {
	Shards int      `json:"shards"`
	Plan   *PlanRef `json:"plan,omitempty"`
	// Parts has one entry per shard, 1 … Shards, reported or not.
	Parts []MergedShard `json:"parts"`
	// Advice is what one more runner would buy, predicted on the merged run's
	// measured durations (shard.Advice).
	Advice string `json:"advice,omitempty"`
	// NotListed counts the planned items that no reporting shard listed (a
	// capability probe of the hosts skips them): they are not "never ran".
	NotListed int `json:"planned_not_listed,omitempty"`
	// Unclaimed are the items a reporting shard listed whose own shard (by the
	// plan, else the hash of the key) reported without listing them, so that no
	// shard ran them (hosts or configs that list differently): each fails, never ran.
	Unclaimed []Unclaimed `json:"unclaimed,omitempty"`
	// Carried are the items the re-run of a shard did not run again, with their
	// latest outcome (Rerun.Carried): each counts as that outcome, teaches nothing.
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
	// GPUs are its own ids; in the merged files they are "s<shard>:<id>"
	// (ShardGPU).
	GPUs      []string  `json:"gpus,omitempty"`
	Started   time.Time `json:"started,omitempty"`
	Items     int       `json:"items"`
	Work      float64   `json:"work_seconds"`
	Wall      float64   `json:"wall_seconds"`
	Bound     float64   `json:"bound_seconds"`                 // max(its work/GPUs, its longest item)
	Predicted float64   `json:"predicted_wall_seconds"`        // the plan's, 0 without a plan
	Cancelled bool      `json:"cancelled,omitempty"`           // the shard's run was cancelled
	Finished  bool      `json:"finished"`                      // the shard's phases 5–8 ran
	Stop      *Stop     `json:"stop,omitempty"`                // why it stopped early, or never reported
	Retries   int       `json:"retries,omitempty"`             // its bad-day policy
	Flaky     bool      `json:"flaky_is_failure,omitempty"`    // its bad-day policy
	Timeout   float64   `json:"item_timeout_factor,omitempty"` // its bad-day policy
}

// ShardGPU is how a merged run names the GPU id of shard s: "s2:0". The shard goes
// in the gpu column of timings.tsv, so that TE's nine columns stay nine and a
// rebuilt report draws one lane per shard and GPU (docs/runners.md). A
// multi-GPU attempt's ids ("2,3") are each named so: "s2:2,s2:3".
func ShardGPU(s int, id string) string {
	parts := strings.Split(id, ",")
	for i, p := range parts {
		parts[i] = "s" + strconv.Itoa(s) + ":" + p
	}
	return strings.Join(parts, ",")
}

// SplitShardGPU reads a ShardGPU name back; ok is false for any other GPU id (one
// that names no shard, or ids of two shards).
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

// GPUName is how the console, the verdict notes and the warnings name the GPU(s)
// of a gpu column: a run's own ids as "gpu1" (a multi-GPU attempt's "gpu2,3"); a
// merged run's as their column says, "s2:1" (shard 2's GPU 1; "s2:2,s2:3"), so
// that every place names a shard's GPU alike (docs/files.md, "Merged runs").
func GPUName(g string) string {
	if _, _, ok := SplitShardGPU(g); ok {
		return g
	}
	return "gpu" + g
}
