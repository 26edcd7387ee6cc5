package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// it is a known item of width w and weight sec; unk an unknown one.
func it(w int, sec float64) Item { return Item{GPUs: w, Weight: sec, Known: true} }
func unk(w int) Item             { return Item{GPUs: w, Weight: DefaultWeight} }

// seq names and numbers items in listing order.
func seq(items ...Item) []Item {
	for i := range items {
		items[i].Label, items[i].Tag, items[i].Seq = "s", fmt.Sprintf("t%d", i), i
	}
	return items
}

func listed(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}

// TestAlloc: which GPUs an item of each width takes from the free ones.
func TestAlloc(t *testing.T) {
	tests := []struct {
		name  string
		gpus  int
		free  []int
		width int
		want  []int
	}{
		{"a whole run", 8, []int{0, 1, 2, 3, 4, 5, 6, 7}, 4, []int{0, 1, 2, 3}},
		{"the shortest run that holds it", 8, []int{0, 1, 2, 4, 5, 7}, 2, []int{4, 5}},
		{"one GPU: an isolated one, runs stay whole", 8, []int{0, 1, 2, 4, 5, 7}, 1, []int{7}},
		{"the longer run when the shorter is too short", 8, []int{0, 1, 3, 4, 5}, 3, []int{3, 4, 5}},
		{"free order does not matter", 8, []int{5, 3, 4, 1, 0}, 3, []int{3, 4, 5}},
		{"no run holds it: longest runs first", 8, []int{0, 2, 3, 5, 6, 7}, 5, []int{0, 2, 3, 5, 6, 7}[1:]},
		{"no run holds it, ties lowest first", 8, []int{0, 1, 3, 4, 6}, 4, []int{0, 1, 3, 4}},
		{"duplicates in free count once", 4, []int{2, 2, 3}, 2, []int{2, 3}},
		{"ids outside the pool are ignored", 4, []int{-1, 7, 1, 2}, 2, []int{1, 2}},
		{"all of the pool", 4, []int{3, 2, 1, 0}, 4, []int{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBlocks(seq(it(tc.width, 10)), []int{0}, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			free := slices.Clone(tc.free)
			i, g, ok := b.Next(0, free, nil)
			if !ok || i != 0 || !slices.Equal(g, tc.want) {
				t.Fatalf("Next = %d %v %v, want 0 %v", i, g, ok, tc.want)
			}
			if !slices.Equal(free, tc.free) {
				t.Errorf("Next changed the caller's free list: %v", free)
			}
		})
	}
}

// TestAllocNeverShares: random free sets and widths; the GPUs are distinct, free,
// and adjacent whenever a run of free GPUs could hold the item.
func TestAllocNeverShares(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 2000; k++ {
		gpus := 1 + rng.IntN(12)
		var free []int
		for g := 0; g < gpus; g++ {
			if rng.IntN(3) > 0 {
				free = append(free, g)
			}
		}
		if len(free) == 0 {
			continue
		}
		w := 1 + rng.IntN(len(free))
		b, _ := NewBlocks(seq(it(w, 1)), []int{0}, gpus)
		_, g, ok := b.Next(0, free, nil)
		if !ok || len(g) != w {
			t.Fatalf("free %v width %d: %v %v", free, w, g, ok)
		}
		for x, id := range g {
			if !slices.Contains(free, id) || slices.Contains(g[:x], id) {
				t.Fatalf("free %v width %d: got %v", free, w, g)
			}
		}
		if longestRun(free) >= w && g[w-1]-g[0] != w-1 {
			t.Fatalf("free %v width %d: %v not adjacent though a run holds it", free, w, g)
		}
	}
}

func longestRun(free []int) int {
	s := slices.Sorted(slices.Values(free))
	best, n := 0, 0
	for i, g := range s {
		if i > 0 && g == s[i-1]+1 {
			n++
		} else {
			n = 1
		}
		best = max(best, n)
	}
	return best
}

// TestHoldAndBackfill: what Next starts when the next item does not fit.
func TestHoldAndBackfill(t *testing.T) {
	type run struct {
		item  Item // its weight is what the reservation reckons with
		gpus  []int
		start float64
	}
	type want struct {
		item   int
		gpus   []int
		ok     bool
		hold   int // −1: none
		holdAt float64
	}
	tests := []struct {
		name    string
		items   []Item // queued in this order
		running []run  // items index len(items), len(items)+1, …
		gpus    int
		now     float64
		free    []int
		want    want
	}{
		{
			name:  "the head fits: it starts",
			items: []Item{it(2, 50), it(1, 5)}, gpus: 4, now: 0, free: []int{0, 1, 2, 3},
			want: want{item: 0, gpus: []int{0, 1}, ok: true, hold: -1},
		},
		{
			// Item 0 (4 GPUs) waits for GPUs 1–3, free at 30 by the weights; GPU 0
			// is held, and a 20 s item ends before that: it backfills.
			name:  "backfill ends before the reservation",
			items: []Item{it(4, 50), it(1, 40), it(1, 20)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{item: 2, gpus: []int{0}, ok: true, hold: 0, holdAt: 30},
		},
		{
			name:  "ending exactly at the reservation is before it",
			items: []Item{it(4, 50), it(1, 20)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{item: 1, gpus: []int{0}, ok: true, hold: 0, holdAt: 30},
		},
		{
			name:  "too long for the hold, and no GPU spare: nothing starts",
			items: []Item{it(4, 50), it(1, 40), it(1, 21)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 30},
		},
		{
			// The head needs 2 of the 4 GPUs free at 30: GPU 0 is spare (extra),
			// so a long item may take it.
			name:  "a long item on a GPU the head will not need",
			items: []Item{it(2, 50), it(1, 500)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{item: 1, gpus: []int{0}, ok: true, hold: 0, holdAt: 30},
		},
		{
			name:  "a wide backfill that ends in time",
			items: []Item{it(4, 50), it(3, 5), it(2, 5)}, gpus: 4, now: 10, free: []int{0, 1},
			running: []run{{it(2, 30), []int{2, 3}, 0}},
			want:    want{item: 2, gpus: []int{0, 1}, ok: true, hold: 0, holdAt: 30},
		},
		{
			name:  "unknown items never backfill",
			items: []Item{it(4, 50), unk(1), it(1, 30)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 30},
		},
		{
			name:  "unknown items never backfill, even on a spare GPU",
			items: []Item{it(2, 50), unk(1)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 30},
		},
		{
			// The running item is past its weight (started 0, 20 s, now 25): it may
			// end any moment, so the reservation completes now and nothing
			// backfills.
			name:  "a running item past its weight holds the reservation at now",
			items: []Item{it(4, 50), it(1, 1)}, gpus: 4, now: 25, free: []int{0},
			running: []run{{it(3, 20), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 25},
		},
		{
			name:  "a running unknown item holds the reservation at now",
			items: []Item{it(4, 50), it(1, 1)}, gpus: 4, now: 5, free: []int{0},
			running: []run{{unk(3), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 5},
		},
		{
			// The head needs 2: GPU 0 free plus one of the running item's, which is
			// past its weight. Its GPUs are not counted as spare (the head needs
			// one of them should it run on), so the long item may not take GPU 0.
			name:  "GPUs of an item past its weight are never spare",
			items: []Item{it(2, 50), it(1, 500)}, gpus: 4, now: 25, free: []int{0},
			running: []run{{it(3, 20), []int{1, 2, 3}, 0}},
			want:    want{ok: false, hold: 0, holdAt: 25},
		},
		{
			// GPU 0 free, GPU 1 at 20, GPUs 2–3 at 100: 4 GPUs at 100. The 85 s
			// item ends at 95: in time.
			name:  "the reservation waits for the last GPU it needs",
			items: []Item{it(4, 10), it(1, 85)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(1, 20), []int{1}, 0}, {it(2, 100), []int{2, 3}, 0}},
			want:    want{item: 1, gpus: []int{0}, ok: true, hold: 0, holdAt: 100},
		},
		{
			name:  "the first in order that may backfill, not the shortest",
			items: []Item{it(4, 50), it(1, 15), it(1, 5)}, gpus: 4, now: 10, free: []int{0},
			running: []run{{it(3, 30), []int{1, 2, 3}, 0}},
			want:    want{item: 1, gpus: []int{0}, ok: true, hold: 0, holdAt: 30},
		},
		{
			// GPUs 2 and 3 are out of free (suspended): nothing the running items
			// free can complete a reservation, so nothing is held and any known
			// item that fits may start.
			name:  "no reservation possible: nothing held",
			items: []Item{it(4, 50), unk(2), it(1, 5)}, gpus: 4, now: 0, free: []int{0, 1},
			want: want{item: 2, gpus: []int{0}, ok: true, hold: -1},
		},
		{
			// ... and when nothing runs and only an unknown item fits, it starts
			// rather than stall.
			name:  "nothing runs and only an unknown item fits: it starts",
			items: []Item{it(4, 50), unk(2), it(3, 5)}, gpus: 4, now: 0, free: []int{0, 1},
			want: want{item: 1, gpus: []int{0, 1}, ok: true, hold: -1},
		},
		{
			name:  "no free GPU",
			items: []Item{it(1, 5)}, gpus: 2, now: 0, free: nil,
			running: []run{{it(2, 9), []int{0, 1}, 0}},
			want:    want{ok: false, hold: -1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := slices.Clone(tc.items)
			var running []Running
			for _, r := range tc.running {
				running = append(running, Running{Item: len(items), GPUs: r.gpus, Start: r.start})
				items = append(items, r.item)
			}
			b, err := NewBlocks(seq(items...), listed(len(tc.items)), tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			i, g, ok := b.Next(tc.now, tc.free, running)
			if ok != tc.want.ok || (ok && (i != tc.want.item || !slices.Equal(g, tc.want.gpus))) {
				t.Errorf("Next = %d %v %v, want %d %v %v", i, g, ok, tc.want.item, tc.want.gpus, tc.want.ok)
			}
			hi, at, hok := b.Hold()
			if tc.want.hold < 0 {
				if hok {
					t.Errorf("Hold = %d at %g, want none", hi, at)
				}
			} else if !hok || hi != tc.want.hold || at != tc.want.holdAt {
				t.Errorf("Hold = %d at %g (%v), want %d at %g", hi, at, hok, tc.want.hold, tc.want.holdAt)
			}
		})
	}
}

// TestNoStarvation: a 4-GPU item queued behind a long stream of 1-GPU items on 4
// GPUs starts at its reservation, long before the stream ends; the items
// backfilled meanwhile all end by then.
func TestNoStarvation(t *testing.T) {
	items := []Item{it(1, 10), it(1, 20), it(1, 30), it(1, 40), it(4, 50)}
	for k := 0; k < 100; k++ {
		items = append(items, it(1, 15))
	}
	items = seq(items...)
	dur := make([]float64, len(items))
	for i, x := range items {
		dur[i] = x.Weight
	}
	b, err := NewBlocks(items, listed(len(items)), 4)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := ReplayBlocks(b, Widths(items), dur, 4)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Start[4] != 40 {
		t.Errorf("the 4-GPU item started at %g, want 40 (when GPU 3's 40 s item ends)", tl.Start[4])
	}
	last := 0.0
	for i := 5; i < len(items); i++ {
		last = max(last, tl.Start[i]+dur[i])
		if tl.Start[i] < tl.Start[4] && tl.Start[i]+dur[i] > tl.Start[4] {
			t.Errorf("backfilled item %d runs %g–%g, past the held item's start", i, tl.Start[i], tl.Start[i]+dur[i])
		}
	}
	if tl.Start[4] >= last/2 {
		t.Errorf("held item started at %g, the stream ends at %g", tl.Start[4], last)
	}
	if len(tl.Holds) != 1 || tl.Holds[0].Item != 4 || tl.Holds[0].At != 40 || tl.Holds[0].Start != 40 {
		t.Errorf("holds %+v, want item 4 held for 40 and started then", tl.Holds)
	}
	// Three 15 s items fit the hold: at 10 (→25), 20 (→35), 25 (→40).
	var before int
	for i := 5; i < len(items); i++ {
		if tl.Start[i] < 40 {
			before++
		}
	}
	if before != 3 {
		t.Errorf("%d items backfilled before the hold completed, want 3", before)
	}
}

// TestRemove: a GPU leaving the pool drops the queued items that no longer fit;
// the rest still run, none on the removed GPU.
func TestRemove(t *testing.T) {
	items := seq(it(4, 10), it(3, 10), it(1, 10), it(2, 10))
	b, err := NewBlocks(items, listed(4), 4)
	if err != nil {
		t.Fatal(err)
	}
	if unfit := b.Remove(3); !slices.Equal(unfit, []int{0}) {
		t.Errorf("Remove(3) = %v, want the 4-GPU item [0]", unfit)
	}
	if unfit := b.Remove(3); unfit != nil {
		t.Errorf("Remove(3) again = %v", unfit)
	}
	if b.Len() != 3 {
		t.Errorf("Len %d, want 3", b.Len())
	}
	if b.Requeue(0, nil) || b.Len() != 3 {
		t.Errorf("requeued the 4-GPU item on 3 GPUs (Len %d)", b.Len())
	}
	i, g, ok := b.Next(0, []int{0, 1, 2, 3}, nil)
	if !ok || i != 1 || !slices.Equal(g, []int{0, 1, 2}) {
		t.Errorf("Next = %d %v %v, want item 1 on 0,1,2 (GPU 3 is out)", i, g, ok)
	}
	// A removed GPU running an item does not count toward a reservation: the
	// 2-GPU item waits for GPUs 0 and 1 only.
	if unfit := b.Remove(2); !slices.Equal(unfit, nil) {
		t.Errorf("Remove(2) = %v", unfit)
	}
	running := []Running{{Item: 1, GPUs: []int{0, 1, 2}, Start: 0}}
	if _, _, ok := b.Next(1, []int{3}, running); ok {
		t.Error("started an item on removed GPU 3")
	}
	if unfit := b.Remove(1); !slices.Equal(unfit, []int{3}) {
		t.Errorf("Remove(1) = %v, want the 2-GPU item [3]", unfit)
	}
	i, g, ok = b.Next(20, []int{0, 1, 2}, nil)
	if !ok || i != 2 || !slices.Equal(g, []int{0}) {
		t.Errorf("Next = %d %v %v, want item 2 on GPU 0", i, g, ok)
	}
	if b.Len() != 0 {
		t.Errorf("Len %d after everything ran or was dropped", b.Len())
	}
}

// TestRemoveOnSlots: a single-GPU queue drops its items only when no GPU is left.
func TestRemoveOnSlots(t *testing.T) {
	s, err := NewScheduler(PolicyLPT, seq(it(1, 3), it(1, 2), it(1, 1)), 2)
	if err != nil {
		t.Fatal(err)
	}
	if i, g, ok := s.Next(0, []int{1, 0}, nil); !ok || i != 0 || !slices.Equal(g, []int{1}) {
		t.Errorf("Next = %d %v %v, want item 0 on GPU 1 (the first free asks first)", i, g, ok)
	}
	if unfit := s.Remove(1); unfit != nil {
		t.Errorf("Remove(1) = %v", unfit)
	}
	if _, _, ok := s.Next(0, []int{1}, []Running{{Item: 0, GPUs: []int{0}}}); ok {
		t.Error("removed GPU 1 got an item")
	}
	if unfit := s.Remove(0); !slices.Equal(unfit, []int{1, 2}) || s.Len() != 0 {
		t.Errorf("Remove(0) = %v, Len %d; want [1 2] and 0", unfit, s.Len())
	}
}

// TestRequeue: a retry avoids the GPUs it failed on while others can take it.
func TestRequeue(t *testing.T) {
	tests := []struct {
		name    string
		items   []Item
		gpus    int
		avoid   []int
		free    []int
		running []Running
		want    []int // GPUs it gets; nil: it waits
	}{
		{"other GPUs free: it takes them", seq(it(2, 10)), 4, []int{0, 1}, []int{0, 1, 2, 3}, nil, []int{2, 3}},
		{"only its GPUs free and others busy: it waits", seq(it(2, 10)), 4, []int{0, 1}, []int{0, 1}, []Running{{Item: 1, GPUs: []int{2, 3}}}, nil},
		{"only its GPUs free and nothing runs: it takes them", seq(it(2, 10)), 4, []int{0, 1}, []int{0, 1}, nil, []int{0, 1}},
		{"the pool has no others: any will do", seq(it(4, 10)), 4, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}, []Running{{Item: 1, GPUs: nil}}, []int{0, 1, 2, 3}},
		{"part overlap when it cannot avoid all", seq(it(3, 10)), 4, []int{0, 1}, []int{0, 1, 2, 3}, []Running{{Item: 1, GPUs: nil}}, []int{0, 1, 2}},
		{"one GPU: another one", seq(it(1, 10), it(2, 1)), 4, []int{2}, []int{2, 3}, nil, []int{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := append(tc.items, it(1, 1), it(1, 1))
			b, err := NewBlocks(items, nil, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			b.Requeue(0, tc.avoid)
			i, g, ok := b.Next(0, tc.free, tc.running)
			if tc.want == nil {
				if ok {
					t.Errorf("Next = %d %v, want the retry to wait", i, g)
				}
				return
			}
			if !ok || i != 0 || !slices.Equal(g, tc.want) {
				t.Errorf("Next = %d %v %v, want 0 on %v", i, g, ok, tc.want)
			}
		})
	}
}

func TestNewScheduler(t *testing.T) {
	var we *WidthError
	_, err := NewScheduler("", seq(it(1, 1), it(8, 5)), 4)
	if !errors.As(err, &we) || we.Key != "s/t1" || we.Width != 8 || we.Pool != 4 {
		t.Fatalf("err %v, want a WidthError naming s/t1", err)
	}
	if err.Error() != "item s/t1 needs 8 GPUs but the pool has 4: give it gpus=4 at most, or run on more GPUs" {
		t.Errorf("message %q", err)
	}
	if _, err := NewScheduler("fifo", seq(it(2, 1)), 4); err == nil {
		t.Error("unknown policy accepted")
	}
	if _, err := NewScheduler("", nil, 0); err == nil {
		t.Error("0 GPUs accepted")
	}
	s, _ := NewScheduler("", seq(it(1, 1)), 2)
	if _, ok := s.(*slots); !ok {
		t.Errorf("single-GPU items: %T, want the queue on slots", s)
	}
	s, _ = NewScheduler(PolicyLPT, seq(it(1, 9), it(2, 1)), 2)
	if b, ok := s.(*Blocks); !ok || b.Len() != 2 {
		t.Errorf("mixed items: %T, want Blocks", s)
	}
	// lpt keeps longest first; planned takes the widest first.
	if i, _, _ := s.Next(0, []int{0, 1}, nil); i != 0 {
		t.Errorf("lpt started %d first, want the 9 s item", i)
	}
	s, _ = NewScheduler(PolicyPlanned, seq(it(1, 9), it(2, 1)), 2)
	if i, _, _ := s.Next(0, []int{0, 1}, nil); i != 1 {
		t.Errorf("planned started %d first, want the 2-GPU item", i)
	}
}

func TestBlockOrder(t *testing.T) {
	items := seq(it(1, 100), it(4, 30), it(2, 80), unk(2), it(8, 10), it(2, 80))
	for _, tc := range []struct {
		by   string
		want []int
	}{
		{ByDuration, []int{3, 0, 2, 5, 1, 4}},
		{ByGPUSeconds, []int{3, 2, 5, 1, 0, 4}}, // 160 160 120 100 80
		{ByWidest, []int{3, 4, 1, 2, 5, 0}},
		{"", []int{3, 0, 2, 5, 1, 4}},
	} {
		if got := BlockOrder(items, tc.by); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.by, got, tc.want)
		}
	}
}

// TestBlockOrderUnknownWidest: with no weights (a first run), widest first orders
// the unknown items by width, ties in listing order, as TE's mGPU queue does; the
// other orders keep them in listing order. Unknown items still lead known ones.
func TestBlockOrderUnknownWidest(t *testing.T) {
	items := seq(unk(4), unk(2), unk(8), it(8, 50), unk(1), unk(8), unk(2))
	for _, tc := range []struct {
		by   string
		want []int
	}{
		{ByWidest, []int{2, 5, 0, 1, 6, 4, 3}},
		{ByDuration, []int{0, 1, 2, 4, 5, 6, 3}},
		{ByGPUSeconds, []int{0, 1, 2, 4, 5, 6, 3}},
	} {
		if got := BlockOrder(items, tc.by); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.by, got, tc.want)
		}
	}
	p, err := PlanBlocks(PolicyPlanned, items, 8)
	if err != nil || p.From != ByWidest || !slices.Equal(p.Order, []int{2, 5, 0, 1, 6, 4, 3}) {
		t.Errorf("planned with unknown items: from %s, order %v, err %v; want widest first", p.From, p.Order, err)
	}
}

// TestOnSlotsIsTheQueue: a single-GPU workload replayed through the Scheduler
// interface runs exactly as the queue on its own (same GPU and start per item).
func TestOnSlotsIsTheQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 40; k++ {
		n, gpus := 1+rng.IntN(50), 1+rng.IntN(8)
		items := make([]Item, n)
		dur := make([]float64, n)
		for i := range items {
			items[i] = Item{Weight: math.Round(math.Exp(rng.NormFloat64()) * 30), Known: true, Seq: i}
			dur[i] = items[i].Weight * (0.8 + 0.4*rng.Float64())
		}
		plan := NewPlan(items, gpus) // one plan, a fresh queue per replay
		order := LPTOrder(items)
		for _, q := range []struct {
			name string
			new  func() Queue
		}{
			{PolicyLPT, func() Queue { return NewPull(order) }},
			{PolicyPlanned, func() Queue { return plan.Queue(items) }},
		} {
			want, err := Replay(q.new(), dur, gpus)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReplayBlocks(OnSlots(q.new(), gpus), nil, dur, gpus)
			if err != nil {
				t.Fatal(err)
			}
			for i := range items {
				if len(got.GPUs[i]) != 1 || got.GPUs[i][0] != want.Slot[i] || got.Start[i] != want.Start[i] {
					t.Fatalf("%s, %d items on %d GPUs: item %d on %v at %g, the queue alone: GPU %d at %g",
						q.name, n, gpus, i, got.GPUs[i], got.Start[i], want.Slot[i], want.Start[i])
				}
			}
			if got.Wall != want.Wall {
				t.Fatalf("wall %g, want %g", got.Wall, want.Wall)
			}
		}
	}
}

func TestLowerBoundGPUSeconds(t *testing.T) {
	items := seq(it(4, 100), it(1, 100), it(2, 50), unk(8))
	b := LowerBound(items, 4)
	// (400 + 100 + 100) / 4 = 150 > 100
	if b.Seconds != 150 || b.Total != 600 || b.Largest != 100 || b.Known != 3 || b.Unknown != 1 {
		t.Errorf("bound %+v, want 150 s over 600 GPU-seconds", b)
	}
	if got := BoundOfWidths([]float64{100, 100, 50}, []int{4, 1, 2}, 4); got != 150 {
		t.Errorf("BoundOfWidths = %g", got)
	}
	if got := BoundOfWidths([]float64{100, 10}, []int{1, 0}, 8); got != 100 {
		t.Errorf("largest: %g", got)
	}
}
