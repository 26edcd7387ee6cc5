package junit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/rerun"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// DefaultSuffix is what items append to their tag when JUNITXML_SUFFIX is unset.
const DefaultSuffix = ".xml"

// Source is where a suite's items wrote their JUnit XML, and where their logs are.
type Source struct {
	// Dir is the suite's JUnit dir (the items' JUNITXML_PREFIX); Suffix is JUNITXML_SUFFIX ("" means ".xml").
	Dir, Suffix string
	// Named: sgpu-queue named the items' files (an adapter suite: ItemFile).
	Named bool
	// LogDir is the log dir the items' logs are under (verdict.Item.LogRel).
	LogDir string
}

// Merge reads the XML files suite s's items wrote under src.Dir since since into one document. Problems with
// files become error cases; an error means the merge could not be done at all.
func Merge(ctx context.Context, s verdict.Suite, src Source, since time.Time) (*Doc, error) {
	if src.Dir == "" {
		return nil, fmt.Errorf("junit: no JUnit directory given for suite %s; pass <junit-prefix>/%s", s.Label, s.Label)
	}
	// dirFS and the walk never leave dir, follow a link or wait on a FIFO.
	return merge(ctx, s.Label, dirFS(src.Dir), src.Suffix, itemsOf(s, src), since, defaultLimits())
}

// xmlFile is one JUnit file of this run found under the suite's directory.
type xmlFile struct {
	rel     string // slash-separated, relative to dir
	size    int64
	partial bool // its .partial sidecar is there too
	owner   int  // index of the item that wrote it, -1: none
}

type scanProblem struct {
	rel string
	err error
}

type merger struct {
	fsys   fs.FS
	label  string
	lim    limits
	since  time.Time // files older than this are an earlier run's
	suites []xmlSuite
	stats  Stats
}

// merge works on an fs.FS, so tests and the fuzzer run it in memory.
func merge(ctx context.Context, label string, fsys fs.FS, suffix string, items []item, since time.Time, lim limits) (*Doc, error) {
	if label == "" {
		return nil, errors.New("junit: empty suite label; pass the suite's label from the config")
	}
	if suffix == "" {
		suffix = DefaultSuffix
	}
	files, orphans, problems, err := scan(ctx, fsys, suffix, since)
	if err != nil {
		return nil, err
	}
	own := attribute(files, items, suffix)
	// A sidecar without its XML: the item was cut off before it wrote the file.
	cutOff := make([][]string, len(items))
	var lostFiles []string
	for _, rel := range orphans {
		if i, ok := own.ownerOf(rel); ok {
			cutOff[i] = append(cutOff[i], rel)
		} else {
			lostFiles = append(lostFiles, rel)
		}
	}

	m := &merger{label: label, lim: lim, fsys: fsys, since: since}
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("junit: merge %s: %w", label, err)
		}
		m.addItem(it, files, own.files[i], cutOff[i])
	}
	// Files nobody claimed are still this run's results: keep them under the suite.
	for _, f := range files {
		if f.owner >= 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("junit: merge %s: %w", label, err)
		}
		m.addFile(f, nil, f.partial)
		if f.partial {
			m.addFileError(f.rel, "sgpu-queue.cut-off",
				fmt.Sprintf("%s: its writer was cut off (a .partial sidecar outlived it); the file may miss tests", f.rel))
		}
	}
	for _, rel := range lostFiles {
		m.addFileError(rel, "sgpu-queue.cut-off",
			fmt.Sprintf("%s: its writer was cut off before writing it (only %s%s is there)", rel, rel, rerun.PartialSuffix))
	}
	for _, p := range problems {
		m.stats.Malformed++
		m.addFileError(p.rel, "sgpu-queue.unreadable-junit", fmt.Sprintf("cannot read JUnit XML %s: %v", p.rel, p.err))
	}
	return m.doc(), nil
}

// ownership is which item wrote which of the suite's files.
type ownership struct {
	files  [][]int        // by item: indices of its files
	byName map[string]int // an item's own file name (ItemFile) → the item
	whole  int            // the one opaque item, which owns what no tag claims; -1: none
}

