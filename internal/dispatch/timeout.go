package dispatch

import (
	"fmt"
	"time"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Timeout is the opt-in hang deadline, max(Min, Factor × weight) capped at Max; it
// only stops a hung GPU from eating the job's budget, the suites' own stay in force.
type Timeout struct {
	Factor float64
	Min    time.Duration
	Max    time.Duration
}

// For is the deadline of an item, 0 for none. It grows with its suite's calibration
// factor, never shrinks: a killed item that would have passed costs more than a
// hang found late. An item without a table weight gets Max.
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
