package schedule

import "fmt"

// Timeline is one replayed run.
type Timeline struct {
	Wall  float64   // when the last item ended
	Busy  []float64 // by slot: seconds spent running items
	Slot  []int     // by item: the slot that ran it
	Start []float64 // by item: when it started
}

// Replay drives q on slots GPUs in virtual time exactly as the dispatcher drives it
// (every idle slot, in turn, asks q.Next(slot); an item's end frees its slot; when
// nothing runs and every idle slot was refused, one Next(AnySlot)) until q is
// empty. dur[i] is how long item i takes. An item handed out twice, an index out of
// range or a queue that stalls is an error: the queue is broken. The planner's
// own check uses it (replay), so the plan predicts what run does; the simulator
// drives a Queue the same way through OnSlots and ReplayBlocks.
func Replay(q Queue, dur []float64, slots int) (*Timeline, error) {
	t := &Timeline{Busy: make([]float64, max(slots, 0)), Slot: make([]int, len(dur)), Start: make([]float64, len(dur))}
	for i := range t.Slot {
		t.Slot[i] = -1
	}
	wall, err := replay(q, dur, slots, t)
	if err != nil {
		return nil, err
	}
	t.Wall = wall
	return t, nil
}

// replay is Replay; with t nil it only returns the wall clock and trusts q.
func replay(q Queue, dur []float64, slots int, t *Timeline) (float64, error) {
	if slots < 1 {
		return 0, fmt.Errorf("%d GPUs: want at least 1", slots)
	}
	idle := make([]int, slots, 2*slots)
	for i := range idle {
		idle[i] = i
	}
	still := make([]int, 0, slots)
	run := make(endHeap, 0, slots)
	seq, now := 0, 0.0
	start := func(slot, item int) error {
		if t != nil {
			if item < 0 || item >= len(dur) {
				return fmt.Errorf("the queue handed out item %d of %d", item, len(dur))
			}
			if t.Slot[item] >= 0 {
				return fmt.Errorf("the queue handed out item %d twice", item)
			}
			t.Slot[item], t.Start[item] = slot, now
			t.Busy[slot] += dur[item]
		}
		run.push(end{at: now + dur[item], seq: seq, slot: slot})
		seq++
		return nil
	}
	for {
		still = still[:0]
		for _, slot := range idle {
			item, ok := q.Next(slot)
			if !ok {
				still = append(still, slot)
				continue
			}
			if err := start(slot, item); err != nil {
				return 0, err
			}
		}
		idle, still = still, idle
		if len(run) == 0 && len(idle) > 0 && q.Len() > 0 {
			item, ok := q.Next(AnySlot)
			if !ok {
				return 0, fmt.Errorf("the queue holds %d items but hands none out", q.Len())
			}
			if err := start(idle[0], item); err != nil {
				return 0, err
			}
			idle = idle[1:]
		}
		if len(run) == 0 {
			return now, nil
		}
		e := run.pop()
		now = e.at
		idle = append(idle, e.slot)
	}
}

// end is a running item's end. Ends at the same instant are taken in the order the
// items started (the real dispatcher sees them in whatever order they land).
type end struct {
	at   float64
	seq  int
	slot int
}

// endHeap is a min-heap on (at, seq), one entry per busy slot.
type endHeap []end

func (h endHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *endHeap) push(e end) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *endHeap) pop() end {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}
