// Package simulate predicts a run's wall clock from a weight table by replaying the
// schedulers run uses on virtual time (schedule.ReplayBlocks); it backs `sgpu-queue simulate`.
package simulate

// Static is the old design: suite k runs whole on GPU k mod slots (suite[i] is item
// i's suite); it returns the busiest GPU's total.
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
