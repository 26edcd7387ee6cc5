package schedule

import (
	"errors"
	"slices"
	"testing"
)

// TestStrictOrder: widest first, then the largest weight, an unknown item leading
// its own width only (TE's sort key is GPUs, then weight, the default weight for an
// unknown item); ties in listing order.
func TestStrictOrder(t *testing.T) {
	tests := []struct {
		name  string
		items []Item
		want  []int
	}{
		{"widest, then longest", seq(it(2, 50), it(4, 10), it(2, 90), it(4, 30)), []int{3, 1, 2, 0}},
		{"an unknown item leads its width, not the queue", seq(it(4, 10), unk(2), it(2, 90)), []int{0, 1, 2}},
		{"ties keep listing order", seq(it(2, 10), it(2, 10), it(8, 1)), []int{2, 0, 1}},
		{"a one-GPU item is width 1", seq(Item{Weight: 5, Known: true}, it(1, 6)), []int{1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StrictOrder(tc.items); !slices.Equal(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStrictTimeline replays TE's rule by hand: nothing jumps a waiting item, and an
// item takes the lowest free GPUs, adjacent or not.
func TestStrictTimeline(t *testing.T) {
	tests := []struct {
		name  string
		gpus  int
		items []Item
		start []float64 // by item
		on    [][]int   // by item
		wall  float64
	}{
		{
			// The 3-GPU item runs 0–10; the 2-GPU item waits for it, and so does
			// the 1-GPU item behind it although GPU 3 is idle (Blocks would
			// backfill it at 0).
			name: "no item jumps ahead", gpus: 4,
			items: seq(it(3, 10), it(2, 10), it(1, 5)),
			start: []float64{0, 10, 10}, on: [][]int{{0, 1, 2}, {0, 1}, {2}}, wall: 20,
		},
		{
			// GPUs 0 and 2 free at 4 (the 1-GPU items on them end), GPU 1 still
			// busy: the 2-GPU item takes 0 and 2, not adjacent.
			name: "lowest free GPUs, adjacent or not", gpus: 4,
			items: seq(it(1, 4), it(1, 9), it(1, 4), it(1, 9), it(2, 1)),
			start: []float64{0, 0, 0, 0, 4}, on: [][]int{{0}, {1}, {2}, {3}, {0, 2}}, wall: 9,
		},
		{
			name: "one GPU each is list scheduling in order", gpus: 2,
			items: seq(it(1, 5), it(1, 3), it(1, 1), it(1, 1)),
			start: []float64{0, 0, 3, 4}, on: [][]int{{0}, {1}, {1}, {1}}, wall: 5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStrict(tc.items, listed(len(tc.items)), tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			dur := make([]float64, len(tc.items))
			for i, x := range tc.items {
				dur[i] = x.Weight
			}
			tl, err := ReplayBlocks(s, Widths(tc.items), dur, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tl.Start, tc.start) || !slices.EqualFunc(tl.GPUs, tc.on, slices.Equal) || tl.Wall != tc.wall {
				t.Errorf("starts %v on %v, wall %g; want %v on %v, %g", tl.Start, tl.GPUs, tl.Wall, tc.start, tc.on, tc.wall)
			}
		})
	}
}

// TestStrictPool: retries, removed GPUs, suspended GPUs and bad input.
func TestStrictPool(t *testing.T) {
	if _, err := NewStrict(seq(it(5, 1)), []int{0}, 4); !errors.As(err, new(*WidthError)) {
		t.Errorf("a 5-GPU item on 4 GPUs: %v, want a *WidthError", err)
	}
	if _, err := NewStrict(nil, nil, 0); err == nil {
		t.Error("0 GPUs: no error")
	}

	s, _ := NewStrict(seq(it(1, 5), it(4, 5), it(2, 5)), []int{0, 1, 2}, 4)
	i, g, ok := s.Next(0, []int{3, 2, 1, 0}, nil)
	if !ok || i != 0 || !slices.Equal(g, []int{0}) {
		t.Fatalf("first: %d on %v (%v), want item 0 on GPU 0", i, g, ok)
	}
	// The 4-GPU item waits while item 0 runs; the 2-GPU item behind it waits too.
	running := []Running{{Item: 0, GPUs: g}}
	if i, g, ok := s.Next(0, []int{1, 2, 3}, running); ok {
		t.Errorf("strict order broken: %d on %v started behind a waiting item", i, g)
	}
	// A retry goes to the back and avoids the GPU it failed on when it can.
	if !s.Requeue(0, []int{0}) || s.Len() != 3 {
		t.Fatalf("requeue: len %d, want 3", s.Len())
	}
	// GPU 3 leaves the pool: the 4-GPU item no longer fits.
	if unfit := s.Remove(3); !slices.Equal(unfit, []int{1}) || s.Len() != 2 {
		t.Errorf("remove: unfit %v, len %d; want [1], 2", unfit, s.Len())
	}
	if s.Remove(3) != nil || s.Remove(-1) != nil {
		t.Error("removing a gone or unknown GPU returned items")
	}
	if s.Requeue(1, nil) {
		t.Error("a 4-GPU item requeued on a pool of 3")
	}
	i, g, ok = s.Next(10, []int{0, 1, 2, 3}, nil)
	if !ok || i != 2 || !slices.Equal(g, []int{0, 1}) {
		t.Errorf("after the remove: %d on %v (%v), want item 2 on GPUs 0,1", i, g, ok)
	}
	i, g, ok = s.Next(10, []int{0, 2}, []Running{{Item: 2, GPUs: []int{0, 1}}})
	if !ok || i != 0 || !slices.Equal(g, []int{2}) {
		t.Errorf("the retry: %d on %v (%v), want item 0 on GPU 2 (not 0, which it failed on)", i, g, ok)
	}
	if _, _, held := s.Hold(); held || s.Len() != 0 {
		t.Errorf("hold %v, len %d; want none and 0", held, s.Len())
	}

	// Nothing runs and the first item does not fit the free GPUs (the others are
	// suspended): the first that fits starts rather than stall.
	s, _ = NewStrict(seq(it(4, 5), it(1, 5)), []int{0, 1}, 4)
	if i, g, ok := s.Next(0, []int{2}, nil); !ok || i != 1 || !slices.Equal(g, []int{2}) {
		t.Errorf("stalled pool: %d on %v (%v), want item 1 on GPU 2", i, g, ok)
	}
}
