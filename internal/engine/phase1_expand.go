package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

type expansion struct {
	// items is the run's one list of items: phase 2 narrows and orders it in place;
	// Seq stays an item's listing position, the scheduler's tie-break.
	items  []expand.Item
	suites map[string]config.Suite
	census weights.Census
	rows   []record.ItemID
	listed []record.ItemID // a shard's whole listing, before keepShard
}

// expand is phase 1: the setup= commands, then every listing, pinned (suitePin) so
// capability probes answer for the GPUs the items will get. A dry run runs setup=
// too: the listing needs it.
func (r *run) expand(ctx context.Context, suites []config.Suite, pool gpu.Pool) (*expansion, error) {
	req := expand.Request{
		Suites: suites, Target: *r.target,
		Pin:     func(s config.Suite) []string { return suitePin(s, pool) },
		Timeout: r.o.Target.ListTimeout, SetupTimeout: r.o.Target.SetupTimeout,
		// A dry run writes nothing: the listings' stderr is not kept.
		Log: io.Discard,
	}
	req.Env = r.target.Env.With(pool.Pin(pool.IDs[0])...)
	if !r.o.DryRun {
		f, err := r.layout.Create(r.layout.ExpandLog())
		if err != nil {
			return nil, r.pathError(r.layout.ExpandLog(), err)
		}
		defer f.Close()
		req.Log = f
		req.SetupLog = func(s config.Suite) (io.WriteCloser, string, error) {
			path := r.layout.SetupLog(s.Label)
			f, err := r.layout.Create(path)
			if err != nil {
				return nil, r.rel(path), r.pathError(path, err)
			}
			return f, r.rel(path), nil
		}
	}
	res, err := expand.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, st := range res.Setups {
		r.printSetup(st)
	}
	for _, w := range res.Warnings {
		r.warn(w)
	}
	e := &expansion{items: res.Items, census: res.Census, rows: res.Rows, suites: map[string]config.Suite{}}
	for _, s := range suites {
		e.suites[s.Label] = s
		n := 0
		for _, it := range res.Items {
			if it.Label == s.Label {
				n++
			}
		}
		r.printf("  %-12s %4d item(s) queued, census %s\n", s.Label, n, censusNote(res, s.Label))
	}
	return e, nil
}

// censusNote says what a suite's census is: its own census's count, "-" for an
// opaque suite, else its listing's count.
func censusNote(res *expand.Result, label string) string {
	keys := res.Census[label]
	switch {
	case res.OwnCensus[label] && keys == nil:
		return "failed"
	case res.OwnCensus[label]:
		return fmt.Sprint(len(keys))
	case len(keys) == 1 && keys[label]:
		return "-"
	}
	return fmt.Sprintf("%d (its listing)", len(keys))
}

func (r *run) printSetup(st expand.SetupRun) {
	r.printf("  %-12s setup ok (%s)", st.Suite.Label, textfmt.Dur(st.Secs))
	if st.Log != "" {
		r.printf("  → %s", st.Log)
	}
	if len(st.Shared) > 0 {
		r.printf("  (also for %s)", strings.Join(st.Shared, ", "))
	}
	r.printf("\n")
}

// checkWidths fits the items to a pool of gpus GPUs, warning of each width clamped.
func (r *run) checkWidths(e *expansion, gpus int) error {
	sized := func(it expand.Item) bool {
		_, ok := it.Adapter.(adapter.Sized)
		return ok
	}
	warns, err := schedule.FitWidths(e.items, e.suites, sized, gpus, r.o.Face)
	for _, w := range warns {
		r.warn(w)
	}
	return err
}

// junitOptional reads the --junit-optional patterns (docs/outcomes.md).
func junitOptional(face optname.Face, patterns []string) ([]weights.KeyPattern, error) {
	var out []weights.KeyPattern
	var errs []error
	for _, p := range patterns {
		kp, err := weights.ParseKeyPattern(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: not a glob (%w)", face.Name("junit-optional"), p, err))
		}
		out = append(out, kp)
	}
	return out, errors.Join(errs...)
}

// checkOptional warns of each --junit-optional pattern that matches no item, before
// the shard filter so every shard says alike: a misspelt key would hide silently.
func (r *run) checkOptional(items []expand.Item) {
	for _, p := range r.optional {
		if !slices.ContainsFunc(items, func(it expand.Item) bool { return p.Match(it.Key()) }) {
			r.warn(fmt.Sprintf("%s %q matches no item of this run: a pattern is matched against each item's key, label/tag "+
				"(a whole opaque suite: its label), * and ? across / too, e.g. torch/* for every item of suite torch",
				r.o.Face.Name("junit-optional"), textfmt.Printable(p.String())))
		}
	}
}

// suitePin pins a suite's listing and setup to the pool's first GPUs, as many as its
// items take.
func suitePin(s config.Suite, pool gpu.Pool) []string {
	n := 1
	switch w, all := s.Width(); {
	case all:
		n = len(pool.IDs)
	case w > 1:
		n = min(w, len(pool.IDs))
	}
	return pool.Pin(strings.Join(pool.IDs[:n], ","))
}
