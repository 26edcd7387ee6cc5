// Package report is phase 7: the schedule report (report/schedule.md, also the job
// summary), computed from a run's own files so that `sgpu-queue report LOGDIR` can
// rebuild it at any time.
package report

import (
	"sort"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Stats are the figures of a run's item phase, from its timings rows.
type Stats struct {
	GPUs        int
	Items       int // queued items
	Failed      int // failed items (last attempt)
	Attempts    int // timings rows
	Work        float64
	Wall        float64
	Bound       float64 // max(work/N, largest row): no schedule could have been faster
	Largest     float64
	LargestKey  string
	Utilisation float64 // work / (wall × N)
	AboveBound  float64 // wall/bound − 1
	PerGPU      []GPUStats
	Passed      bool
	Cancelled   bool
}

// GPUStats is one GPU's share of the run.
type GPUStats struct {
	GPU    string
	Busy   float64
	Idle   float64
	Items  int
	Failed int
}

// Compute derives the stats of a run.
func Compute(r *logdir.Run, suites []verdict.Suite) Stats {
	s := Stats{GPUs: len(r.Meta.GPUs), Cancelled: r.Meta.Cancelled, Passed: true}
	for _, su := range suites {
		s.Items += len(su.Items)
		s.Failed += su.Failed
		if su.Failed > 0 {
			s.Passed = false
		}
	}
	per := map[string]*GPUStats{}
	for _, g := range r.Meta.GPUs {
		per[g] = &GPUStats{GPU: g}
	}
	for _, t := range r.Timings {
		s.Attempts++
		s.Work += t.Secs
		if t.Secs > s.Largest {
			s.Largest = t.Secs
			s.LargestKey = t.Label + "/" + t.Item
		}
		if t.EndOff > s.Wall {
			s.Wall = t.EndOff
		}
		g, ok := per[t.GPU]
		if !ok {
			g = &GPUStats{GPU: t.GPU}
			per[t.GPU] = g
		}
		g.Busy += t.Secs
		g.Items++
		if t.RC != 0 {
			g.Failed++
		}
	}
	if r.Meta.Wall > s.Wall {
		s.Wall = r.Meta.Wall
	}
	if s.GPUs == 0 {
		s.GPUs = len(per)
	}
	if s.GPUs > 0 {
		s.Bound = max(s.Work/float64(s.GPUs), s.Largest)
		if s.Wall > 0 {
			s.Utilisation = s.Work / (s.Wall * float64(s.GPUs))
		}
	}
	if s.Bound > 0 {
		s.AboveBound = s.Wall/s.Bound - 1
	}
	for _, g := range per {
		g.Idle = max(0, s.Wall-g.Busy)
		s.PerGPU = append(s.PerGPU, *g)
	}
	order := map[string]int{}
	for i, g := range r.Meta.GPUs {
		order[g] = i
	}
	sort.SliceStable(s.PerGPU, func(i, j int) bool {
		oi, iok := order[s.PerGPU[i].GPU]
		oj, jok := order[s.PerGPU[j].GPU]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return s.PerGPU[i].GPU < s.PerGPU[j].GPU
	})
	return s
}
