package junit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Log is how WriteSuites reports console lines, warnings and files it could not write.
type Log interface {
	Printf(format string, a ...any)
	Warn(msg string)
	Lost(what, path string, err error)
	Rel(path string) string
}

// item is a suite's verdict as the merge reads it; Named when sgpu-queue named its files (ItemFile).
type item struct {
	verdict.Item
	log   string
	named bool
}

// itemsOf is suite s's verdicts as the merge reads them from src.
func itemsOf(s verdict.Suite, src Source) []item {
	items := make([]item, len(s.Items))
	for i, it := range s.Items {
		items[i] = item{Item: it, named: src.Named}
		if it.Started {
			items[i].log = filepath.Join(src.LogDir, it.LogRel)
		}
	}
	return items
}

// cut reports whether the item's outcome is cut-off (docs/outcomes.md).
func (it item) cut() bool { return it.Outcome == outcome.CutOff }

// note is its verdict's note; a cut-off item's is said by cut already.
func (it item) note() string {
	if it.cut() {
		return ""
	}
	return it.Note
}

// WriteSuites writes into dir each run suite's merged JUnit file and returns the paths written. It never replaces
// a file this tool did not write, and keeps other runs' files (docs/files.md#merged-junit-and-its-manifest).
// dir is locked while its manifest is rewritten, so two runs at once keep each other's entries; wait ends the wait.
func WriteSuites(wait context.Context, root, dir string, suites []verdict.Suite, doc func(verdict.Suite) (*Doc, error), log Log) []string {
	if err := safefs.MkdirAll(root, dir); err != nil {
		log.Lost("the merged JUnit", dir, err)
		return nil
	}
	release, err := safefs.LockDir(wait, "JUnit dir", dir, 0)
	var le *safefs.LockError
	switch {
	case errors.As(err, &le) && !le.Busy:
		log.Warn(err.Error() + "; written without it (a run writing the same directory at this moment may lose its manifest entries)")
	case err != nil:
		log.Lost("the merged JUnit", dir, err)
		return nil
	default:
		defer release()
	}
	outs, manifestErr := OpenOutputs(root, dir)
	if manifestErr != nil {
		log.Warn(fmt.Sprintf("JUnit manifest: %v; merged files of earlier runs are left as they are", manifestErr))
	}
	var written []string
	for _, s := range suites {
		if s.Unlisted || s.Skip != "" {
			continue // no items to report: a file of zero tests would read as passed, or replace a run's that had some
		}
		if path, ok := writeSuite(outs, s, doc, log); ok {
			written = append(written, path)
		}
	}
	if manifestErr != nil {
		return written // an unreadable manifest is not replaced
	}
	if left := outs.KeepOthers(); len(left) > 0 {
		var rels []string
		for _, n := range left {
			rels = append(rels, log.Rel(filepath.Join(dir, n)))
		}
		log.Printf("  junit: left %s (not run here: an earlier run's results)\n", strings.Join(rels, ", "))
	}
	if err := outs.Save(); err != nil {
		log.Warn(fmt.Sprintf("JUnit manifest: %v", err))
	}
	return written
}

// writeSuite writes suite s's merged file into outs.Dir, unless a file this tool did not write holds its name.
func writeSuite(outs *Outputs, s verdict.Suite, doc func(verdict.Suite) (*Doc, error), log Log) (path string, ok bool) {
	name := s.Label + ".xml"
	path = filepath.Join(outs.Dir, name)
	if err := outs.MayReplace(name); err != nil { // keeps its entry until this run writes it
		log.Warn(foreign(s.Label, log.Rel(path), err))
		return "", false
	}
	d, err := doc(s)
	if err != nil {
		log.Warn(fmt.Sprintf("JUnit of suite %q not merged: %v", s.Label, err))
		return "", false
	}
	if d == nil {
		return "", false
	}
	if err := d.WriteFile(outs.Root, path); err != nil {
		log.Lost(fmt.Sprintf("the merged JUnit of suite %q", s.Label), path, err)
		return "", false
	}
	if err := outs.Wrote(path); err != nil {
		log.Warn(fmt.Sprintf("%s: %v", path, err))
	} else if err := outs.Checkpoint(); err != nil {
		log.Warn(fmt.Sprintf("JUnit manifest: %v", err))
	}
	st := d.Stats()
	log.Printf("  junit %-12s %d tests, %d failures, %d errors, %d skipped → %s\n",
		s.Label, st.Tests, st.Failures, st.Errors, st.Skipped, log.Rel(path))
	if st.Malformed > 0 {
		log.Warn(fmt.Sprintf("suite %q wrote %d malformed JUnit file(s); each is an error case in %s", s.Label, st.Malformed, log.Rel(path)))
	}
	return path, true
}

// foreign is the warning for a merged file not written because a foreign file holds its name.
func foreign(label, path string, err error) string {
	var f *Foreign
	if errors.As(err, &f) {
		return fmt.Sprintf("JUnit of suite %q not written: %s, so it is left as it is; move it away, or set another junit-dir", label,
			f.about(path))
	}
	return fmt.Sprintf("JUnit of suite %q not written: %v", label, err)
}
