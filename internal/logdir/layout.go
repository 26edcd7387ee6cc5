// Package logdir is the file layout of a run under the log dir (SPEC §5), kept
// compatible with TransformerEngine's so existing CI gates keep working: the paths,
// the file-name-safe form of a tag, and the TSV files (items, queue, timings) that
// let a report be rebuilt from a run's files alone.
package logdir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Layout names the files of one run.
type Layout struct {
	Root string // the log dir
}

func (l Layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.Root}, parts...)...)
}

func (l Layout) ExpandLog() string { return l.path("expand.log") }
func (l Layout) SetupDir() string  { return l.path("prerequisite_ck_jit_status") }
func (l Layout) SetupLog(label string) string {
	return l.path("prerequisite_ck_jit_status", label+".log")
}
func (l Layout) ItemsDir() string   { return l.path("items") }
func (l Layout) CwdDir() string     { return l.path("cwd") }
func (l Layout) SuitesDir() string  { return l.path("suites") }
func (l Layout) ReportDir() string  { return l.path("report") }
func (l Layout) Report() string     { return l.path("report", "schedule.md") }
func (l Layout) QueueDir() string   { return l.path("queue") }
func (l Layout) ItemsTSV() string   { return l.path("queue", "items.tsv") }
func (l Layout) QueueTSV() string   { return l.path("queue", "queue.tsv") }
func (l Layout) TimingsTSV() string { return l.path("queue", "timings.tsv") }
func (l Layout) Meta() string       { return l.path("queue", "run.json") }

// ItemBase is "<label>.<safetag>", the stem of an item's log and working directory.
func ItemBase(label, tag string) string { return label + "." + SafeTag(tag) }

// ItemLogRel is the item log relative to the log dir ("items/<label>.<safetag>.log"),
// the form the suite verdict files use.
func ItemLogRel(label, tag string) string { return "items/" + ItemBase(label, tag) + ".log" }

// ItemLog is the item's output file.
func (l Layout) ItemLog(label, tag string) string {
	return l.path("items", ItemBase(label, tag)+".log")
}

// ItemAttemptLog is where attempt n of a retried item keeps its log
// (items/<label>.<safetag>.attempt<n>.log); the canonical log holds the last attempt.
func (l Layout) ItemAttemptLog(label, tag string, n int) string {
	return l.path("items", fmt.Sprintf("%s.attempt%d.log", ItemBase(label, tag), n))
}

// ItemRC is the file holding the item's exit code.
func (l Layout) ItemRC(label, tag string) string { return l.ItemLog(label, tag) + ".rc" }

// ItemCwd is the item's own working directory.
func (l Layout) ItemCwd(label, tag string) string { return l.path("cwd", ItemBase(label, tag)) }

// SuiteLog and SuiteRC are the per-suite verdict files.
func (l Layout) SuiteLog(logfile string) string { return l.path("suites", logfile) }
func (l Layout) SuiteRC(logfile string) string  { return l.path("suites", logfile+".rc") }

// Prepare creates the directories of a run and removes what a previous run in the
// same log dir left in them, so that a verdict or report never mixes two runs. It
// touches nothing else under the log dir.
func (l Layout) Prepare() error {
	for _, d := range []string{l.ItemsDir(), l.CwdDir(), l.SuitesDir(), l.ReportDir(), l.QueueDir(), l.SetupDir()} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.Remove(l.ExpandLog()); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// maxSafe bounds the tag part of a file name (names stay well under 255 bytes).
const maxSafe = 100

// SafeTag turns a tag into a file-name component: "whole" for an opaque item ("");
// the tag itself when it only holds letters, digits and ".+-=_" (names stay those of
// TE's layout, "mxfp4..ck" included: behind "<label>." a ".." is never a path
// component); otherwise every other byte becomes '_' and '~' plus a short hash of the
// real tag is appended, so two hostile tags never share a file and no tag can name a
// path outside items/ or cwd/.
func SafeTag(tag string) string {
	if tag == "" {
		return "whole"
	}
	var b strings.Builder
	clean := true
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".+-=_", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
			clean = false
		}
	}
	s := b.String()
	if clean && len(s) <= maxSafe {
		return s
	}
	if len(s) > maxSafe {
		s = s[:maxSafe]
	}
	sum := sha256.Sum256([]byte(tag))
	return s + "~" + hex.EncodeToString(sum[:4])
}
