// Package report writes a run's schedule report (report/schedule.md, the job summary, report/timeline.svg)
// from the run's own files, so `sgpu-queue report LOGDIR` can rebuild it at any time.
package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/tests"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// SplitPays is the least saving, as a fraction of the hindsight makespan, that makes splitting the largest item
// worth an author's time; SplitMinSaving the least in seconds.
const (
	SplitPays      = 0.01
	SplitMinSaving = 60.0
)

// Stats are the figures of a run, from its queue and timings rows.
type Stats struct {
	GPUs     int
	Items    int            // queued items
	Finished int            // queued items with a timings row
	Failed   int            // failed items (last attempt; an item that never finished counts)
	NoRun    []verdict.Item // items whose last attempt ran nothing, in key order
	// NoJUnit are the suites that wrote no JUnit at all, said once per suite (NoJUnitAdvice).
	NoJUnit []NoJUnitSuite
	// Work is GPU-seconds (4 GPUs × 10 s is 40 s), so work/N is what N GPUs need.
	Work  float64
	Wall  float64
	Bound float64 // max(work/N, largest row): no schedule could have been faster
	// Mixed: some attempt ran on several GPUs (a multi-GPU item).
	Mixed bool
	// Largest is the longest attempt, the first of equals; its Secs is 0 when no attempt took time.
	Largest     record.Attempt
	Utilisation float64 // work / (wall × N)
	AboveBound  float64 // wall/bound − 1
	Quality     float64 // Wall / Split.Before, the hindsight makespan
	Split       Split
	Last        verdict.Item // the item that ended last: it set the wall clock
	Gaps        Gaps
	PerGPU      []GPUStats
	Passed      bool

	// Tests are what the run's tests did; Change is that against the base branch's last run, nil without one.
	Tests  tests.Result
	Change *tests.Change

	Estimated float64        // sum of the estimates of the finished items that had one
	Misses    []verdict.Item // finished items with an estimate, worst absolute miss first
	Unknown   []verdict.Item // items that had no estimate, in dispatch order
	Missing   []verdict.Item // queued items without a timings row, in dispatch order
}

// Split says whether halving the largest item would shorten the hindsight makespan by SplitPays.
type Split struct {
	Binding bool // largest ≥ work/N: the largest item alone sets the lower bound
	// Before is the hindsight makespan: the default scheduler on this run's measured durations, what perfect estimates
	// would give.
	Before float64
	After  float64 // hindsight makespan with the largest item in two halves
	Saving float64 // Before − After
	Pays   bool
}

// Gaps are the dispatch gaps between one item's end and the next start on a GPU: our own overhead.
type Gaps struct {
	Count int
	Total float64
	Mean  float64
	Max   float64
}

// miss is an item's duration − its estimate (positive: slower than estimated).
func miss(it verdict.Item) float64 { return it.Seconds - it.Estimate }

// relMiss is miss/estimate; +Inf for a zero estimate.
func relMiss(it verdict.Item) float64 {
	if it.Estimate <= 0 {
		return math.Inf(1)
	}
	return miss(it) / it.Estimate
}

// GPUStats is one GPU's share of the run and its lane of the timeline; a multi-GPU item counts on each of its GPUs.
type GPUStats struct {
	GPU     string
	Rows    []record.Attempt // its attempts in start order
	Busy    float64
	Idle    float64 // wall − busy
	Failed  int
	LastEnd float64 // when its last item ended; wall − LastEnd is its idle tail
}

// Compute derives the stats of a run.
func Compute(r *record.Run, suites []verdict.Suite) Stats {
	s := Stats{GPUs: len(r.Meta.GPUs), Passed: true}
	s.Tests = tests.Read(r, suites)
	s.Change = tests.Compare(s.Tests, r.Meta.BaseTests)
	for _, su := range suites {
		s.Items += len(su.Items)
		s.Failed += su.Failed
		if !su.Passed() {
			s.Passed = false
		}
	}
	s.PerGPU = lanesOf(r)
	lane := map[string]int{}
	for i, g := range s.PerGPU {
		lane[g.GPU] = i
	}
	durs := make([]float64, 0, len(r.Attempts))
	widths := make([]int, 0, len(r.Attempts))
	for _, t := range r.Attempts {
		s.Work += t.GPUSeconds()
		durs = append(durs, t.Secs)
		widths = append(widths, len(t.GPUNames()))
		s.Mixed = s.Mixed || len(t.GPUNames()) > 1
		if t.Secs > s.Largest.Secs {
			s.Largest = t
		}
		if t.EndOff > s.Wall {
			s.Wall = t.EndOff
		}
		for _, id := range t.GPUNames() {
			g := &s.PerGPU[lane[id]]
			g.Busy += t.Secs
			if t.Outcome.Failed() {
				g.Failed++
			}
			g.LastEnd = max(g.LastEnd, t.EndOff)
		}
	}
	if r.Meta.Wall > s.Wall {
		s.Wall = r.Meta.Wall
	}
	if s.GPUs == 0 {
		s.GPUs = len(s.PerGPU)
	}
	if s.GPUs > 0 {
		s.Bound = max(s.Work/float64(s.GPUs), s.Largest.Secs)
		if s.Wall > 0 {
			s.Utilisation = s.Work / (s.Wall * float64(s.GPUs))
		}
	}
	if s.Bound > 0 {
		s.AboveBound = s.Wall/s.Bound - 1
	}
	if !s.Mixed {
		widths = nil
	}
	s.Split = splitLargest(durs, widths, s.GPUs)
	if s.Split.Before > 0 {
		s.Quality = s.Wall / s.Split.Before
	}
	s.Split.Binding = s.GPUs > 0 && s.Largest.Secs > 0 && s.Largest.Secs >= s.Work/float64(s.GPUs)
	s.Gaps = gaps(s.PerGPU)
	for i := range s.PerGPU {
		s.PerGPU[i].Idle = max(0, s.Wall-s.PerGPU[i].Busy)
	}
	s.items(suites)
	return s
}

