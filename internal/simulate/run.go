// Package simulate predicts a run's wall clock from a weight table: an event-driven
// simulation that drives the very schedulers the dispatcher uses (a schedule.Queue
// behind schedule.OnSlots, or schedule.Blocks) on virtual time
// (schedule.ReplayBlocks), so what it predicts for a policy is what `run` does with
// those durations. It backs `sgpu-queue simulate`: capacity
// planning, and the evidence for the default scheduling policy.
package simulate

// Static is the old design: suite k (in config order) runs whole on GPU k mod
// slots; suites sharing a GPU run one after another. suite[i] is item i's suite.
// It returns the wall clock: the busiest GPU's total.
func Static(suite []int, dur []float64, slots int) float64 {
	if slots < 1 {
		return 0
	}
	busy := make([]float64, slots)
	for i, s := range suite {
		busy[s%slots] += dur[i]
	}
	var wall float64
	for _, b := range busy {
		wall = max(wall, b)
	}
	return wall
}
