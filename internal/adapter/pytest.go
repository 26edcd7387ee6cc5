package adapter

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/junit"
)

// ErrNoPytest is wrapped by a pytest listing whose interpreter cannot import pytest.
var ErrNoPytest = errors.New("pytest not importable")

//go:embed pytest_probe.py
var pytestProbe string

// pytestMarker starts the probe's record line.
const pytestMarker = "sgpu-queue-pytest-collection "

// Exit codes of the listing: pytest's own (docs.pytest.org, "Exit codes") and the probe's.
const (
	pytestTestsFailed = 1 // with --continue-on-collection-errors: some files did not collect
	pytestInterrupted = 2 // collection errors
	pytestInternal    = 3
	pytestUsage       = 4
	pytestNoTests     = 5
	probeNoPytest     = 97
)

// DefaultPython is a pytest suite's interpreter without python=.
const DefaultPython = "python3"

// pytestSuite is `<label> <logfile> pytest[,split=…][,python=…] <pytest args…>`.
type pytestSuite struct {
	s      config.Suite
	static []int // path operands among s.Args, as the option table reads them
}

// JUnit: the item's command is given its file (Run.JUnit), and the tool always writes it.
func (*pytestSuite) JUnit() JUnit { return JUnitGiven }

func (*pytestSuite) sized() {}

func newPytest(s config.Suite) (Adapter, error) {
	for _, a := range s.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--collect-only", "--co":
			return nil, fail(s, nil, "", "argument %q: the adapter lists the tests itself; remove it", a)
		case "--junitxml", "--junit-xml":
			return nil, fail(s, nil, "", "argument %q: sgpu-queue gives each item its own JUnit file; remove it", a)
		case "-h", "--help", "--version", "-V", "--fixtures", "--markers", "--funcargs", "--fixtures-per-test":
			return nil, fail(s, nil, "", "argument %q makes pytest print information instead of running tests; remove it", a)
		}
	}
	return &pytestSuite{s: s, static: staticOperands(s.Args)}, nil
}

func (p *pytestSuite) python(dir string) string {
	py := p.s.Options.Python
	if py == "" {
		py = DefaultPython
	}
	return inDir(py, dir)
}

// collect collects with the options and operands args through the probe, in process (docs/adapters.md, pytest details).
func (p *pytestSuite) collect(ctx context.Context, ex executor.Executor, in Listing, args []string) (*collection, error) {
	py := p.python(in.Dir)
	args = append([]string{"--collect-only", "-q", "--continue-on-collection-errors"}, args...)
	probe := executor.Command{Path: py, Args: append([]string{"-c", pytestProbe}, args...), Env: p.s.Environ(in.Env), Dir: in.Dir}
	// expand.log shows the one-line pytest command a user can run.
	shown := config.QuoteWords(append([]string{py, "-m", "pytest"}, args...)) + "  (run in process by sgpu-queue's collection probe, " +
		"docs/adapters.md)"
	out, err := capture(ctx, ex, in, p.s, probe, shown)
	if err != nil {
		return nil, err
	}
	return p.collection(out, py)
}

// collection is the probe's record.
type collection struct {
	RootDir       string   `json:"rootdir"`
	InvocationDir string   `json:"invocation_dir"`
	Operands      []string `json:"operands"`
	Items         []string `json:"items"`
	// Errors are the collectors that failed (a test file that does not import).
	Errors []collectError `json:"errors"`
}

// collectError is a collector pytest could not collect, and the end of what pytest said.
type collectError struct {
	NodeID   string `json:"nodeid"`
	Longrepr string `json:"longrepr"`
}

// List collects through the probe, one item per test file (or node id with split=test). A file that does not
// collect is an item of its own that fails with its traceback, as --continue-on-collection-errors has it.
func (p *pytestSuite) List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	return timed(ctx, in, p.s, func(ctx context.Context, in Listing) (*Listed, error) { return p.list(ctx, ex, in) })
}

func (p *pytestSuite) list(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error) {
	c, err := p.collect(ctx, ex, in, p.s.Args)
	if err != nil {
		return nil, err
	}
	drop, err := reconcileOperands(p.s.Args, p.static, c.Operands)
	if err != nil {
		return nil, fail(p.s, nil, "", "%v", err)
	}
	return p.items(c, withoutIndices(p.s.Args, drop))
}

