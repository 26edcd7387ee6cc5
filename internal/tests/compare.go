package tests

import (
	"github.com/rocm/sgpu-queue/internal/record"
)

// Change is a run's tests against the base branch's last run (docs/action.md, "The base branch's counts").
type Change struct {
	Base *record.BaseTests
	// SameLevel: the base ran at this level, so Delta (this run's counts minus the base's) compares.
	SameLevel bool
	Delta     record.TestCounts
	// New are this run's bad tests the base did not fail; Fixed those the base failed that passed here.
	New, Fixed []record.TestRef
}

// Any reports whether the counts, a new failure or a fixed one changed.
func (c *Change) Any() bool {
	if c == nil {
		return false
	}
	return c.SameLevel && c.Delta != (record.TestCounts{}) || len(c.New) > 0 || len(c.Fixed) > 0
}

// Compare is res against base; nil without a base or tests.
func Compare(res Result, base *record.BaseTests) *Change {
	if base == nil || !res.Known {
		return nil
	}
	c := &Change{Base: base, SameLevel: base.Level == res.Level}
	if c.SameLevel {
		d := res.Counts
		b := base.Tests
		c.Delta = record.TestCounts{Total: d.Total - b.Total, Passed: d.Passed - b.Passed, Failed: d.Failed - b.Failed,
			Errored: d.Errored - b.Errored, Skipped: d.Skipped - b.Skipped, Flaky: d.Flaky - b.Flaky, Unfinished: d.Unfinished - b.Unfinished}
	}
	failed := map[record.TestRef]bool{}
	for _, t := range base.Failed {
		failed[key(t)] = true
	}
	if base.MoreFailed == 0 {
		for _, t := range res.Bad {
			if !failed[key(t.TestRef)] {
				c.New = append(c.New, t.TestRef)
			}
		}
	}
	for _, t := range base.Failed {
		if res.passed[key(t)] {
			c.Fixed = append(c.Fixed, t)
		}
	}
	return c
}

// Record is what a run on a branch saves for the pull requests into it.
func (res Result) Record(ref, sha, runID string) record.BaseTests {
	b := record.BaseTests{Format: record.BaseFormat, Ref: ref, SHA: sha, RunID: runID, Level: res.Level, Tests: res.Counts,
		Suites: res.Suites, Failed: []record.TestRef{}}
	for _, t := range res.Bad {
		if len(b.Failed) == record.MaxBaseFailed {
			b.MoreFailed++
			continue
		}
		b.Failed = append(b.Failed, t.TestRef)
	}
	return b
}