// attribute gives each file to the item whose file it is (ItemFile); one opaque item owns the rest,
// several cannot be told apart.
func attribute(files []xmlFile, items []item, suffix string) ownership {
	byRel := make(map[string]int, len(files))
	for i := range files {
		byRel[files[i].rel] = i
	}
	o := ownership{files: make([][]int, len(items)), byName: make(map[string]int, len(items)), whole: -1}
	opaque, opaqueCount := -1, 0
	for i, it := range items {
		if it.Tag == "" {
			opaque = i
			opaqueCount++
			continue
		}
		key, ok := ItemFile(it.Tag, suffix, it.named)
		if !ok {
			continue
		}
		if _, dup := o.byName[key]; dup {
			continue // two tags naming one file ("a//b", "a/b"): the first owns it
		}
		o.byName[key] = i
		if fi, ok := byRel[key]; ok {
			files[fi].owner = i
			o.files[i] = append(o.files[i], fi)
		}
	}
	if opaqueCount != 1 {
		return o
	}
	o.whole = opaque
	for i := range files {
		if files[i].owner < 0 {
			files[i].owner = opaque
			o.files[opaque] = append(o.files[opaque], i)
		}
	}
	return o
}

// ownerOf is the item whose file rel is: its tag's, else the whole suite's.
func (o ownership) ownerOf(rel string) (int, bool) {
	if i, ok := o.byName[rel]; ok {
		return i, true
	}
	return o.whole, o.whole >= 0
}

// addItem adds an item's files and sidecars, and a case of its own when they do not tell how it ended.
func (m *merger) addItem(it item, files []xmlFile, mine []int, lost []string) {
	partial := it.cut() || len(lost) > 0
	for _, fi := range mine {
		partial = partial || files[fi].partial
	}
	var failures int
	malformed := false
	for _, fi := range mine {
		got, ok := m.addFile(files[fi], &it, partial)
		failures += got
		malformed = malformed || !ok
		if files[fi].partial {
			m.addProgress(it, files[fi].rel, true, partial)
		}
	}
	for _, rel := range lost {
		m.addProgress(it, rel, false, partial)
	}
	switch {
	case !it.Failed && !partial:
		// A passing item adds nothing beyond its own files.
	case len(mine) == 0:
		m.addItemError(it, partial, "sgpu-queue.no-junit",
			fmt.Sprintf("item %s of suite %s: %s; it wrote no JUnit XML", it.Column(), m.label, it.status(partial)))
	case partial:
		m.addItemError(it, partial, "sgpu-queue.cut-off",
			fmt.Sprintf("item %s of suite %s: %s; its JUnit XML may miss the tests it never reached", it.Column(), m.label, it.status(partial)))
	case failures == 0 && !malformed:
		m.addItemError(it, partial, "sgpu-queue.item-failed",
			fmt.Sprintf("item %s of suite %s: %s, but its JUnit XML records no failure", it.Column(), m.label, it.status(partial)))
	}
}

