package report

import (
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// A suite every finished item of which is no-run wrote no JUnit at all: one cause,
// said once for it (NoJUnitAdvice); a suite with one no-run item among others is a
// tag round-trip problem of that item, said as before.
func TestNoJUnitSuites(t *testing.T) {
	it := func(label, tag string, o outcome.Outcome) verdict.Item {
		return verdict.Item{ItemID: record.ItemID{Label: label, Tag: tag}, Finished: true, Result: record.Result{Outcome: o}}
	}
	s := Stats{
		Misses:  []verdict.Item{it("plain", "a", outcome.NoRun), it("mixed", "a", outcome.OK)},
		Unknown: []verdict.Item{it("plain", "b", outcome.NoRun), it("mixed", "b", outcome.NoRun), it("other", "a", outcome.Failed)},
	}
	for _, list := range [][]verdict.Item{s.Misses, s.Unknown} {
		for _, i := range list {
			if i.Outcome == outcome.NoRun {
				s.NoRun = append(s.NoRun, i)
			}
		}
	}
	s.noJUnit()
	if len(s.NoJUnit) != 1 || s.NoJUnit[0] != (NoJUnitSuite{Label: "plain", Items: 2}) {
		t.Fatalf("NoJUnit = %+v, want plain's 2 items", s.NoJUnit)
	}
	got := NoJUnitAdvice(s.NoJUnit[0], func(p string) string { return "--junit-optional " + p })
	want := `suite "plain" wrote no JUnit XML: none of its 2 items wrote its file, so each is no-run and fails. A suite of plain scripts ` +
		`writes none: judge its items by their exit codes with --junit-optional 'plain/*'. If it should write JUnit, check the tag round ` +
		`trip: sgpu-queue verify`
	if got != want {
		t.Errorf("advice:\n%s\nwant:\n%s", got, want)
	}
	md := headline(&record.Run{}, s, Options{}) + itemsLine(&record.Run{}, s, Options{})
	if strings.Count(md, "wrote no JUnit XML") != 1 || !strings.Contains(md, "**1 item(s) ran nothing**") || !strings.Contains(md, "`mixed/b`") ||
		strings.Contains(md, "`plain/a`") {
		t.Errorf("the report's cautions:\n%s", md)
	}
}
