package schedule

import "sync"

// OnSlots drives a single-GPU Queue through the Scheduler interface exactly as the
// dispatcher would drive it on its own.
func OnSlots(q Queue, gpus int) Scheduler {
	var cal *Calibration
	if c, ok := q.(interface{ calibration() *Calibration }); ok {
		cal = c.calibration()
	}
	return onSlots(q, gpus, cal)
}

func onSlots(q Queue, gpus int, cal *Calibration) Scheduler {
	return &slots{q: q, cal: cal, pool: gpuPool{gone: make([]bool, gpus), n: gpus}}
}

type slots struct {
	mu   sync.Mutex // guards pool and ids; q has its own lock
	q    Queue
	cal  *Calibration
	pool gpuPool // no widths: every item takes one GPU
	ids  []int   // GPU lists are handed out of this, one allocation per 1024
}

// one returns a list of the one GPU g, capped so that an append cannot reach the next.
func (s *slots) one(g int) []int {
	if len(s.ids) == 0 {
		s.ids = make([]int, 1024)
	}
	l := s.ids[:1:1]
	l[0] = g
	s.ids = s.ids[1:]
	return l
}

func (s *slots) Next(now float64, free []int, running []Running) (int, []int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range free {
		if !s.pool.has(g) {
			continue
		}
		if i, ok := s.q.Next(g); ok {
			return i, s.one(g), true
		}
	}
	if len(running) > 0 {
		return 0, nil, false
	}
	for _, g := range free {
		if s.pool.has(g) {
			if i, ok := s.q.Next(AnySlot); ok {
				return i, s.one(g), true
			}
			break
		}
	}
	return 0, nil, false
}

func (s *slots) Requeue(item int, avoid []int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool.n < 1 {
		return false
	}
	a := AnySlot
	if len(avoid) > 0 {
		a = avoid[0]
	}
	s.q.Requeue(item, a)
	return true
}

func (s *slots) Remove(gpu int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pool.remove(gpu) {
		return nil
	}
	if s.pool.n > 0 {
		return nil // every item takes one GPU: all still fit
	}
	var unfit []int
	for s.q.Len() > 0 {
		i, ok := s.q.Next(AnySlot)
		if !ok {
			break
		}
		unfit = append(unfit, i)
	}
	return unfit
}

func (s *slots) Hold() (int, float64, bool) { return 0, 0, false }

func (s *slots) Calibration() *Calibration { return s.cal }

func (s *slots) Len() int { return s.q.Len() }