// collection reads what a collection printed, or says why it failed.
func (p *pytestSuite) collection(out *output, py string) (*collection, error) {
	s := p.s
	switch rc := out.res.ExitCode; rc {
	case 0:
	case pytestTestsFailed:
		// Any other 1 (no record, no errors) is a failure of its own.
		if c, err := parseCollection(out.stdout); err == nil && len(c.Errors) > 0 {
			return c, nil
		}
		return nil, fail(s, nil, out.tail, "the pytest collection with %s exited with %d", py, rc)
	case pytestNoTests:
		return nil, fail(s, ErrNoItems, out.tail, "pytest collected no tests (exit 5): check the paths and -k/-m filters of the suite's arguments")
	case pytestInterrupted:
		return nil, fail(s, nil, out.tail, "pytest could not collect the tests (exit 2: errors during collection, see below)")
	case pytestUsage:
		return nil, fail(s, nil, out.tail, "pytest rejected the arguments (exit 4: usage error, a path that does not exist?)")
	case probeNoPytest:
		return nil, fail(s, ErrNoPytest, out.tail, "%s cannot import pytest: install pytest for it, or name the interpreter that has it with "+
			"python= (pytest,python=.venv/bin/python)", py)
	default:
		return nil, fail(s, nil, out.tail, "the pytest collection with %s exited with %d", py, rc)
	}
	c, err := parseCollection(out.stdout)
	if err != nil {
		return nil, fail(s, nil, out.tail, "%v (is %s running pytest?)", err, py)
	}
	return c, nil
}

// Selects collects what the item's command would run; nothing collected is no tag.
func (p *pytestSuite) Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error) {
	c, err := p.collect(ctx, ex, in, slices.Concat(it.Args, []string{operand(it.Tag)}))
	var l *Listed
	if err == nil {
		l, err = p.items(c, it.Args)
	}
	if errors.Is(err, ErrNoItems) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var got []string
	for _, i := range l.Items {
		got = append(got, i.Tag)
	}
	return got, nil
}

// parseCollection finds the probe's record: the last marker line, as a test module may print a fake one first.
func parseCollection(stdout []byte) (*collection, error) {
	marker := []byte(pytestMarker)
	at := bytes.LastIndex(stdout, append([]byte("\n"), marker...)) + 1
	if at == 0 && !bytes.HasPrefix(stdout, marker) {
		return nil, errors.New("the collection printed no record")
	}
	line, _, _ := bytes.Cut(stdout[at+len(marker):], []byte("\n"))
	var c collection
	if err := json.Unmarshal(line, &c); err != nil {
		return nil, fmt.Errorf("the collection record is not JSON: %w", err)
	}
	if !filepath.IsAbs(c.RootDir) || !filepath.IsAbs(c.InvocationDir) {
		return nil, fmt.Errorf("the collection record has no absolute rootdir and invocation dir (%q, %q)", c.RootDir, c.InvocationDir)
	}
	return &c, nil
}

// items turns node ids relative to pytest's rootdir into tags relative to the repo root, where commands run.
func (p *pytestSuite) items(c *collection, opts []string) (*Listed, error) {
	s := p.s
	l := &Listed{}
	seen := map[string]bool{}
	for _, id := range c.Items {
		file, rest, _ := strings.Cut(id, "::")
		if file == "" || strings.ContainsAny(id, "\n\r") {
			l.Warnings = append(l.Warnings, fmt.Sprintf("node id %q is not a test in a file; skipped", id))
			continue
		}
		rel, err := filepath.Rel(c.InvocationDir, filepath.Join(c.RootDir, file))
		if err != nil {
			return nil, fail(s, nil, "", "node id %q: %v", id, err)
		}
		rel = filepath.ToSlash(rel)
		tag := rel
		if s.Options.Split == config.SplitTest && rest != "" {
			tag = rel + "::" + rest
		}
		if seen[tag] {
			continue
		}
		seen[tag] = true
		l.Items = append(l.Items, Item{Tag: tag, Args: opts})
	}
	if err := p.brokenFiles(c, opts, l, seen); err != nil {
		return nil, err
	}
	if len(l.Items) == 0 {
		return nil, fail(s, ErrNoItems, "", "pytest collected no tests in files")
	}
	return l, nil
}

