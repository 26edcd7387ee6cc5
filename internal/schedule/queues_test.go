package schedule

// NewQueue is the queue of the named policy over single-GPU items for slots GPUs,
// as NewSetup plans it.
func NewQueue(policy string, items []Item, slots int) (Queue, error) {
	s, err := NewSetup(policy, items, slots)
	if err != nil {
		return nil, err
	}
	return s.queue(nil), nil
}

// NewPlanned is the planned queue: NewPlan(items, slots).Queue(items).
func NewPlanned(items []Item, slots int) Queue {
	return NewPlan(items, slots).Queue(items)
}
