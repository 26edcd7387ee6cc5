package weights

import (
	"sort"

	"github.com/rocm/sgpu-queue/internal/record"

	"github.com/rocm/sgpu-queue/internal/outcome"
)

// The asymmetric EWMA (docs/weights.md): slower is believed quickly, as an under-estimate makes the tail;
// faster slowly, as one fast run is probably noise.
const (
	AlphaUp   = 0.5
	AlphaDown = 0.1
)

// Measurement is one finished item of this run.
type Measurement struct {
	Key     string
	Seconds float64
	// AtLeast marks an attempt stopped before its end: the item costs at least Seconds.
	AtLeast bool
}

// Measure is what one attempt of key teaches by its outcome (docs/outcomes.md); a no-run teaches nothing (ok false).
func Measure(key string, seconds float64, o outcome.Outcome) (m Measurement, ok bool) {
	if !o.Teaches() {
		return Measurement{}, false
	}
	return Measurement{Key: key, Seconds: seconds, AtLeast: o.AtLeast()}, true
}

// Change records what Learn did to one key.
type Change struct {
	Key    string
	Old    float64
	HadOld bool
	New    float64
	// Kept is true when the key was not changed.
	Kept bool
}

// Learn blends this run's measurements into t in order (docs/weights.md) and returns a Change per key, in key order.
func Learn(t *Table, ms []Measurement) []Change {
	byKey := map[string]*Change{}
	var order []string
	for _, m := range ms {
		c, ok := byKey[m.Key]
		if !ok {
			old, had := t.Get(m.Key)
			c = &Change{Key: m.Key, Old: old, HadOld: had, Kept: true}
			byKey[m.Key] = c
			order = append(order, m.Key)
		}
		cur, had := t.Get(m.Key)
		next, changed := Update(cur, had, m)
		if changed {
			t.Set(m.Key, next)
			c.Kept = false
		}
	}
	sort.Strings(order)
	out := make([]Change, 0, len(order))
	for _, k := range order {
		c := byKey[k]
		c.New, _ = t.Get(k)
		out = append(out, *c)
	}
	return out
}

// Update applies one measurement to a weight; false when the table keeps what it had.
func Update(old float64, had bool, m Measurement) (float64, bool) {
	if m.AtLeast {
		if had && m.Seconds > old {
			return m.Seconds, true
		}
		return old, false
	}
	if !had {
		return m.Seconds, true
	}
	if m.Seconds > old {
		return old + AlphaUp*(m.Seconds-old), true
	}
	return old + AlphaDown*(m.Seconds-old), m.Seconds != old
}

// Census is each list suite's listed keys; a label mapped to nil had a failed census and prunes nothing.
type Census map[string]map[string]bool

// Prune removes and returns, sorted, the keys neither dispatched this run nor listed by a census that succeeded.
func Prune(t *Table, dispatched map[string]bool, census Census) []string {
	var gone []string
	for k := range t.w {
		if dispatched[k] {
			continue
		}
		keys, has := census[record.ParseItemID(k).Label]
		if !has || keys == nil || keys[k] {
			continue
		}
		gone = append(gone, k)
	}
	sort.Strings(gone)
	for _, k := range gone {
		t.Delete(k)
	}
	return gone
}
