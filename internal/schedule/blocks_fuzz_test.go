package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
)

// workload is a random mixed workload and a bad day to run it on.
type workload struct {
	items   []Item
	order   []int
	gpus    int
	dur     []float64 // actual durations
	fail    float64   // chance that an attempt fails (retried up to twice)
	removes []removal // GPUs leaving the pool
}

type removal struct {
	at  float64
	gpu int
}

// genWorkload draws a workload from seed: up to 120 items on 1–12 GPUs, mostly one
// GPU each, some unknown, durations off their weights by up to ±50 % when noisy;
// with bad, failing attempts and GPUs leaving the pool.
func genWorkload(seed uint64, bad, noisy bool) workload {
	rng := rand.New(rand.NewPCG(seed, 77))
	w := workload{gpus: 1 + rng.IntN(12)}
	n := 1 + rng.IntN(120)
	wide := rng.Float64()
	for i := 0; i < n; i++ {
		x := Item{ItemID: record.ItemID{Label: "s", Tag: fmt.Sprint(i)}, Seq: i, Known: rng.IntN(10) > 0, GPUs: 1}
		if rng.Float64() < wide {
			x.GPUs = 1 + rng.IntN(w.gpus)
		}
		x.Weight = math.Max(0, math.Round(math.Exp(rng.NormFloat64())*30))
		d := x.Weight
		if !x.Known {
			x.Weight = DefaultWeight
			d = float64(1 + rng.IntN(90))
		}
		if noisy {
			d *= 0.5 + rng.Float64()
		}
		w.items = append(w.items, x)
		w.dur = append(w.dur, d)
	}
	if rng.IntN(4) == 0 {
		w.order = rng.Perm(n)
	} else {
		w.order = BlockOrder(w.items, BlockOrders()[rng.IntN(3)])
	}
	if bad {
		w.fail = 0.3 * rng.Float64()
		for k := rng.IntN(3); k > 0; k-- {
			w.removes = append(w.removes, removal{at: rng.Float64() * 200, gpu: rng.IntN(w.gpus)})
		}
		slices.SortFunc(w.removes, func(a, b removal) int {
			if a.at < b.at {
				return -1
			}
			return 1
		})
	}
	return w
}

// driveBlocks runs w through Blocks with its own event loop (not ReplayBlocks, so that
// the two check each other): attempts fail and are requeued avoiding their GPUs,
// GPUs leave the pool. It fails t when a GPU is ever in two items at once, an
// item runs on a removed GPU or on the wrong number of GPUs, an item is handed out
// while not queued, the scheduler stalls, or an item ends neither done once nor
// dropped as too wide for what is left of the pool.
func driveBlocks(t *testing.T, w workload) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(len(w.items)), uint64(w.gpus)))
	b, err := NewBlocks(w.items, w.order, w.gpus)
	if err != nil {
		t.Fatal(err)
	}
	const (
		queued = iota
		running
		done
		dropped
	)
	state := make([]int, len(w.items))
	attempts := make([]int, len(w.items))
	gone := make([]bool, w.gpus)
	pool := w.gpus
	busyUntil := make([]float64, w.gpus) // per GPU: end of its current item
	inUse := make([]int, w.gpus)         // per GPU: item running on it, −1 none
	for g := range inUse {
		inUse[g] = -1
	}
	free := make([]int, w.gpus)
	for g := range free {
		free[g] = g
	}
	var run []Running
	now, removes := 0.0, w.removes
	for steps := 0; ; steps++ {
		if steps > 100*len(w.items)+100 {
			t.Fatalf("no end after %d steps", steps)
		}
		for {
			i, g, ok := b.Next(now, free, run)
			if !ok {
				break
			}
			if i < 0 || i >= len(w.items) || state[i] != queued {
				t.Fatalf("t=%g: handed out item %d (state %d)", now, i, state[i])
			}
			if len(g) != w.items[i].Width() {
				t.Fatalf("t=%g: item %d got %v, want %d GPUs", now, i, g, w.items[i].Width())
			}
			for k, x := range g {
				if x < 0 || x >= w.gpus || gone[x] || inUse[x] >= 0 || slices.Contains(g[:k], x) {
					t.Fatalf("t=%g: item %d got GPU %d of %v (gone %v, running %d)", now, i, x, g, gone[x], inUse[x])
				}
				inUse[x], busyUntil[x] = i, now+w.dur[i]
			}
			state[i] = running
			attempts[i]++
			free = slices.DeleteFunc(free, func(x int) bool { return inUse[x] >= 0 })
			run = append(run, Running{Item: i, GPUs: g, Start: now})
		}
		// The next event: an item's end, or a GPU leaving the pool.
		next, k := math.Inf(1), -1
		for j, r := range run {
			if e := r.Start + w.dur[r.Item]; e < next {
				next, k = e, j
			}
		}
		if len(removes) > 0 && removes[0].at <= next {
			now, k = max(now, removes[0].at), -1
			g := removes[0].gpu
			removes = removes[1:]
			wasIn := !gone[g]
			unfit := b.Remove(g)
			if wasIn {
				gone[g] = true
				pool--
			}
			for _, i := range unfit {
				if state[i] != queued || w.items[i].Width() <= pool {
					t.Fatalf("Remove(%d) dropped item %d (state %d, %d GPUs, pool %d)", g, i, state[i], w.items[i].Width(), pool)
				}
				state[i] = dropped
			}
			free = slices.DeleteFunc(free, func(x int) bool { return x == g })
			continue
		}
		if k < 0 {
			if b.Len() > 0 {
				t.Fatalf("t=%g: nothing runs, %d queued, free %v, pool %d gone %v, queue %+v: stalled", now, b.Len(), free, pool, gone, b.ent[b.head:])
			}
			break
		}
		r := run[k]
		run = slices.Delete(run, k, k+1)
		now = next
		for _, x := range r.GPUs {
			inUse[x] = -1
			if !gone[x] {
				free = append(free, x)
			}
		}
		if rng.Float64() < w.fail && attempts[r.Item] <= 2 {
			state[r.Item] = queued
			if !b.Requeue(r.Item, r.GPUs) {
				if w.items[r.Item].Width() <= pool {
					t.Fatalf("Requeue refused item %d (%d GPUs, pool %d)", r.Item, w.items[r.Item].Width(), pool)
				}
				state[r.Item] = dropped
			}
			continue
		}
		state[r.Item] = done
	}
	for i, s := range state {
		if s != done && s != dropped {
			t.Fatalf("item %d ended in state %d", i, s)
		}
		if s == dropped && w.items[i].Width() <= pool {
			t.Fatalf("item %d (%d GPUs) dropped though %d GPUs are left", i, w.items[i].Width(), pool)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("Len %d at the end", b.Len())
	}
}

