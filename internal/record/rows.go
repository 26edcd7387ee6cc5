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

// Timing is one line of queue/timings.tsv: one finished attempt of an item.
type Timing struct {
	Label    string
	Item     string // the tag, or "whole" for an opaque item
	GPU      string
	Secs     float64
	RC       int
	StartOff float64 // seconds from the start of phase 4
	EndOff   float64
	Est      string // the estimate in seconds, or "unknown"
	// Incomplete is TE's column: 1 when the duration is not a full measurement
	// (outcome.Outcome.Incomplete), so TE's own readers learn nothing from it.
	Incomplete bool
	// Outcome is how the attempt ended. It is not one of the nine columns: it
	// lives in queue/outcomes.tsv beside them (docs/outcomes.md says why), and
	// Load joins it back; "" when none was recorded (see Run.OutcomeOf).
	Outcome outcome.Outcome
}

// GPUs are the ids of the GPUs the attempt ran on: the gpu column holds a
// multi-GPU item's ids joined by "," ("2,3").
func (t Timing) GPUs() []string { return strings.Split(t.GPU, ",") }

// GPUSeconds is the attempt's GPU time: its seconds on each of its GPUs.
func (t Timing) GPUSeconds() float64 { return float64(len(t.GPUs())) * t.Secs }

// Rounded is the row as timings.tsv holds it (seconds to the millisecond), so what
// is decided from a row in memory equals what a rebuild from the file decides.
func (t Timing) Rounded() Timing {
	r := func(v float64) float64 {
		// What the file keeps: three decimals (logdir.Secs trims only zeros).
		back, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 3, 64), 64)
		return back
	}
	t.Secs, t.StartOff, t.EndOff = r(t.Secs), r(t.StartOff), r(t.EndOff)
	return t
}
