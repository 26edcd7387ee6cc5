package record

import (
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/outcome"
)

// QueueRow is one line of queue/queue.tsv: an item in dispatch order.
type QueueRow struct {
	ItemID
	Weight float64 // the estimate it was ordered by (the default weight when unknown)
	Cmd    string
	Args   []string
}

// Attempt is one ended attempt of an item as phase 4 decided it: one row of queue/attempts.tsv (docs/files.md).
type Attempt struct {
	ItemID
	// GPUs are its GPU ids in pool order; Shard is, in a merged run, the shard that ran it, else 0.
	GPUs     []string
	Shard    int
	Secs     float64
	RC       int
	StartOff float64 // seconds from the start of phase 4 (in a merged run, its shard's)
	EndOff   float64
	// Estimate is the weight it was dispatched with, when Known.
	Estimate float64
	Known    bool
	Outcome  outcome.Outcome
}

// GPUNames are its GPUs as the run names them, a shard's as "s2:0" (ShardGPU).
func (a Attempt) GPUNames() []string {
	if a.Shard == 0 {
		return a.GPUs
	}
	names := make([]string, len(a.GPUs))
	for i, id := range a.GPUs {
		names[i] = ShardGPU(a.Shard, id)
	}
	return names
}

// GPU is TE's gpu column: its GPUNames joined by "," ("2,3", "s2:2,s2:3").
func (a Attempt) GPU() string { return strings.Join(a.GPUNames(), ",") }

// GPUSeconds is the attempt's GPU time: its seconds on each of its GPUs.
func (a Attempt) GPUSeconds() float64 { return float64(len(a.GPUs)) * a.Secs }

// Rounded is the attempt as the files hold it, so in-memory decisions equal a rebuild's.
func (a Attempt) Rounded() Attempt {
	r := func(v float64) float64 {
		// What the file keeps: three decimals (logdir.Secs trims only zeros).
		back, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 3, 64), 64)
		return back
	}
	a.Secs, a.StartOff, a.EndOff, a.Estimate = r(a.Secs), r(a.StartOff), r(a.EndOff), r(a.Estimate)
	return a
}
