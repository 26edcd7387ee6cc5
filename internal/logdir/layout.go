// Package logdir is a run's file layout under the log dir (docs/files.md), compatible with TransformerEngine's
// so existing CI gates keep working.
package logdir

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Layout names the files of one run.
type Layout struct {
	Root string // the log dir
	// Trusted is the log dir's trusted root (docs/bad-day.md#the-state-between-runs-links-and-fifos): no directory
	// below it on the way to a run's file may be a link ("" is Root).
	Trusted string
}

// New is the layout of the log dir root in the repo at repoRoot.
func New(root, repoRoot string) Layout {
	return Layout{Root: root, Trusted: safefs.TrustedRoot(repoRoot, root)}
}

func (l Layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.Root}, parts...)...)
}

func (l Layout) ExpandLog() string { return l.path("expand.log") }
func (l Layout) SetupDir() string  { return l.path("prerequisite_ck_jit_status") }
func (l Layout) SetupLog(label string) string {
	return l.path("prerequisite_ck_jit_status", label+".log")
}

// OnceLog is the log of a once-per-run command; its dot keeps it from being a suite's log.
func (l Layout) OnceLog(kind string) string {
	return l.path("prerequisite_ck_jit_status", "run."+kind+".log")
}

func (l Layout) ItemsDir() string { return l.path("items") }
func (l Layout) CwdDir() string   { return l.path("cwd") }

// JUnitDir is where items write their JUnit when no prefix is set (docs/hooks.md); older files there are not merged.
func (l Layout) JUnitDir() string   { return l.path("junit") }
func (l Layout) SuitesDir() string  { return l.path("suites") }
func (l Layout) ReportDir() string  { return l.path("report") }
func (l Layout) Report() string     { return l.path("report", "schedule.md") }
func (l Layout) Timeline() string   { return l.path("report", "timeline.svg") }
func (l Layout) QueueDir() string   { return l.path("queue") }
func (l Layout) ItemsTSV() string   { return l.path("queue", "items.tsv") }
func (l Layout) QueueTSV() string   { return l.path("queue", "queue.tsv") }
func (l Layout) TimingsTSV() string { return l.path("queue", "timings.tsv") }
func (l Layout) Meta() string       { return l.path("queue", "run.json") }

// Item file names (docs/files.md#item-file-names). An item's files are
//
//	items/<label>.<safetag>.log               its log (the last attempt's)
//	items/<label>.<safetag>.log.rc            its exit code
//	items/<label>.<safetag>@attempt<n>.log    attempt n of a retried item, and .log.rc
//	items/<label>.<safetag>@attempt<n>.xml    the JUnit XML attempt n wrote, and .xml.partial
//	cwd/<label>.<safetag>/                    its working directory
//
// No two items or attempts share a name: a label has no '.', SafeTag is injective, and '@' is in no label or safetag
// (FuzzItemNamesInjective).

// AttemptMark separates an item's name from its attempt number.
const AttemptMark = "@attempt"

// ItemBase is "<label>.<safetag>", the stem of an item's log and working directory.
func ItemBase(label, tag string) string { return label + "." + SafeTag(tag) }

// ItemFileName is the name in items/ of an item's log or rc file; attempt 0 is the canonical one.
func ItemFileName(label, tag string, attempt int, rc bool) string {
	name := ItemBase(label, tag)
	if attempt > 0 {
		name += AttemptMark + strconv.Itoa(attempt)
	}
	name += ".log"
	if rc {
		name += ".rc"
	}
	return name
}

// ItemFile is what an item file's name says (ParseItemFile).
type ItemFile struct {
	Base    string // "<label>.<safetag>"
	Attempt int    // 0 for the canonical log
	RC      bool
	// JUnit is ".xml" or ".xml.partial" for an earlier attempt's XML, "" for a log or an rc.
	JUnit string
}

// ParseItemFile reads a name in items/ back; false for a name ItemFileName cannot produce.
func ParseItemFile(name string) (f ItemFile, ok bool) {
	var stem, ext string
	for _, e := range []string{".log.rc", ".log", attemptJUnit + ".partial", attemptJUnit} {
		if stem, ok = strings.CutSuffix(name, e); ok {
			ext = e
			break
		}
	}
	switch ext {
	case "":
		return f, false
	case ".log.rc":
		f.RC = true
	case attemptJUnit, attemptJUnit + ".partial":
		f.JUnit = ext
	}
	if i := strings.Index(stem, AttemptMark); i >= 0 {
		n := stem[i+len(AttemptMark):]
		a, err := strconv.Atoi(n)
		if err != nil || a < 1 || strconv.Itoa(a) != n {
			return f, false
		}
		f.Attempt, stem = a, stem[:i]
	}
	label, tag, found := strings.Cut(stem, ".")
	if !found || label == "" || !validSafeTag(tag) || strings.ContainsAny(label, "@/~") || f.JUnit != "" && f.Attempt == 0 {
		return f, false
	}
	f.Base = stem
	return f, true
}

