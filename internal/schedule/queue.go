package schedule

import "sync"

// AnySlot passed to Queue.Next takes the next item whatever slot it avoids.
const AnySlot = -1

// Queue hands out item indices to GPU slots as they go idle. The dispatcher and the
// simulator drive the same Queue, so what simulate predicts is what run does.
type Queue interface {
	// Next returns the item the idle slot should run next, or false when the queue
	// holds nothing for it: it is empty, or everything left avoids this slot. The
	// dispatcher calls Next(AnySlot) when no other slot could take what is left.
	Next(slot int) (item int, ok bool)
	// Requeue puts an item back at the end (a retry); avoid is the slot it should not
	// run on again while another can take it (-1: none).
	Requeue(item, avoid int)
	// Len is the number of items not yet handed out.
	Len() int
}

// NewPull returns the dynamic pull queue: every idle slot takes the first item of one
// shared list in the given order (the LPT queue of docs/architecture.md when order is Order's).
func NewPull(order []int) Queue {
	q := &pull{items: make([]entry, 0, len(order))}
	for _, i := range order {
		q.items = append(q.items, entry{item: i, avoid: AnySlot})
	}
	return q
}

type entry struct {
	item  int
	avoid int
}

type pull struct {
	mu    sync.Mutex // guards items and head; every method takes it
	items []entry
	head  int
}

func (q *pull) Next(slot int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := q.head; i < len(q.items); i++ {
		e := q.items[i]
		if slot != AnySlot && e.avoid == slot {
			continue
		}
		// Take entry i; the ones it skipped keep their order.
		copy(q.items[q.head+1:i+1], q.items[q.head:i])
		q.head++
		return e.item, true
	}
	return 0, false
}

func (q *pull) Requeue(item, avoid int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, entry{item: item, avoid: avoid})
}

func (q *pull) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
