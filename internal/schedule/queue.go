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
	q := &pull{}
	q.tail.e = make([]entry, 0, len(order))
	for _, i := range order {
		q.tail.add(i, AnySlot)
	}
	return q
}

type entry struct {
	item  int
	avoid int
}

// list is items handed out in order, each to the first GPU that asks and that it
// does not avoid: the pull queue's one list, and every queue's retries.
type list struct {
	e    []entry
	head int
}

func (l *list) add(item, avoid int) { l.e = append(l.e, entry{item: item, avoid: avoid}) }

func (l *list) len() int { return len(l.e) - l.head }

// take hands out the first entry slot may take (AnySlot: the first); the ones it
// passes over keep their order.
func (l *list) take(slot int) (int, bool) {
	for i := l.head; i < len(l.e); i++ {
		e := l.e[i]
		if slot != AnySlot && e.avoid == slot {
			continue
		}
		copy(l.e[l.head+1:i+1], l.e[l.head:i])
		l.head++
		return e.item, true
	}
	return 0, false
}

// backlog is what every queue keeps alike: the items it has not handed out and
// its retries, handed out last (every item of the pull queue).
type backlog struct {
	mu   sync.Mutex // every method of the queue takes it
	n    int        // items not handed out, the tail aside
	tail list
}

func (b *backlog) Requeue(item, avoid int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tail.add(item, avoid)
}

func (b *backlog) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n + b.tail.len()
}

type pull struct{ backlog }

func (q *pull) Next(slot int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tail.take(slot)
}
