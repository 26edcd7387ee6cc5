package dispatch

import (
	"fmt"
	"time"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Timeout is the opt-in hang deadline: an item running longer than
// max(Min, Factor × its weight), capped at Max, is killed and recorded with rc 124.
// An unknown item gets Max (no deadline when Max is zero). The suites' own timeouts
// stay in force; this one only stops a hung GPU from eating the job's whole budget.
type Timeout struct {
	Factor float64
	Min    time.Duration
	Max    time.Duration
}

// For is the deadline of an item, 0 for none.
func (t Timeout) For(it schedule.Item) time.Duration {
	if t.Factor <= 0 {
		return 0
	}
	if !it.Known {
		return t.Max
	}
	d := time.Duration(t.Factor * it.Weight * float64(time.Second))
	if d < t.Min {
		d = t.Min
	}
	if t.Max > 0 && d > t.Max {
		d = t.Max
	}
	return d
}

// Explain says where an item's deadline came from, for its log.
func (t Timeout) Explain(it schedule.Item) string {
	if !it.Known {
		return "no learned weight: the item-timeout-max"
	}
	bounds := fmt.Sprintf("within [%s, %s]", t.Min, t.Max)
	if t.Max <= 0 {
		bounds = fmt.Sprintf("at least %s, no maximum", t.Min)
	}
	return fmt.Sprintf("%g × its learned weight %.1fs, %s", t.Factor, it.Weight, bounds)
}
