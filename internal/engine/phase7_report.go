package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// report is phase 7: the merged JUnit per suite (doc; nil writes none), recorded
// in run.json, then the report, which shows each failed item's test cases from it
// (docs/report.md). wait ends a wait for another run's hold on the JUnit dir.
func (r *run) report(wait context.Context, run *record.Run, doc func(verdict.Suite) (*junit.Doc, error)) {
	r.obs.Phase(7, "report")
	if doc != nil {
		r.res.JUnit = junit.WriteSuites(wait, r.junitDirRoot(), r.junitDir(), r.res.Suites, doc, junitLog{r})
	}
	r.recordJUnit(&run.Meta)
	r.res.Stats = report.Compute(run, r.res.Suites)
	if run.Meta.Merge == nil { // a merge's shards said it
		// Once for each suite that wrote no JUnit at all: why its items are no-run,
		// and how to mark them, instead of one tag round-trip hint per item.
		for _, s := range r.res.Stats.NoJUnit {
			r.warn(report.NoJUnitAdvice(s, func(p string) string { return r.o.Face.Set("junit-optional", p) }))
		}
	}
	r.writeReport(run)
}

// recordJUnit puts the merged JUnit files into run.json, relative to the log dir,
// so merge finds them beside a downloaded log dir.
func (r *run) recordJUnit(meta *record.Meta) {
	var rels []string
	for _, p := range r.res.JUnit {
		rel, err := filepath.Rel(r.o.LogDir, p)
		if err != nil {
			r.warn(fmt.Sprintf("JUnit file %s: %v; the report and merge will not find it", p, err))
			continue
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	if meta.Shard != nil {
		meta.Shard.JUnit = rels
	} else {
		meta.JUnit = rels
	}
	r.writeMeta(meta)
}

// writeReport is phase 7's report.
func (r *run) writeReport(run *record.Run) {
	files, err := report.WriteFiles(r.layout, run, r.res.Suites, r.res.Stats)
	r.res.Markdown = files.Markdown
	r.res.Report = files.MDPath
	for _, e := range files.NotWritten {
		r.lost("the report", e.Path, e.Err)
	}
	if err != nil && len(files.NotWritten) == 0 {
		r.warn(err.Error())
	}
	if r.o.Presentation.RunURL != "" {
		o := report.Options{RunURL: r.o.Presentation.RunURL}
		r.res.Markdown = report.Render(run, r.res.Suites, r.res.Stats, o)
		r.res.Comment = report.Comment(run, r.res.Suites, r.res.Stats, o)
	}
	s := r.res.Stats
	r.printf("  wall %s for %s of work on %d GPUs: utilisation %.1f %%, %.1f %% above the lower bound %s\n",
		textfmt.Dur(s.Wall), textfmt.Dur(s.Work), s.GPUs, 100*s.Utilisation, 100*s.AboveBound, textfmt.Dur(s.Bound))
	if slices.Contains(r.res.NotWritten, r.rel(files.MDPath)) {
		r.printf("  report NOT written (%s)\n", r.rel(r.res.Report))
		return
	}
	r.printf("  report → %s\n", r.rel(r.res.Report))
}

// mergedJUnit is a run's JUnit file per suite, from the XML its items wrote since
// phase 4 started; a failed item without any is an error case naming its log. nil
// without a JUnit prefix.
func (r *run) mergedJUnit(ctx context.Context, started time.Time) func(verdict.Suite) (*junit.Doc, error) {
	prefix := r.junitPrefix()
	if prefix == "" {
		return nil
	}
	if started.IsZero() {
		started = time.Now() // no item ran: no XML of this run can exist
	}
	suffix := r.junitSuffix()
	return func(s verdict.Suite) (*junit.Doc, error) {
		src := junit.Source{
			Dir:    prefix + s.Label,
			Suffix: suffix,
			Named:  r.junitNamed(s.Label),
			LogDir: r.o.LogDir,
		}
		return junit.Merge(ctx, s, src, started)
	}
}

// junitLog is the run's console, warnings and lost files as junit.WriteSuites
// tells them.
type junitLog struct{ r *run }

func (l junitLog) Printf(format string, a ...any)    { l.r.printf(format, a...) }
func (l junitLog) Warn(msg string)                   { l.r.warn(msg) }
func (l junitLog) Lost(what, path string, err error) { l.r.lost(what, path, err) }
func (l junitLog) Rel(path string) string            { return l.r.rel(path) }

func (r *run) junitDir() string {
	switch dir := r.o.JUnit.Dir; {
	case dir == "":
		return filepath.Join(r.o.Target.RepoRoot, "test-results", "junit")
	case !filepath.IsAbs(dir):
		return filepath.Join(r.o.Target.RepoRoot, dir)
	default:
		return dir
	}
}

// junitNamed says whether sgpu-queue, not the suite, named its items' JUnit files.
func (r *run) junitNamed(label string) bool {
	a, _ := adapter.New(r.res.Configs[label]) // its config was checked before the run
	return adapter.JUnitOf(a) != adapter.JUnitUnderPrefix
}