// scan lists this run's XML files (regular, ending in suffix, modified since since) and sidecars without their XML.
func scan(ctx context.Context, fsys fs.FS, suffix string, since time.Time) (files []xmlFile, orphans []string, problems []scanProblem,
	err error) {
	sidecars := map[string]bool{}
	walkErr := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if rel == "." && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // no directory: nobody wrote anything
			}
			problems = append(problems, scanProblem{rel: rel, err: err})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		isSidecar := strings.HasSuffix(rel, suffix+rerun.PartialSuffix)
		if !isSidecar && !strings.HasSuffix(rel, suffix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, scanProblem{rel: rel, err: err})
			}
			return nil
		}
		if info.ModTime().Before(since) {
			return nil // an earlier run's file
		}
		if isSidecar {
			sidecars[strings.TrimSuffix(rel, rerun.PartialSuffix)] = true
			return nil
		}
		files = append(files, xmlFile{rel: rel, size: info.Size(), owner: -1})
		return nil
	})
	if walkErr != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, nil, nil, fmt.Errorf("junit: scan: %w", cerr)
		}
		return nil, nil, nil, fmt.Errorf("junit: scan: %w", walkErr)
	}
	have := make(map[string]bool, len(files))
	for i := range files {
		have[files[i].rel] = true
		files[i].partial = sidecars[files[i].rel]
	}
	for rel := range sidecars {
		if !have[rel] {
			orphans = append(orphans, rel)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	sort.Strings(orphans)
	return files, orphans, problems, nil
}

// addFile adds one file's suites, or an error case; it returns the file's failures+errors and whether it parsed.
func (m *merger) addFile(f xmlFile, it *item, partial bool) (int, bool) {
	m.stats.Files++
	var (
		suites []xmlSuite
		err    error
	)
	if f.size > m.lim.maxBytes {
		err = fmt.Errorf("%s is %d bytes, larger than the %s limit on one JUnit file; not read", f.rel, f.size, humanBytes(m.lim.maxBytes))
	} else {
		suites, err = readJUnit(m.fsys, f.rel, m.lim)
	}
	if err != nil {
		m.stats.Malformed++
		msg := fmt.Sprintf("malformed JUnit XML %s: %v", f.rel, err)
		if it != nil {
			msg += fmt.Sprintf(" (item %s: %s)", it.Column(), it.status(partial))
			if it.log != "" {
				msg += "; log: " + it.log
			}
		}
		m.addSuite(errorSuite(m.label, f.rel, 0, MalformedType, msg, "", itemProps(f.rel, it, partial)))
		return 1, false
	}
	bad := 0
	ids := m.failedIDs(f.rel)
	for _, s := range suites {
		locate(&s, ids)
		s.Props = append(s.Props, itemProps(f.rel, it, partial)...)
		bad += s.Failures + s.Errors
		m.addSuite(s)
	}
	return bad, true
}

// itemProps attributes a suite to the item (and file) it came from.
func itemProps(source string, it *item, partial bool) []xmlProperty {
	var p []xmlProperty
	add := func(k, v string) { p = append(p, xmlProperty{Name: k, Value: clean(v)}) }
	if it != nil {
		add("sgpu.item", it.Column())
		if it.GPU != "" {
			add("sgpu.gpu", it.GPU)
		}
		add("sgpu.seconds", seconds(it.Seconds))
		if it.Finished {
			add("sgpu.rc", strconv.Itoa(it.RC))
		}
		add("sgpu.status", it.word(partial))
		if it.note() != "" {
			add("sgpu.note", it.note())
		}
		if it.log != "" {
			add("sgpu.log", it.log)
		}
	}
	if source != "" {
		add("sgpu.source", source)
	}
	return p
}

// addItemError adds a suite with one error case standing for the item.
func (m *merger) addItemError(it item, partial bool, typ, msg string) {
	if it.log != "" {
		msg += "; log: " + it.log
	}
	var body strings.Builder
	fmt.Fprintf(&body, "suite: %s\nitem: %s\n", m.label, it.Column())
	if it.GPU != "" {
		fmt.Fprintf(&body, "gpu: %s\n", it.GPU)
	}
	fmt.Fprintf(&body, "seconds: %s\n", seconds(it.Seconds))
	if it.log != "" {
		fmt.Fprintf(&body, "log: %s\n", it.log)
		if tail := textfmt.FileTail(it.log, 4096, 40); tail != "" {
			fmt.Fprintf(&body, "\nlast lines of the log:\n%s", tail)
		}
	}
	m.addSuite(errorSuite(m.label, it.Column(), it.Seconds, typ, msg, body.String(), itemProps("", &it, partial)))
}

// addFileError adds a suite with one error case about a file nobody claimed.
func (m *merger) addFileError(rel, typ, msg string) {
	m.addSuite(errorSuite(m.label, rel, 0, typ, msg, "", itemProps(rel, nil, false)))
}

// errorSuite is a suite "<label>:<name>" of one error case that sgpu-queue adds.
func errorSuite(label, name string, secs float64, typ, msg, body string, props []xmlProperty) xmlSuite {
	return xmlSuite{
		Name:    clean(label + ":" + name),
		Props:   props,
		seconds: clampSeconds(secs),
		Time:    seconds(secs),
		Cases: []xmlCase{{
			Name:      clean(name),
			Classname: clean("sgpu-queue." + label),
			Time:      seconds(secs),
			Error:     &xmlResult{Message: clean(msg), Type: typ, Body: clean(body)},
		}},
	}
}

func (m *merger) addSuite(s xmlSuite) {
	s.count()
	m.suites = append(m.suites, s)
}

func (m *merger) doc() *Doc {
	d := &Doc{root: xmlSuites{Name: clean(m.label), Suites: m.suites}}
	st := &d.stats
	*st = m.stats
	for _, s := range m.suites {
		st.Tests += s.Tests
		st.Failures += s.Failures
		st.Errors += s.Errors
		st.Skipped += s.Skipped
		st.Seconds += s.seconds
	}
	d.root.Tests, d.root.Failures, d.root.Errors = st.Tests, st.Failures, st.Errors
	d.root.Time = seconds(st.Seconds)
	return d
}

// status says how the item ended, for messages ("cancelled, never finished").
func (it item) status(partial bool) string {
	var parts []string
	if partial {
		parts = append(parts, "cut off (a .partial sidecar outlived it)")
	}
	return strings.Join(append(parts, it.ended()...), ", ")
}

// ended is the item's note, then its exit code or "never finished".
func (it item) ended() []string {
	var parts []string
	if it.note() != "" {
		parts = append(parts, it.note())
	}
	if it.Finished {
		return append(parts, "exit code "+strconv.Itoa(it.RC))
	}
	return append(parts, "never finished")
}

// word is the one-word verdict of the sgpu.status property.
func (it item) word(partial bool) string {
	switch {
	case partial:
		return "cut off"
	case !it.Finished:
		return "never finished"
	case it.Failed:
		return "failed"
	}
	return "ok"
}
