package schedule

// NewScheduler is NewSetup's scheduler, for a test that replays it once.
func NewScheduler(policy string, items []Item, gpus int) (Scheduler, error) {
	s, err := NewSetup(policy, items, gpus)
	if err != nil {
		return nil, err
	}
	return s.Scheduler(), nil
}

// Prepare is NewSetup's maker of fresh Schedulers, as a simulation replays many runs.
func Prepare(policy string, items []Item, gpus int) (func() Scheduler, error) {
	s, err := NewSetup(policy, items, gpus)
	if err != nil {
		return nil, err
	}
	return s.Scheduler, nil
}
