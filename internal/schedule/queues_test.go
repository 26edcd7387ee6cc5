package schedule

// NewQueue is the queue of the named policy over items for slots GPUs, as Prepare
// plans it for a single-GPU workload.
func NewQueue(policy string, items []Item, slots int) (Queue, error) {
	queue, err := queues(policy, items, slots)
	if err != nil {
		return nil, err
	}
	return queue(), nil
}

// NewPlanned is the planned queue: NewPlan(items, slots).Queue(items).
func NewPlanned(items []Item, slots int) Queue {
	return NewPlan(items, slots).Queue(items)
}
