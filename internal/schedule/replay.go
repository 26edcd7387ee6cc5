package schedule

import "fmt"

// replay drives q on slots GPUs in virtual time as the dispatcher drives it and
// returns the wall clock; started, when not nil, is told of each start. The planner's
// check uses it rather than ReplayBlocks, which costs it 3× the time and 5× the memory.
func replay(q Queue, dur []float64, slots int, started func(slot, item int, at float64) error) (float64, error) {
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
		if started != nil {
			if err := started(slot, item, now); err != nil {
				return err
			}
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