// checkHolds replays w without failures and checks every held item against its
// reservation: by it with exact durations, and otherwise never later than the
// largest overrun of an item running while it was held, unless calibration
// changed the estimates meanwhile (TestCalibratedHolds checks those).
func checkHolds(t *testing.T, w workload, exact bool) {
	t.Helper()
	dur := w.dur
	if exact {
		dur = make([]float64, len(w.items))
		for i, x := range w.items {
			dur[i] = w.dur[i]
			if x.Known {
				dur[i] = x.Weight
			}
		}
	}
	b, err := NewBlocks(w.items, w.order, w.gpus)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := ReplayBlocks(b, Widths(w.items), dur, w.gpus)
	if err != nil {
		t.Fatal(err)
	}
	late, explained := tl.Lateness(w.items, dur)
	for k, h := range tl.Holds {
		if late[k] > explained[k]+1e-6 && !h.Recalibrated {
			t.Fatalf("item %d held from %g for %g started at %g: %g s late, overruns explain %g (exact %v)",
				h.Item, h.Since, h.At, h.Start, late[k], explained[k], exact)
		}
		if h.Start < h.Since {
			t.Fatalf("hold %+v: started before it was held", h)
		}
	}
}

// TestBackfillNeverDelaysTheHold: with every item known and lasting exactly its
// weight, every held item starts by the reservation made when the hold began,
// whatever was backfilled meanwhile.
func TestBackfillNeverDelaysTheHold(t *testing.T) {
	holds := 0
	for seed := uint64(1000); seed < 1300; seed++ {
		w := genWorkload(seed, false, false)
		for i := range w.items {
			if !w.items[i].Known {
				w.items[i].Known, w.items[i].Weight = true, w.dur[i]
			}
		}
		b, _ := NewBlocks(w.items, w.order, w.gpus)
		tl, err := ReplayBlocks(b, Widths(w.items), w.dur, w.gpus)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tl.Holds {
			holds++
			if h.Start > h.At+1e-9 {
				t.Fatalf("seed %d: item %d held from %g for %g started at %g", seed, h.Item, h.Since, h.At, h.Start)
			}
		}
	}
	if holds < 100 {
		t.Errorf("only %d holds in 300 workloads: the test does not exercise backfilling", holds)
	}
}

// TestBlocksProperty drives 300 random workloads through the checks.
func TestBlocksProperty(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			driveBlocks(t, genWorkload(seed, true, true))
			checkHolds(t, genWorkload(seed, false, false), true)
			checkHolds(t, genWorkload(seed, false, true), false)
		})
	}
}

func FuzzBlocks(f *testing.F) {
	for _, s := range []uint64{1, 2, 42, 1 << 40} {
		f.Add(s, true, true)
		f.Add(s, false, false)
	}
	f.Fuzz(func(t *testing.T, seed uint64, bad, noisy bool) {
		w := genWorkload(seed, bad, noisy)
		driveBlocks(t, w)
		if !bad {
			checkHolds(t, w, !noisy)
		}
	})
}

// TestCalibratedHolds: with every item known and lasting its weight times one
// factor F (a table from a faster or slower machine), every hold made once the
// calibration is in force starts by its reservation, as with a right table; and
// the calibration finds F.
func TestCalibratedHolds(t *testing.T) {
	holds := 0
	for _, f := range []float64{0.1, 0.5, 2, 12} {
		for seed := uint64(2000); seed < 2200; seed++ {
			w := genWorkload(seed, false, false)
			dur := make([]float64, len(w.items))
			for i := range w.items {
				if !w.items[i].Known {
					w.items[i].Known, w.items[i].Weight = true, w.dur[i]
				}
				w.items[i].Weight = max(w.items[i].Weight, 1)
				dur[i] = w.items[i].Weight * f
			}
			b, _ := NewBlocks(w.items, w.order, w.gpus)
			tl, err := ReplayBlocks(b, Widths(w.items), dur, w.gpus)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tl.Holds {
				if h.Version == 0 {
					continue // held before calibration: by the weights
				}
				holds++
				if h.Start > h.At+1e-6*h.At {
					t.Fatalf("F %g seed %d: item %d held from %g for %g started at %g", f, seed, h.Item, h.Since, h.At, h.Start)
				}
			}
			if fs := b.Calibration().Factors(); len(w.items) >= calRun && (len(fs) != 1 || math.Abs(fs[0].Factor-f) > 1e-9*f) {
				t.Fatalf("F %g seed %d: calibrated to %+v", f, seed, fs)
			}
		}
	}
	if holds < 100 {
		t.Errorf("only %d holds under calibration: the test does not exercise it", holds)
	}
}
