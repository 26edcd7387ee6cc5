// Package config reads suite config files (docs/config.md) and rejects a bad line before anything runs,
// naming the file, the line and the fix.
package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Mode says how a suite becomes work items.
type Mode string

const (
	// List suites enumerate their items through the hook contract.
	List Mode = "list"
	// Opaque suites are one item: the whole script, setup included.
	Opaque Mode = "opaque"
)

// Suite is one config line.
type Suite struct {
	Label   string
	LogFile string
	Mode    Mode
	Options Options // the mode field's options (gpus=, split=, env=, …)
	// Command is a list or opaque suite's script; an adapter suite's words after the mode are its tool's arguments.
	Command string
	Path    string   // Command resolved (absolute when it names a file); set by Resolve
	Args    []string // the words after the command (adapters: after the mode), shell-quoting removed
	File    string   // config file it came from
	Line    int
	// MGPU: the suite is read as TE's mGPU queue (docs/hooks.md "Queues"): the multi-GPU switch, and an item that
	// declares no width takes the whole pool.
	MGPU bool
}

// Tool reports whether the suite runs a tool (pytest, ctest, cmd) rather than a hook-contract script.
func (s Suite) Tool() bool { return s.Mode == Pytest || s.Mode == CTest || s.Mode == Cmd }

// Environ is base with the suite's env= on top; the contract's variables and GPU pin go over it (docs/config.md).
func (s Suite) Environ(base hook.Env) hook.Env {
	out := base.With() // a copy, even with no env=
	for _, kv := range s.Options.Env {
		out = out.With(kv) // one at a time: a later env= of a name wins, once
	}
	return out
}

// GPUKind is the hook switch of the suite's commands (docs/hooks.md#single--and-multi-gpu-switches).
func (s Suite) GPUKind() hook.Kind {
	if s.MGPU || s.Options.MultiGPU() {
		return hook.MultiGPU
	}
	return hook.SingleGPU
}

// Width is an item's GPUs when its listing declares none: gpus=, else one in the sGPU queue and all in the mGPU
// queue, as TE's run_queue.sh.
func (s Suite) Width() (n int, all bool) {
	if s.MGPU && s.Options.GPUs == 0 {
		return 0, true
	}
	return s.Options.GPUs, s.Options.AllGPUs
}

// Queue is the TE queue the suite is read as: "mgpu" or "sgpu".
func (s Suite) Queue() string {
	if s.MGPU {
		return QueueMGPU
	}
	return QueueSGPU
}

// TE's two queues (run_queue.sh --queue).
const (
	QueueSGPU = "sgpu"
	QueueMGPU = "mgpu"
)

// Sources are a run's config files and the TE queue each is read as (docs/hooks.md "Queues").
type Sources struct {
	// Files are read as Queue: QueueSGPU ("" too) or QueueMGPU.
	Files []string
	Queue string
	// MGPU are more files, read as the mGPU queue in the same run.
	MGPU []string
}

// Paths are every file, Files first.
func (s Sources) Paths() []string { return slices.Concat(s.Files, s.MGPU) }

// Load reads every file (Load) and marks each suite's queue (MarkQueues).
func (s Sources) Load() ([]Suite, error) {
	suites, err := Load(s.Paths())
	MarkQueues(suites, s.Queue, s.MGPU)
	return suites, err
}

// MarkQueues marks the suites of the mGPU queue: all for QueueMGPU, else those from mgpuFiles.
func MarkQueues(suites []Suite, queue string, mgpuFiles []string) {
	for i := range suites {
		suites[i].MGPU = queue == QueueMGPU || slices.Contains(mgpuFiles, suites[i].File)
	}
}

// Where is "file:line" of the suite's config line.
func (s Suite) Where() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Error is a problem with one config line.
type Error struct {
	File string
	Line int // 0 when it concerns the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Limits that keep a wrong file (a binary, a log) from being read for minutes.
const (
	MaxFileBytes = 16 << 20
	MaxLineBytes = 64 << 10
)

// Parse reads one config file, reporting every problem as an *Error; nil only when there are none.
func Parse(r io.Reader, file string) ([]Suite, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, &Error{File: file, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: file, Msg: fmt.Sprintf("larger than %d MiB; is this the suite config?", MaxFileBytes>>20)}
	}
	var suites []Suite
	var errs []error
	last, err := EachLine(data, MaxLineBytes, func(line int, text string) {
		if first := strings.Fields(text); len(first) == 0 || strings.HasPrefix(first[0], "#") {
			return
		}
		fail := func(format string, a ...any) {
			errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, a...)})
		}
		if bad := strings.IndexFunc(text, IsControl); bad >= 0 {
			fail("control character %q in the line; the config is plain text, one suite per line", text[bad])
			return
		}
		fields, err := SplitFields(text)
		if err != nil {
			fail("%v", err)
			return
		}
		if s, msg := parseSuite(fields); msg != "" {
			fail("%s", msg)
		} else {
			s.File, s.Line = file, line
			suites = append(suites, s)
		}
	})
	if err != nil {
		errs = append(errs, &Error{File: file, Line: last + 1, Msg: err.Error() + "; is this the suite config?"})
	}
	return suites, errors.Join(errs...)
}

