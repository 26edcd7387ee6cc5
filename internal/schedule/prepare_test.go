package schedule

import "testing"

// TestPrepare: every scheduler Prepare makes is fresh, and replays as the one
// NewScheduler returns; its errors are NewScheduler's.
func TestPrepare(t *testing.T) {
	// Graham's table (the planner beats LPT), and a mixed workload.
	graham := seq(it(1, 7), it(1, 7), it(1, 6), it(1, 6), it(1, 5), it(1, 5), it(1, 4), it(1, 4), it(1, 4))
	mixed := seq(it(4, 10), it(2, 10), it(1, 5), it(1, 5), it(1, 5), it(1, 5))
	for _, tc := range []struct {
		name  string
		items []Item
		gpus  int
	}{{"single-GPU", graham, 4}, {"mixed", mixed, 4}} {
		for _, policy := range Policies() {
			fresh, err := Prepare(policy, tc.items, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			dur := make([]float64, len(tc.items))
			for i, x := range tc.items {
				dur[i] = x.Weight
			}
			s, _ := NewScheduler(policy, tc.items, tc.gpus)
			want, err := ReplayBlocks(s, Widths(tc.items), dur, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				got, err := ReplayBlocks(fresh(), Widths(tc.items), dur, tc.gpus)
				if err != nil {
					t.Fatalf("%s %s: %v", tc.name, policy, err)
				}
				if got.Wall != want.Wall {
					t.Errorf("%s %s: wall %g, NewScheduler's %g", tc.name, policy, got.Wall, want.Wall)
				}
			}
		}
	}
	if _, err := Prepare("", seq(it(8, 1)), 4); err == nil {
		t.Error("an item wider than the pool: no error")
	}
	if _, err := Prepare("fifo", seq(it(1, 1)), 4); err == nil {
		t.Error("unknown policy: no error")
	}
}