// items fills the per-item lists: each item's estimate against its last attempt.
func (s *Stats) items(suites []verdict.Suite) {
	for _, it := range verdict.Select(suites, func(verdict.Item) bool { return true }) {
		if it.Finished {
			s.Finished++
			if it.Last().EndOff >= s.Last.Last().EndOff {
				s.Last = it
			}
		}
		if it.Outcome == outcome.NoRun {
			s.NoRun = append(s.NoRun, it)
		}
		switch {
		case !it.Finished:
			s.Missing = append(s.Missing, it)
		case !it.Known:
			s.Unknown = append(s.Unknown, it)
		default:
			s.Estimated += it.Estimate
			s.Misses = append(s.Misses, it)
		}
	}
	sort.SliceStable(s.NoRun, func(i, j int) bool { return s.NoRun[i].Key() < s.NoRun[j].Key() })
	s.noJUnit()
	sort.SliceStable(s.Misses, func(i, j int) bool {
		a, b := math.Abs(miss(s.Misses[i])), math.Abs(miss(s.Misses[j]))
		if a != b {
			return a > b
		}
		return s.Misses[i].Key() < s.Misses[j].Key()
	})
}

// hindsight replays the measured durations on n GPUs as a run dispatches them (schedule.Setup.Wall);
// widths[i] is item i's GPUs (nil: one each).
func hindsight(durs []float64, widths []int, n int) float64 {
	if n <= 0 || len(durs) == 0 {
		return 0
	}
	policy := schedule.PolicyLPT
	items := make([]schedule.Item, len(durs))
	for i, d := range durs {
		items[i] = schedule.Item{Weight: d, Known: true, Seq: i, GPUs: 1}
		if widths != nil {
			items[i].GPUs, policy = widths[i], schedule.DefaultPolicy
			n = max(n, widths[i])
		}
	}
	s, err := schedule.NewSetup(policy, items, n)
	if err != nil {
		return 0
	}
	wall, _ := s.Wall(durs) // 0 when the replay fails, as when the setup does
	return wall
}

// splitLargest compares the hindsight makespan with the largest duration halved.
func splitLargest(durs []float64, widths []int, n int) Split {
	var sp Split
	if n <= 0 || len(durs) == 0 {
		return sp
	}
	sp.Before = hindsight(durs, widths, n)
	li := 0
	for i, d := range durs {
		if d > durs[li] {
			li = i
		}
	}
	halved := append([]float64(nil), durs...)
	halved[li] /= 2
	halved = append(halved, halved[li])
	if widths != nil {
		widths = append(append([]int(nil), widths...), widths[li])
	}
	sp.After = hindsight(halved, widths, n)
	sp.Saving = max(0, sp.Before-sp.After)
	sp.Pays = sp.Before > 0 && sp.Saving >= SplitPays*sp.Before && sp.Saving >= SplitMinSaving
	return sp
}

// gaps measures, per GPU, the time from one attempt's end to the next one's start.
func gaps(ls []GPUStats) Gaps {
	var g Gaps
	for _, l := range ls {
		for i := 1; i < len(l.Rows); i++ {
			d := max(0, l.Rows[i].StartOff-l.Rows[i-1].EndOff)
			g.Count++
			g.Total += d
			g.Max = max(g.Max, d)
		}
	}
	if g.Count > 0 {
		g.Mean = g.Total / float64(g.Count)
	}
	return g
}

// NoJUnitSuite is a suite none of whose finished items wrote JUnit (each no-run).
type NoJUnitSuite struct {
	Label string
	Items int // its no-run items
}

// noJUnit finds the suites every finished item of which is no-run.
func (s *Stats) noJUnit() {
	finished, norun := map[string]int{}, map[string]int{}
	for _, list := range [][]verdict.Item{s.Misses, s.Unknown} {
		for _, it := range list {
			finished[it.Label]++
		}
	}
	for _, it := range s.NoRun {
		norun[it.Label]++
	}
	for _, l := range slices.Sorted(maps.Keys(norun)) {
		if norun[l] == finished[l] {
			s.NoJUnit = append(s.NoJUnit, NoJUnitSuite{Label: l, Items: norun[l]})
		}
	}
}

// NoJUnitAdvice is what to say of a suite that wrote no JUnit; junitOptional spells the setting for the reader's face.
func NoJUnitAdvice(n NoJUnitSuite, junitOptional func(pattern string) string) string {
	return fmt.Sprintf("suite %q wrote no JUnit XML: none of its %s wrote its file, so each is no-run and fails. A suite of plain "+
		"scripts writes none: judge its items by their exit codes with %s. If it should write JUnit, check the tag round trip: "+
		"sgpu-queue verify", n.Label, textfmt.Count(n.Items, "item"), junitOptional("'"+n.Label+"/*'"))
}