// EachLine calls fn with each line of data and its number, a UTF-8 BOM and the line's CR dropped. It stops at a line
// longer than max bytes; last is the number of the last line read.
func EachLine(data []byte, max int, fn func(n int, line string)) (last int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	sc.Buffer(make([]byte, 0, 4096), max)
	for sc.Scan() {
		last++
		fn(last, strings.TrimRight(sc.Text(), "\r"))
	}
	if sc.Err() != nil { // a bytes.Reader split into lines fails only on a line past max
		return last, fmt.Errorf("line longer than %d KiB", max>>10)
	}
	return last, nil
}

// parseSuite reads one line's words; msg says what is wrong ("" when nothing).
func parseSuite(fields []string) (s Suite, msg string) {
	if len(fields) < 3 {
		return s, fmt.Sprintf("want \"<label> <logfile> <mode> <command> [args...]\", got %d field(s)", len(fields))
	}
	s = Suite{Label: fields[0], LogFile: fields[1]}
	if m := checkLabel(s.Label); m != "" {
		return s, fmt.Sprintf("label %q %s", s.Label, m)
	}
	if m := checkLogFile(s.LogFile); m != "" {
		return s, fmt.Sprintf("logfile %q %s", s.LogFile, m)
	}
	var err error
	if s.Mode, s.Options, err = ParseMode(fields[2]); err != nil {
		return s, fmt.Sprintf("suite %q: %v", s.Label, err)
	}
	if s.Tool() {
		// The adapter checks its own arguments (docs/adapters.md).
		s.Args = fields[3:]
		return s, ""
	}
	if len(fields) < 4 {
		return s, fmt.Sprintf("want \"<label> <logfile> %s <command> [args...]\", got %d field(s): name the suite's entry script", s.Mode,
			len(fields))
	}
	s.Command, s.Args = fields[3], fields[4:]
	return s, ""
}

// IsControl reports a control character other than tab: a config line, or a command file's, is plain text.
func IsControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// checkLabel says what is wrong with a label, "" when nothing; a label names files and weight keys.
func checkLabel(l string) string {
	if strings.HasPrefix(l, "-") {
		return "must not start with '-'"
	}
	if fix := strings.ReplaceAll(l, ".", "_"); fix != l && allowed(fix) {
		return fmt.Sprintf("may not contain '.': the first '.' of an item's file name (items/<label>.<tag>.log) ends the label, so label "+
			"\"a.b\" with tag \"c\" and label \"a\" with tag \"b.c\" would share a file; use '_' or '-' instead (%q)", fix)
	}
	if !allowed(l) {
		return "may only hold letters, digits, '_' and '-' (it names files and weight keys)"
	}
	if len(l) > logdir.MaxLabel {
		return fmt.Sprintf("is %d bytes, more than the %d its item files can carry (items/<label>.<tag>@attempt<n>.log.rc must fit the "+
			"%d-byte limit of a file name): shorten it", len(l), logdir.MaxLabel, logdir.MaxNameBytes)
	}
	return ""
}