// ItemLogRel is the item log relative to the log dir, as the suite verdict files name it.
func ItemLogRel(label, tag string) string { return "items/" + ItemFileName(label, tag, 0, false) }

// ItemLog is the item's output file.
func (l Layout) ItemLog(label, tag string) string {
	return l.path("items", ItemFileName(label, tag, 0, false))
}

// ItemAttemptLog is where attempt n of a retried item keeps its log; the canonical log is the last attempt's.
func (l Layout) ItemAttemptLog(label, tag string, n int) string {
	return l.path("items", ItemFileName(label, tag, n, false))
}

// attemptJUnit ends the name of the JUnit XML an earlier attempt wrote.
const attemptJUnit = ".xml"

// ItemAttemptJUnit is where attempt n keeps its JUnit XML, since the next attempt writes over it (docs/report.md).
func (l Layout) ItemAttemptJUnit(label, tag string, n int) string {
	return l.path("items", ItemBase(label, tag)+AttemptMark+strconv.Itoa(n)+attemptJUnit)
}

// ItemAttemptRC is the exit code of attempt n (its log's name plus ".rc").
func (l Layout) ItemAttemptRC(label, tag string, n int) string {
	return l.path("items", ItemFileName(label, tag, n, true))
}

// ItemRC is the file holding the item's exit code.
func (l Layout) ItemRC(label, tag string) string {
	return l.path("items", ItemFileName(label, tag, 0, true))
}

// ItemCwd is the item's own working directory.
func (l Layout) ItemCwd(label, tag string) string { return l.path("cwd", ItemBase(label, tag)) }

// SuiteLog and SuiteRC are the per-suite verdict files.
func (l Layout) SuiteLog(logfile string) string { return l.path("suites", logfile) }
func (l Layout) SuiteRC(logfile string) string  { return l.path("suites", logfile+".rc") }

// MaxNameBytes is the longest file name Linux file systems take (NAME_MAX).
const MaxNameBytes = 255

// maxSafe bounds the clean part of a safetag; hashLen is the hash that follows '~'.
const (
	maxSafe = 100
	hashLen = 16 // hex digits: 64 bits of SHA-256
)

// MaxSafeTag is the longest safetag.
const MaxSafeTag = maxSafe + 1 + hashLen

// maxAttemptDigits is room for any attempt number an int32 can count.
const maxAttemptDigits = 10

// MaxLabel is the longest label whose longest file name, an attempt's rc, fits MaxNameBytes.
const MaxLabel = MaxNameBytes - len(".") - MaxSafeTag - len(AttemptMark) - maxAttemptDigits - len(".log.rc")

// MaxLogFile is the longest suite logfile whose .rc temporary file fits MaxNameBytes.
const MaxLogFile = MaxNameBytes - len(".rc") - atomicfile.TempExtra

// whole is the safetag of an opaque item (tag "").
const whole = "whole"

// SafeTag turns a tag into a file-name component: "whole" for an opaque item, the tag itself when it is at most 100
// bytes of ".+-=_" and alphanumerics (TE's names), else a cleaned cut with '~' and a hash, so no two tags share a file
// and none names a path outside items/ or cwd/.
func SafeTag(tag string) string {
	if tag == "" {
		return whole
	}
	var b strings.Builder
	clean := tag != whole
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if cleanByte(c) {
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
	return s + "~" + hex.EncodeToString(sum[:hashLen/2])
}

func cleanByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".+-=_", c) >= 0
}

// validSafeTag reports whether s is a name SafeTag can return.
func validSafeTag(s string) bool {
	clean, hash, hashed := strings.Cut(s, "~")
	if clean == "" && !hashed || len(clean) > maxSafe {
		return false
	}
	for i := 0; i < len(clean); i++ {
		if !cleanByte(clean[i]) {
			return false
		}
	}
	if !hashed {
		return true
	}
	if len(hash) != hashLen {
		return false
	}
	_, err := hex.DecodeString(hash)
	return err == nil && strings.ToLower(hash) == hash
}
