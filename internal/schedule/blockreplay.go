package schedule

import (
	"fmt"
	"slices"
)

// BlockTimeline is one replayed run of a Scheduler.
type BlockTimeline struct {
	Wall  float64   // when the last item ended
	Busy  []float64 // by GPU: seconds spent running items
	GPUs  [][]int   // by item: the GPUs that ran it
	Start []float64 // by item: when it started
	// Holds lists every item GPUs were held for, in the order the holds began.
	Holds []HoldRecord
}

// HoldRecord is one item GPUs were held for.
type HoldRecord struct {
	Item  int
	Since float64 // when the hold began
	At    float64 // its reservation then, by the estimates (+Inf: none could be made)
	Start float64 // when the item started
	// Version is the calibration's (Calibration.Version) when the hold began;
	// Recalibrated says the estimates changed before the item started, which
	// moves a reservation as an overrun does.
	Version      int
	Recalibrated bool
	// Factors are the calibration's factors by suite (suites in the order of
	// first appearance) when the hold began; nil: the weights as they are.
	Factors []float64
}

// ReplayBlocks drives s on gpus GPUs in virtual time as the dispatcher drives it,
// item i taking dur[i] on width[i] GPUs (nil: one each). A GPU handed out twice, a
// wrong width, an item handed out twice or a stall is an error: s is broken.
func ReplayBlocks(s Scheduler, width []int, dur []float64, gpus int) (*BlockTimeline, error) {
	if gpus < 1 {
		return nil, fmt.Errorf("%d GPUs: want at least 1", gpus)
	}
	t := &BlockTimeline{Busy: make([]float64, gpus), GPUs: make([][]int, len(dur)), Start: make([]float64, len(dur))}
	free := make([]int, gpus)
	busy := make([]bool, gpus)
	for g := range free {
		free[g] = g
	}
	var running []Running
	ends := make(endHeap, 0, gpus)
	held := map[int]int{} // item → index in t.Holds, while held
	seq, now := 0, 0.0
	var factors []float64 // the calibration's, as of version
	version := -1
	noteHold := func() {
		if item, at, ok := s.Hold(); ok {
			if _, seen := held[item]; !seen {
				held[item] = len(t.Holds)
				if v := s.Calibration().Version(); v != version {
					factors, version = s.Calibration().snapshot(), v
				}
				t.Holds = append(t.Holds, HoldRecord{Item: item, Since: now, At: at, Start: -1, Version: version, Factors: factors})
			}
		}
	}
	for {
		for {
			item, g, ok := s.Next(now, free, running)
			noteHold()
			if !ok {
				break
			}
			if err := t.check(item, g, width, busy); err != nil {
				return nil, err
			}
			for _, x := range g {
				busy[x] = true
				t.Busy[x] += dur[item]
			}
			free = slices.DeleteFunc(free, func(x int) bool { return busy[x] })
			t.GPUs[item], t.Start[item] = g, now
			if k, ok := held[item]; ok {
				t.Holds[k].Start = now
				t.Holds[k].Recalibrated = s.Calibration().Version() != t.Holds[k].Version
				delete(held, item)
			}
			running = append(running, Running{Item: item, GPUs: g, Start: now})
			ends.push(end{at: now + dur[item], seq: seq, slot: item})
			seq++
		}
		if len(ends) == 0 {
			if n := s.Len(); n > 0 {
				return nil, fmt.Errorf("the scheduler holds %d items but hands none out to %d free GPUs", n, len(free))
			}
			t.Wall = now
			return t, nil
		}
		e := ends.pop()
		now = e.at
		s.Calibration().Observe(e.slot, dur[e.slot])
		k := slices.IndexFunc(running, func(r Running) bool { return r.Item == e.slot })
		for _, x := range running[k].GPUs {
			busy[x] = false
			free = append(free, x)
		}
		running = slices.Delete(running, k, k+1)
	}
}

// Wall is ReplayBlocks' wall clock.
func Wall(s Scheduler, width []int, dur []float64, gpus int) (float64, error) {
	t, err := ReplayBlocks(s, width, dur, gpus)
	if err != nil {
		return 0, err
	}
	return t.Wall, nil
}

// check says what is wrong with handing item the GPUs g.
func (t *BlockTimeline) check(item int, g []int, width []int, busy []bool) error {
	switch {
	case item < 0 || item >= len(t.GPUs):
		return fmt.Errorf("the scheduler handed out item %d of %d", item, len(t.GPUs))
	case t.GPUs[item] != nil:
		return fmt.Errorf("the scheduler handed out item %d twice", item)
	}
	want := 1
	if width != nil {
		want = max(width[item], 1)
	}
	if len(g) != want {
		return fmt.Errorf("the scheduler gave item %d %d GPUs, want %d", item, len(g), want)
	}
	for k, x := range g {
		if x < 0 || x >= len(busy) || busy[x] || slices.Contains(g[:k], x) {
			return fmt.Errorf("the scheduler gave item %d GPU %d, which is not free", item, x)
		}
	}
	return nil
}

// Widths returns each item's width.
func Widths(items []Item) []int {
	w := make([]int, len(items))
	for i, it := range items {
		w[i] = it.Width()
	}
	return w
}

// Lateness measures each hold of t (a replay of items with durations dur): late is
// how far past its reservation the held item started, explained the largest
// overrun of an item that ran meanwhile; backfilling keeps late within explained.
func (t *BlockTimeline) Lateness(items []Item, dur []float64) (late, explained []float64) {
	late = make([]float64, len(t.Holds))
	explained = make([]float64, len(t.Holds))
	suite, _ := suitesOf(items)
	for k, h := range t.Holds {
		if h.Start < 0 {
			continue
		}
		late[k] = max(0, h.Start-h.At)
		for i, g := range t.GPUs {
			if g == nil || i == h.Item {
				continue
			}
			s, e := t.Start[i], t.Start[i]+dur[i]
			if s >= h.Start || e <= h.Since {
				continue
			}
			expect := s
			if items[i].Estimated() {
				f := 1.0
				if h.Factors != nil {
					f = h.Factors[suite[i]]
				}
				expect += items[i].Weight * f
			}
			explained[k] = max(explained[k], e-max(expect, h.Since))
		}
	}
	return late, explained
}

// suitesOf numbers the items' suites (suite, by item) in the order of first
// appearance, as a Calibration numbers them, and names them (labels, by suite).
func suitesOf(items []Item) (suite []int, labels []string) {
	index := map[string]int{}
	suite = make([]int, len(items))
	for i, it := range items {
		s, ok := index[it.Label]
		if !ok {
			s = len(labels)
			index[it.Label] = s
			labels = append(labels, it.Label)
		}
		suite[i] = s
	}
	return suite, labels
}
