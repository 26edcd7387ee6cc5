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

// For is the deadline of an item, 0 for none. factor is its suite's calibration
// (schedule.Calibration: the run's items of the suite took factor × their
// weights); the deadline grows with a factor above 1 and never shrinks with one
// below: a killed item that would have passed costs more than a hang found late.
// An item without a weight of the table (a prior estimate is a guess) gets Max.
func (t Timeout) For(it schedule.Item, factor float64) time.Duration {
	if t.Factor <= 0 {
		return 0
	}
	if !it.Known {
		return t.Max
	}
	d := time.Duration(t.Factor * it.Weight * max(factor, 1) * float64(time.Second))
	if d < t.Min {
		d = t.Min
	}
	if t.Max > 0 && d > t.Max {
		d = t.Max
	}
	return d
}

// Explain says where an item's deadline came from, for its log.
func (t Timeout) Explain(it schedule.Item, factor float64) string {
	if !it.Known {
		return "no learned weight: the item-timeout-max"
	}
	bounds := fmt.Sprintf("within [%s, %s]", t.Min, t.Max)
	if t.Max <= 0 {
		bounds = fmt.Sprintf("at least %s, no maximum", t.Min)
	}
	if factor > 1 {
		return fmt.Sprintf("%g × its learned weight %.1fs × %.2f (its suite runs %.2f × its weights this run), %s", t.Factor, it.Weight,
			factor, factor, bounds)
	}
	return fmt.Sprintf("%g × its learned weight %.1fs, %s", t.Factor, it.Weight, bounds)
}