// brokenFiles adds an item, with a warning, per test file that did not collect; any other collector fails the listing,
// as no item could run it alone.
func (p *pytestSuite) brokenFiles(c *collection, opts []string, l *Listed, seen map[string]bool) error {
	s := p.s
	for _, e := range c.Errors {
		file, _, _ := strings.Cut(e.NodeID, "::")
		base := filepath.Base(file)
		if file == "" || !strings.HasSuffix(file, ".py") || base == "conftest.py" || strings.ContainsAny(file, "\n\r") {
			return fail(s, nil, e.Longrepr, "pytest could not collect %q (errors during collection, see below)", e.NodeID)
		}
		rel, err := filepath.Rel(c.InvocationDir, filepath.Join(c.RootDir, file))
		if err != nil {
			return fail(s, nil, "", "node id %q: %v", e.NodeID, err)
		}
		tag := filepath.ToSlash(rel)
		l.Warnings = append(l.Warnings, fmt.Sprintf("pytest could not collect %s (%s): its item fails with the traceback, the other files run",
			tag, lastLine(e.Longrepr)))
		if !seen[tag] {
			seen[tag] = true
			l.Items = append(l.Items, Item{Tag: tag, Args: opts})
		}
	}
	return nil
}

// lastLine is the last non-blank line of s, trimmed (a traceback's cause).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Command runs pytest on the item's file (or node id, or the narrowed ids) without the suite's path operands,
// which would run the whole folder.
func (p *pytestSuite) Command(it Item, run Run) executor.Command {
	args := []string{"-m", "pytest"}
	if run.JUnit != "" {
		// xunit1 keeps each case's file, for a re-run to name it; first, so a junit_family of the suite's wins.
		args = append(args, "-o", "junit_family=xunit1")
	}
	args = append(args, it.Args...)
	if run.JUnit != "" {
		args = append(args, "--junitxml="+run.JUnit)
	}
	for _, o := range narrowTo([]string{it.Tag}, run.Only, func(id string) bool { return inItem(it, id) }) {
		args = append(args, operand(o))
	}
	return command(p.s, run, p.python(run.Dir), args)
}

// operand is an item's tag as pytest's one operand.
func operand(tag string) string {
	if strings.HasPrefix(tag, "-") {
		return "./" + tag // a file named like an option
	}
	return tag
}

// inItem reports whether node id is a test of the item.
func inItem(it Item, id string) bool {
	if strings.ContainsAny(id, "\n\r") {
		return false
	}
	return id == it.Tag || strings.HasPrefix(id, it.Tag+"::") || strings.Contains(it.Tag, "::") && strings.HasPrefix(id, it.Tag+"[")
}

// TestIDs are the failed cases' node ids from the xunit1 file Command asks for (junit.PytestNodeID);
// a case without one is ErrCannotNarrow.
func (p *pytestSuite) TestIDs(it Item, path string) ([]string, int, error) {
	failed, total, err := junit.FailedCases(path)
	if err != nil {
		return nil, 0, err
	}
	file, _, _ := strings.Cut(it.Tag, "::")
	var ids []string
	seen := map[string]bool{}
	for _, c := range failed {
		if err := notALine(c); err != nil {
			return nil, total, err
		}
		id, ok := junit.PytestNodeID(c)
		if ok {
			id, ok = fromRootdir(id, file)
		}
		if !ok || !inItem(it, id) {
			return nil, total, fmt.Errorf("%s: test %q (classname %q, file %q) has no node id in %s: %w",
				path, c.Name, c.Classname, c.File, it.Tag, ErrCannotNarrow)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, total, nil
}

// fromRootdir makes a node id relative to the repo root, as the item's file is; the rootdir may be below or above it.
func fromRootdir(id, file string) (string, bool) {
	f, rest, _ := strings.Cut(id, "::")
	if f == file || strings.HasSuffix(file, "/"+f) || strings.HasSuffix(f, "/"+file) {
		return file + "::" + rest, true
	}
	return "", false
}
