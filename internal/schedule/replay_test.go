package schedule

import (
	"slices"
	"strings"
	"testing"
)

func TestReplay(t *testing.T) {
	tests := []struct {
		name      string
		order     []int
		dur       []float64
		slots     int
		wall      float64
		slot      []int     // by item
		start     []float64 // by item
		busySlot0 float64
	}{
		{
			// 3 s on GPU 0; 2 s on GPU 1, then the last 2 s item on GPU 1 at t=2.
			name: "3 items on 2 GPUs", order: []int{0, 1, 2}, dur: []float64{3, 2, 2}, slots: 2,
			wall: 4, slot: []int{0, 1, 1}, start: []float64{0, 0, 2}, busySlot0: 3,
		},
		{
			// Both GPUs free at t=2: the one whose item started first (GPU 0) asks
			// first, as the ends are taken in start order.
			name: "tie", order: []int{0, 1, 2, 3}, dur: []float64{2, 2, 5, 1}, slots: 2,
			wall: 7, slot: []int{0, 1, 0, 1}, start: []float64{0, 0, 2, 2}, busySlot0: 7,
		},
		{
			name: "more GPUs than items", order: []int{1, 0}, dur: []float64{4, 9}, slots: 5,
			wall: 9, slot: []int{1, 0}, start: []float64{0, 0}, busySlot0: 9,
		},
		{
			name: "one GPU", order: []int{2, 0, 1}, dur: []float64{1, 2, 3}, slots: 1,
			wall: 6, slot: []int{0, 0, 0}, start: []float64{3, 4, 0}, busySlot0: 6,
		},
		{
			name: "no items", order: nil, dur: nil, slots: 3, wall: 0, busySlot0: 0,
		},
		{
			name: "zero durations", order: []int{0, 1, 2}, dur: []float64{0, 0, 1}, slots: 2,
			wall: 1, slot: []int{0, 1, 0}, start: []float64{0, 0, 0}, busySlot0: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := Replay(NewPull(tc.order), tc.dur, tc.slots)
			if err != nil {
				t.Fatal(err)
			}
			if tl.Wall != tc.wall {
				t.Errorf("wall %g, want %g", tl.Wall, tc.wall)
			}
			if tc.slot != nil && !slices.Equal(tl.Slot, tc.slot) {
				t.Errorf("slots %v, want %v", tl.Slot, tc.slot)
			}
			if tc.start != nil && !slices.Equal(tl.Start, tc.start) {
				t.Errorf("starts %v, want %v", tl.Start, tc.start)
			}
			if tl.Busy[0] != tc.busySlot0 {
				t.Errorf("GPU 0 busy %g, want %g", tl.Busy[0], tc.busySlot0)
			}
		})
	}
}

// badQueue hands out what it is told, to check that Replay catches broken queues.
type badQueue struct{ items []int }

func (q *badQueue) Next(slot int) (int, bool) {
	if len(q.items) == 0 {
		return 0, false
	}
	i := q.items[0]
	q.items = q.items[1:]
	return i, true
}
func (q *badQueue) Requeue(item, avoid int) {}
func (q *badQueue) Len() int                { return len(q.items) }

// stuckQueue claims items but never hands one out.
type stuckQueue struct{}

func (stuckQueue) Next(int) (int, bool) { return 0, false }
func (stuckQueue) Requeue(int, int)     {}
func (stuckQueue) Len() int             { return 1 }

func TestReplayBrokenQueue(t *testing.T) {
	tests := []struct {
		name string
		q    Queue
		want string
	}{
		{"twice", &badQueue{items: []int{0, 0}}, "twice"},
		{"out of range", &badQueue{items: []int{5}}, "item 5 of 2"},
		{"stalls", stuckQueue{}, "hands none out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replay(tc.q, []float64{1, 1}, 2)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Replay(NewPull(nil), nil, 0); err == nil {
		t.Error("0 GPUs: no error")
	}
}

// TestReplayAvoid: a retry that avoids the only idle GPU waits while another GPU
// runs, and is forced onto it (Next(AnySlot)) once nothing else runs.
func TestReplayAvoid(t *testing.T) {
	q := NewPull([]int{0})
	q.Requeue(1, 0)
	tl, err := Replay(q, []float64{3, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Wall != 4 || tl.Slot[1] != 0 || tl.Start[1] != 3 {
		t.Errorf("wall %g, retry on GPU %d at %g; want 4, GPU 0 at 3", tl.Wall, tl.Slot[1], tl.Start[1])
	}
}

// Setup.Wall is the wall clock of ReplayBlocks on a fresh Scheduler, the setup's
// widths and GPUs, for single-GPU and mixed workloads under each policy.
func TestSetupWall(t *testing.T) {
	for _, items := range [][]Item{seq(it(1, 5), it(1, 3), it(1, 8), it(1, 2), it(1, 4)), seq(it(2, 5), it(1, 3), it(4, 8), it(1, 2), unk(1))} {
		dur := []float64{6, 2, 9, 1, 4}
		for _, policy := range Policies() {
			s, err := NewSetup(policy, items, 4)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Wall(dur)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReplayBlocks(s.Scheduler(), Widths(items), dur, 4)
			if err != nil {
				t.Fatal(err)
			}
			if got != want.Wall || got <= 0 {
				t.Errorf("%s on %d items: Setup.Wall %g, ReplayBlocks %g", policy, len(items), got, want.Wall)
			}
		}
	}
	if _, err := Wall(OnSlots(NewPull([]int{0}), 1), nil, []float64{1}, 0); err == nil {
		t.Error("Wall on 0 GPUs: no error")
	}
}
