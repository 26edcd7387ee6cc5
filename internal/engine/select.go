package engine

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// SuitesVar selects suites as --suites does when that is not given (TE's scope job
// sets it); set but empty, it selects none.
const SuitesVar = "TE_CI_SUITES"

// Selection is --suites, else $TE_CI_SUITES; the others pass without running
// (docs/config.md "Selecting suites").
type Selection struct {
	Labels []string
	Given  bool
}

// SuiteNames splits a --suites value: labels separated by white space or commas.
func SuiteNames(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// selectSuites splits the suites into those that run and those the selection leaves
// out, in config order; a name no config defines is an error.
func (r *run) selectSuites(all []config.Suite) (run, left []config.Suite, err error) {
	names, from := r.o.Suites.Labels, r.o.Face.Name("suites")
	if !r.o.Suites.Given {
		v, set := hook.Env(r.o.Target.Env).Get(SuitesVar)
		if !set {
			return all, nil, nil
		}
		names, from = SuiteNames(v), SuitesVar
	}
	var labels []string
	for _, s := range all {
		labels = append(labels, s.Label)
	}
	var unknown []string
	for _, n := range names {
		if !slices.Contains(labels, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, nil, fmt.Errorf("%s: no config defines a suite %s (%s define %s): name suites by their labels",
			from, quoteAll(unknown), strings.Join(r.o.Configs.Paths(), ", "), strings.Join(labels, ", "))
	}
	for _, s := range all {
		if slices.Contains(names, s.Label) {
			run = append(run, s)
		} else {
			left = append(left, s)
		}
	}
	return run, left, nil
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// noneSelected ends a run whose --suites selected no suite: every suite passes "not
// selected", and no GPU is needed.
func (r *run) noneSelected() (*Result, error) {
	r.printf("  no suite selected (%s or %s): nothing runs\n", r.o.Face.Name("suites"), SuitesVar)
	if !r.o.DryRun {
		lock, err := r.layout.Claim(r.claim(nil, gpu.Pool{}), r.o.LogDirReuse)
		if err != nil {
			return nil, usage(r.logDirError(err))
		}
		defer lock.Release()
		r.obs.Phase(5, "per-suite verdicts")
		for _, s := range r.unselected {
			v := verdict.Suite{Label: s.Label, LogFile: s.LogFile, Mode: string(s.Mode), Skip: outcome.NotSelected}
			r.res.Suites = append(r.res.Suites, v)
			if err := verdict.Write(r.layout, []verdict.Suite{v}); err != nil {
				r.lost(fmt.Sprintf("the verdict of suite %q", s.Label), refusedPath(err, r.layout.SuiteRC(s.LogFile)), err)
				continue
			}
			r.printf("  %-12s %s  → %s\n", s.Label, outcome.NotSelected.Line(), r.rel(r.layout.SuiteRC(s.LogFile)))
		}
	}
	r.summary()
	r.res.ExitCode = exitcode.OK
	return r.res, nil
}
