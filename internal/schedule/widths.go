package schedule

import (
	"errors"
	"fmt"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// FitWidths is the one rule run and plan fit items to a pool of gpus GPUs by: a
// declared width above the pool is clamped with a warning, a sized one (adapter.Sized)
// refused, as TE's tests skip what needs more GPUs (docs/config.md "Mode options").
func FitWidths[E any, P Elem[E]](plan []E, suites map[string]config.Suite, sized func(E) bool, gpus int,
	face optname.Face) (warns []string, err error) {
	var errs []error
	refused, clamped := 0, 0
	bySuite := map[string]int{} // label → items clamped by its gpus=
	var labels []string         // those suites, in the order of their first item
	for i := range plan {
		it := P(&plan[i]).item()
		if it.Width() <= gpus {
			continue
		}
		s := suites[it.Label]
		if !sized(plan[i]) {
			width := it.Width()
			it.GPUs, it.AllGPUs = gpus, false
			if width == s.Options.GPUs {
				if bySuite[s.Label]++; bySuite[s.Label] == 1 {
					labels = append(labels, s.Label)
				}
			} else if clamped++; clamped <= 5 {
				warns = append(warns, fmt.Sprintf("item %s declares %d GPUs (its listing line) but the pool has %d: it runs on %d, so cases "+
					"that need more skip", textfmt.Printable(it.Key()), width, gpus, gpus))
			}
			continue
		}
		if refused++; refused > 5 {
			continue
		}
		errs = append(errs, fmt.Errorf("item %s needs %d GPUs but the pool has %d (its own metadata asks for %d (a ctest test's "+
			"RESOURCE_GROUPS)): lower its count, or run on more GPUs (%s)",
			textfmt.Printable(it.Key()), it.Width(), gpus, it.Width(), face.Name("gpus")))
	}
	if clamped > 5 {
		warns = append(warns, fmt.Sprintf("and %d more item(s) declared wider than the pool run on %d GPUs", clamped-5, gpus))
	}
	for _, l := range labels {
		s := suites[l]
		warns = append(warns, fmt.Sprintf("suite %q says gpus=%d at %s but the pool has %d: its %s run on %d, so cases that need more skip",
			s.Label, s.Options.GPUs, s.Where(), gpus, textfmt.Count(bySuite[l], "item"), gpus))
	}
	if refused > 5 {
		errs = append(errs, fmt.Errorf("and %d more item(s) wider than the pool", refused-5))
	}
	return warns, errors.Join(errs...)
}
