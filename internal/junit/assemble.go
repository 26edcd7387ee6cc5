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

// Log is what WriteSuites tells its caller as it goes: lines for the console,
// warnings, files it could not write, and paths as the user sees them.
type Log interface {
	Printf(format string, a ...any)
	Warn(msg string)
	Lost(what, path string, err error)
	Rel(path string) string
}

// ItemsOf is a suite's verdicts as Merge takes its items: the log of each item that
// started (under logDir), whether it was cut off (its Incomplete, which says so in
// place of the verdict's note), and named when sgpu-queue named the items' files
// (an adapter suite).
func ItemsOf(s verdict.Suite, logDir string, named bool) []Item {
	items := make([]Item, len(s.Items))
	for i, it := range s.Items {
		cut := it.Outcome == outcome.CutOff
		note := it.Note
		if cut {
			note = "" // Incomplete says so
		}
		items[i] = Item{
			Tag: it.Tag, GPU: it.GPU, Seconds: it.Seconds, RC: it.RC, Finished: it.Finished,
			Incomplete: cut, Failed: it.Failed, Note: note, Named: named,
		}
		if it.Started { // an item that never started has no log to name
			items[i].Log = filepath.Join(logDir, it.LogRel)
		}
	}
	return items
}

// CombineSuite is Combine for suite s of a merged run: the shards' merged files
// parts, an error case for each item unreported says no shard file speaks for,
// and one for the suite when it is broken. A suite with none of them has no
// document (nil, nil).
func CombineSuite(ctx context.Context, s verdict.Suite, parts []Part, unreported func(verdict.Item) bool) (*Doc, error) {
	var notRun []Item
	for _, it := range s.Items {
		if unreported(it) {
			notRun = append(notRun, Item{Tag: it.Tag, RC: it.RC, Failed: true, Note: it.Note})
		}
	}
	if len(parts) == 0 && len(notRun) == 0 && s.Broken == "" {
		return nil, nil
	}
	return Combine(ctx, s.Label, parts, notRun, s.Broken)
}

// WriteSuites writes into dir the merged JUnit file of each suite that ran and that
// doc gives one (a nil document and error: none), and returns the paths written. It
// never replaces a file this tool did not write, and leaves the file of a suite this
// run did not run (not in its configs, not selected, not re-run this attempt) as it
// is: another run's results (docs/files.md#merged-junit-and-its-manifest). The
// directory is locked while its manifest is read and rewritten, so two runs at once
// keep each other's entries. Nothing is written through a link below root, dir's
// trusted root.
func WriteSuites(ctx context.Context, root, dir string, suites []verdict.Suite, doc func(verdict.Suite) (*Doc, error), log Log) []string {
	if err := safefs.MkdirAll(root, dir); err != nil {
		log.Lost("the merged JUnit", dir, err)
		return nil
	}
	release, err := safefs.LockDir(ctx, "JUnit dir", dir, 0)
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

// writeSuite writes suite s's merged file into outs.Dir, unless a file of that
// name is there that this tool did not write: that one is left byte for byte as it
// is, with a warning. ok is whether it wrote the file, at path.
func writeSuite(outs *Outputs, s verdict.Suite, doc func(verdict.Suite) (*Doc, error), log Log) (path string, ok bool) {
	name := s.Label + ".xml"
	path = filepath.Join(outs.Dir, name)
	outs.Keep(name) // until this run writes it
	if err := outs.MayReplace(name); err != nil {
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

// foreign is the one-line warning for a merged file not written because a file
// this tool did not write holds its name.
func foreign(label, path string, err error) string {
	var f *Foreign
	switch {
	case errors.As(err, &f) && f.Changed:
		return fmt.Sprintf("JUnit of suite %q not written: %s changed since sgpu-queue wrote it, so it is left as it is; "+
			"move it away, or set another junit-dir", label, path)
	case errors.As(err, &f):
		return fmt.Sprintf("JUnit of suite %q not written: %s is not a file sgpu-queue wrote (%s does not list it), so it is left as it is; "+
			"move it away, or set another junit-dir", label, path, ManifestName)
	}
	return fmt.Sprintf("JUnit of suite %q not written: %v", label, err)
}
