package schedule

import (
	"errors"
	"slices"
	"testing"
)

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

// NewSetup's order is the one its scheduler follows: the planned queue's when it
// uses its plan, LPT's otherwise, Blocks' with multi-GPU items; and the plan it
// made is there for the caller to describe.
func TestSetupOrder(t *testing.T) {
	graham := seq(it(1, 7), it(1, 7), it(1, 6), it(1, 6), it(1, 5), it(1, 5), it(1, 4), it(1, 4), it(1, 4))
	mixed := seq(it(4, 10), it(2, 10), it(1, 5), it(1, 5), it(1, 5), it(1, 5))
	lpt, err := NewSetup(PolicyLPT, graham, 4)
	if err != nil || lpt.Plan != nil || lpt.Blocks != nil || !slices.Equal(lpt.Order, LPTOrder(graham)) {
		t.Fatalf("lpt: %+v, %v", lpt, err)
	}
	planned, err := NewSetup("", graham, 4)
	p := NewPlan(graham, 4)
	if err != nil || planned.Policy != DefaultPolicy || planned.Plan == nil || !p.Use ||
		!slices.Equal(planned.Order, append(append([]int(nil), p.Unknown...), p.Order...)) {
		t.Fatalf("planned: %+v, %v", planned, err)
	}
	blocks, err := NewSetup(PolicyPlanned, mixed, 4)
	bp, _ := PlanBlocks(PolicyPlanned, mixed, 4)
	if err != nil || blocks.Blocks == nil || blocks.Plan != nil || !slices.Equal(blocks.Order, bp.Order) {
		t.Fatalf("mixed: %+v, %v", blocks, err)
	}
	var we *WidthError
	if _, err := NewSetup(PolicyLPT, seq(it(8, 1)), 4); !errors.As(err, &we) || we.Width != 8 || we.Pool != 4 {
		t.Errorf("an item wider than the pool: %v", err)
	}
}