func allowed(l string) bool {
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func checkLogFile(f string) string {
	switch {
	case f == "." || f == ".." || strings.ContainsAny(f, `/\`):
		return "must be a plain file name (it is written under suites/ in the log dir)"
	case strings.HasPrefix(f, "."):
		return "must not start with '.' (the run's temporary files in suites/ do)"
	case len(f) > logdir.MaxLogFile:
		return fmt.Sprintf("is %d bytes, more than %d (suites/<logfile>.rc and its temporary file must fit the %d-byte limit of a file name): "+
			"shorten it", len(f), logdir.MaxLogFile, logdir.MaxNameBytes)
	}
	return ""
}

// Load parses every file and checks across them: at least one suite, unique labels and log files.
func Load(paths []string) ([]Suite, error) {
	if len(paths) == 0 {
		return nil, errors.New("no config file given: pass at least one, e.g. sgpu-queue run ci/sgpu.conf")
	}
	var all []Suite
	var errs []error
	for _, p := range paths {
		// safefs.Open: a FIFO in a config's place would hold the run in open(2) past any signal (docs/bad-day.md).
		f, err := safefs.Open(p)
		var se *safefs.Error
		switch {
		case errors.As(err, &se):
			errs = append(errs, &Error{File: p, Msg: "cannot read config: it " + se.Reason()})
			continue
		case err != nil:
			errs = append(errs, &Error{File: p, Msg: fmt.Sprintf("cannot open config: %v", atomicfile.Cause(err))})
			continue
		}
		suites, err := Parse(f, p)
		f.Close()
		if err != nil {
			errs = append(errs, err)
		}
		all = append(all, suites...)
	}
	labels := map[string]Suite{}
	logs := map[string]Suite{}
	var uniq []Suite
	for _, s := range all {
		if first, dup := labels[s.Label]; dup {
			errs = append(errs, &Error{File: s.File, Line: s.Line, Msg: fmt.Sprintf("duplicate label %q (first at %s); labels must be unique "+
				"across all config files", s.Label, first.Where())})
			continue
		}
		if first, dup := logs[s.LogFile]; dup {
			errs = append(errs, &Error{File: s.File, Line: s.Line, Msg: fmt.Sprintf("logfile %q already used by suite %q at %s; give each suite "+
				"its own", s.LogFile, first.Label, first.Where())})
			continue
		}
		if msg := verdictClash(s, logs); msg != "" {
			errs = append(errs, &Error{File: s.File, Line: s.Line, Msg: msg})
			continue
		}
		labels[s.Label] = s
		logs[s.LogFile] = s
		uniq = append(uniq, s)
	}
	if len(uniq) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no suites: add lines \"<label> <logfile> <mode> <command> [args...]\" (modes: %s)",
			strings.Join(paths, ", "), orList(modeNames())))
	}
	return uniq, errors.Join(errs...)
}

// verdictClash says when a suite's verdict files would be another's ("a.log" and "a.log.rc").
func verdictClash(s Suite, logs map[string]Suite) string {
	other, shared := logs[s.LogFile+".rc"], s.LogFile+".rc"
	if base, ok := strings.CutSuffix(s.LogFile, ".rc"); ok && other.Label == "" {
		other, shared = logs[base], s.LogFile
	}
	if other.Label == "" {
		return ""
	}
	// The suite whose logfile ends in ".rc" is the one to rename.
	odd := s
	if !strings.HasSuffix(s.LogFile, ".rc") {
		odd = other
	}
	return fmt.Sprintf("logfile %q and suite %q's logfile %q (at %s) both write suites/%s (one suite's verdict file is the other's log): "+
		"give suite %q another logfile, e.g. %q",
		s.LogFile, other.Label, other.LogFile, other.Where(), shared, odd.Label, odd.Label+".log")
}

// Resolve sets each suite's Path, relative to repoRoot or from PATH. With check the command must be executable here;
// pass false when commands run in another container.
func Resolve(suites []Suite, repoRoot string, check bool) error {
	var errs []error
	for i := range suites {
		s := &suites[i]
		if s.Tool() {
			continue // no script of its own: its tool is found where it runs
		}
		p := s.Command
		if !filepath.IsAbs(p) {
			p = filepath.Join(repoRoot, p)
		}
		s.Path = p
		if !check {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil && !strings.Contains(s.Command, "/") {
			if lp, lerr := exec.LookPath(s.Command); lerr == nil {
				s.Path = lp
				continue
			}
		}
		fail := func(format string, a ...any) {
			errs = append(errs, &Error{File: s.File, Line: s.Line, Msg: fmt.Sprintf(format, a...)})
		}
		switch {
		case err != nil:
			fail("command %q of suite %q not found (looked for %s; relative commands are resolved against --repo-root %s)", s.Command, s.Label, p,
				repoRoot)
		case fi.IsDir():
			fail("command %q of suite %q is a directory; name the suite's entry script", s.Command, s.Label)
		case fi.Mode().Perm()&0o111 == 0:
			fail("command %q of suite %q is not executable: chmod +x %s", s.Command, s.Label, p)
		}
	}
	return errors.Join(errs...)
}
