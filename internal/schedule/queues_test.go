package schedule

import "fmt"

// NewQueue is the queue of the named policy over single-GPU items for slots GPUs,
// as NewSetup plans it.
func NewQueue(policy string, items []Item, slots int) (Queue, error) {
	s, err := NewSetup(policy, items, slots)
	if err != nil {
		return nil, err
	}
	return s.queue(nil), nil
}

// NewPlanned is the planned queue: NewPlan(items, slots).Queue(items).
func NewPlanned(items []Item, slots int) Queue {
	return NewPlan(items, slots).Queue(items)
}

// Queue is a fresh queue that follows p on the weights as they are.
func (p Plan) Queue(items []Item) Queue { return p.queue(items, nil) }

// NewLPT is LPT's queue over items, calibrated by cal (nil: exactly NewPull(LPTOrder(items))).
func NewLPT(items []Item, cal *Calibration) Queue {
	return newMerge(items, LPTOrder(items), cal, nil)
}

// BoundOf is the lower bound of durations of single-GPU items on n GPUs.
func BoundOf(durations []float64, n int) float64 { return BoundOfWidths(durations, nil, n) }

// Timeline is one replayed run.
type Timeline struct {
	Wall  float64   // when the last item ended
	Busy  []float64 // by slot: seconds spent running items
	Slot  []int     // by item: the slot that ran it
	Start []float64 // by item: when it started
}

// Replay is the planner's replay of q, its timeline recorded; an item handed out
// twice or out of range is an error: the queue is broken.
func Replay(q Queue, dur []float64, slots int) (*Timeline, error) {
	t := &Timeline{Busy: make([]float64, max(slots, 0)), Slot: make([]int, len(dur)), Start: make([]float64, len(dur))}
	for i := range t.Slot {
		t.Slot[i] = -1
	}
	wall, err := replay(q, dur, slots, func(slot, item int, at float64) error {
		if item < 0 || item >= len(dur) {
			return fmt.Errorf("the queue handed out item %d of %d", item, len(dur))
		}
		if t.Slot[item] >= 0 {
			return fmt.Errorf("the queue handed out item %d twice", item)
		}
		t.Slot[item], t.Start[item] = slot, at
		t.Busy[slot] += dur[item]
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.Wall = wall
	return t, nil
}
