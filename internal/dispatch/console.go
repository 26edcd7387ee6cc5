package dispatch

import (
	"fmt"
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// line prints the console line of a finished attempt (docs/outcomes.md), ending
// with its outcome when the exit code alone does not say it (docs/outcomes.md); a
// multi-GPU item names its GPUs joined by ",":
//
//	[14:03:07] gpu1 t+1204s 260s rc=0 est=245s torch test_numerics.ck.amax+triton  [12/80 eta 21m]
//	[14:03:09] gpu2 t+1206s 0.2s rc=0 est=31s torch test_gemm.ck  [13/80 eta 20m] no-run
//	[14:09:30] gpu2,3 t+1210s 380s rc=0 est=360s torch-mgpu distributed.test_numerics  [14/80 eta 19m]
func (d *dispatcher) line(a Attempt, t0 time.Time) {
	it := d.items[a.Item]
	est := "unknown"
	if it.Known {
		est = textfmt.Dur(it.Weight)
	}
	d.mu.Lock()
	delete(d.running, a.Item)
	d.done++
	done, total := d.done, d.total
	eta := d.eta(a.End)
	d.mu.Unlock()
	tag := textfmt.Printable(it.Tag)
	if it.Tag == "" {
		tag = "(whole)"
	}
	s := fmt.Sprintf("[%s] gpu%s t+%s %s rc=%d est=%s %s %s  [%d/%d%s]",
		a.End.Format("15:04:05"), a.GPU, textfmt.Dur(a.Start.Sub(t0).Seconds()), textfmt.Dur(a.Seconds()), a.RC, est,
		it.Label, tag, done, total, eta)
	// The exit code says ok or failed; any other outcome is named.
	if a.Outcome != outcome.OK && a.Outcome != outcome.Failed {
		s += " " + string(a.Outcome)
	}
	d.consoleM.Lock()
	fmt.Fprintln(d.cfg.Console, s)
	d.consoleM.Unlock()
}

// eta estimates the time left from the weights: the known GPU-seconds not yet done
// spread over the GPUs. Unknown items are counted, not guessed. Caller holds d.mu.
func (d *dispatcher) eta(now time.Time) string {
	work := 0.0
	unknown := 0
	for item, r := range d.running {
		it := d.items[item]
		if !it.Known {
			unknown++
			continue
		}
		work += float64(r.width) * max(0, it.Weight-now.Sub(r.start).Seconds())
	}
	work += d.queuedWork
	unknown += d.queuedUnknown
	left := textfmt.Dur(max(0, work/float64(len(d.cfg.GPUs))))
	s := " eta " + left
	if unknown > 0 {
		s = fmt.Sprintf(" eta ≥%s +%d unknown", left, unknown)
	}
	return s
}
