// Package tests decides once what a run's tests did, from its merged JUnit files and earlier attempts' XML
// (docs/report.md, "Tests first"); the report, annotations, PR comment and outputs read its Result.
package tests

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Test is one test of the run, as the report and the annotations show it; its Result is how it ended.
type Test struct {
	junit.Case
	// TestRef's Item is the key of the item that ran it, or an opaque suite's label; its ID the pytest node id when
	// known, else "classname::name", else its name.
	record.TestRef
	Suite string
	// Flaky: it passed, and failed (or died) in an earlier attempt of its item.
	Flaky bool
}

// Result is what the run's tests did.
type Result struct {
	// Known: the merged JUnit holds at least one test.
	Known  bool
	Counts record.TestCounts
	// Suites are the counts of each suite with a merged file, by label.
	Suites map[string]record.TestCounts
	// Bad are the failed, errored and unfinished tests, by suite, item key, then file order.
	Bad []Test
	// Flaky are the tests that passed only on a later attempt of their item.
	Flaky []Test
	// Files are the merged JUnit file of each suite, relative to the log dir.
	Files map[string]string
	// Roots make a place relative (Test.Where); Level is the run's test level.
	Roots []string
	Level string

	passed map[record.TestRef]bool // the tests that passed (key), for Compare
}

// Read reads the tests of run r; only regular .xml files, as a log dir may come from another workflow's artifact.
func Read(r *record.Run, suites []verdict.Suite) Result {
	res := Result{Suites: map[string]record.TestCounts{}, Files: map[string]string{}, Roots: r.Meta.Roots, Level: r.Meta.Level,
		passed: map[record.TestRef]bool{}}
	if r.Dir == "" {
		return res
	}
	order := map[string]int{}
	for i, s := range suites {
		order[s.Label] = i
	}
	earlier := earlierBad(r, suites)
	for _, rel := range r.Meta.JUnitFiles() {
		cases, ok := readRegular(filepath.Join(r.Dir, filepath.FromSlash(rel)))
		if !ok {
			continue
		}
		label := strings.TrimSuffix(path.Base(rel), ".xml")
		res.Files[label] = rel
		counts := res.Suites[label]
		for _, c := range cases {
			if c.AboutItem() {
				continue
			}
			t := Test{Case: c, TestRef: record.TestRef{Item: itemKey(r, label, c.Tag), ID: ID(c)}, Suite: label}
			t.Flaky = c.Result == junit.CasePassed && earlier[t.Item][canon(t.ID)]
			counts.Add(countOf(t))
			switch {
			case c.Result.Bad():
				res.Bad = append(res.Bad, t)
			case c.Result == junit.CasePassed:
				res.passed[key(t.TestRef)] = true
				if t.Flaky {
					res.Flaky = append(res.Flaky, t)
				}
			}
		}
		res.Suites[label] = counts
		res.Counts.Add(counts)
	}
	res.Known = res.Counts.Total > 0
	for _, list := range [][]Test{res.Bad, res.Flaky} {
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i], list[j]
			if order[a.Suite] != order[b.Suite] {
				return order[a.Suite] < order[b.Suite]
			}
			return a.Item < b.Item
		})
	}
	return res
}

// ID is a test case's name: its pytest node id, else "classname::name", else its name.
func ID(c junit.Case) string {
	if id, ok := junit.PytestNodeID(c); ok {
		return id
	}
	if c.Classname != "" {
		return c.Classname + "::" + c.Name
	}
	return c.Name
}

// key matches a test across attempts and runs.
func key(t record.TestRef) record.TestRef { return record.TestRef{Item: t.Item, ID: canon(t.ID)} }

// canon is "classname::name", as xunit2 gives no file for a passed test.
func canon(id string) string {
	if file, cls, name := junit.NodeCase(id); file != "" {
		return cls + "::" + name
	}
	return id
}

func countOf(t Test) record.TestCounts {
	c := record.TestCounts{Total: 1}
	switch t.Result {
	case junit.CasePassed:
		c.Passed = 1
		if t.Flaky {
			c.Flaky = 1
		}
	case junit.CaseSkipped:
		c.Skipped = 1
	case junit.CaseFailed:
		c.Failed = 1
	case junit.CaseErrored:
		c.Errored = 1
	case junit.CaseUnfinished:
		c.Errored, c.Unfinished = 1, 1
	}
	return c
}

// itemKey is the key of the item a merged file's sgpu.item names.
func itemKey(r *record.Run, label, item string) string { return r.ItemOf(label, item).Key() }

// readRegular reads the cases of the JUnit file p when it is a regular .xml file.
func readRegular(p string) ([]junit.Case, bool) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || !strings.HasSuffix(p, ".xml") {
		return nil, false
	}
	cases, err := junit.ReadCases(p)
	return cases, err == nil
}

// earlierBad are, by item key, the bad tests of a retried item's earlier attempts (logdir.Layout.ItemAttemptJUnit).
func earlierBad(r *record.Run, suites []verdict.Suite) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	l := logdir.Layout{Root: r.Dir}
	for _, s := range suites {
		for _, it := range s.Items {
			key := itemKey(r, it.Label, it.Tag)
			for n := 1; n < it.Tries; n++ {
				p := l.ItemAttemptJUnit(it.Label, it.Tag, n)
				ids := map[string]bool{}
				cases, _ := readRegular(p)
				for _, c := range cases {
					if !c.AboutItem() && c.Result.Bad() {
						ids[canon(ID(c))] = true
					}
				}
				q := p + rerun.PartialSuffix
				if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() && fi.Size() <= junit.MaxFileBytes {
					if data, err := os.ReadFile(q); err == nil {
						for _, id := range rerun.ParseProgress(data).Unfinished() {
							ids[canon(id)] = true
						}
					}
				}
				if len(ids) > 0 && out[key] == nil {
					out[key] = map[string]bool{}
				}
				for id := range ids {
					out[key][id] = true
				}
			}
		}
	}
	return out
}
