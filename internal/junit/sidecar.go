package junit

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/rocm/sgpu-queue/internal/rerun"
)

// UnfinishedType is the type of the error case Merge adds for a test an item's
// .partial sidecar says started and never ended: the test its crash, hang or kill
// died in (docs/files.md, "Merged JUnit"). Unlike the other ToolType cases it
// stands for a test, not for the item.
const UnfinishedType = ToolType + "unfinished"

// failedExt is the sidecar of TE's plugin that lists every failing test id: the
// node ids a JUnit file in pytest's default xunit2 family cannot give.
const failedExt = ".failed"

// readSidecar reads rel if it is a regular file of this run (modified at or after
// since), within the limit of any JUnit input; false when it is not there or not
// usable.
func (m *merger) readSidecar(rel string) ([]byte, bool) {
	fi, err := fs.Lstat(m.fsys, rel) // never through a link
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > m.lim.maxBytes || fi.ModTime().Before(m.since) {
		return nil, false
	}
	data, err := readCapped(m.fsys, rel, m.lim.maxBytes)
	return data, err == nil
}

// NodeCase is the case a pytest node id names: its file, pytest's classname (the
// file dotted without ".py", then the classes) and name; a node id without "::"
// (not pytest's) is a name alone.
func NodeCase(id string) (file, classname, name string) {
	parts := strings.Split(id, "::")
	if len(parts) < 2 || !strings.HasSuffix(parts[0], ".py") {
		return "", "", id
	}
	file = parts[0]
	cls := append([]string{strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")}, parts[1:len(parts)-1]...)
	return file, strings.Join(cls, "."), parts[len(parts)-1]
}

// locate gives each failed or errored case of s without a file attribute the file
// of the node id in ids that names it (TE's .failed sidecar: pytest's xunit2
// family writes no file attribute, docs/files.md). A case that none names, or
// several, keeps what it had.
func locate(s *xmlSuite, ids []string) {
	if len(ids) == 0 {
		return
	}
	files := map[[2]string]string{}
	for _, id := range ids {
		file, cls, name := NodeCase(id)
		if file == "" {
			continue
		}
		k := [2]string{cls, name}
		if old, dup := files[k]; dup && old != file {
			file = "" // two files dot to one classname: not known
		}
		files[k] = file
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		if c.File != "" || c.Failure == nil && c.Error == nil {
			continue
		}
		if f := files[[2]string{c.Classname, c.Name}]; f != "" {
			c.File = clean(f)
		}
	}
}

// failedIDs are the ids of rel's .failed sidecar, nil without one.
func (m *merger) failedIDs(rel string) []string {
	data, ok := m.readSidecar(rel + failedExt)
	if !ok {
		return nil
	}
	return rerun.Lines(data)
}

// addProgress adds what the .partial sidecar of the item's file rel recorded: an
// error case of UnfinishedType for each test that started and never ended, and,
// when the item wrote no XML (wrote false), a case for each test that did end,
// since nothing else records them.
func (m *merger) addProgress(it item, rel string, wrote, partial bool) {
	data, ok := m.readSidecar(rel + partialExt)
	if !ok {
		return
	}
	p := rerun.ParseProgress(data)
	var cases []xmlCase
	if !wrote {
		for _, id := range p.Started {
			if ph := p.Phases[id]; ph.Ended() {
				cases = append(cases, endedCase(id, ph))
			}
		}
	}
	for _, id := range p.Unfinished() {
		file, cls, name := NodeCase(id)
		msg := fmt.Sprintf("the test was running when item %s of suite %s ended: %s", it.Column(), m.label, it.end(partial))
		cases = append(cases, xmlCase{Name: clean(name), Classname: clean(cls), File: clean(file), Time: seconds(0),
			Error: &xmlResult{Message: clean(msg), Type: UnfinishedType}})
	}
	if len(cases) == 0 {
		return
	}
	m.addSuite(xmlSuite{Name: clean(m.label + ":" + it.Column() + partialExt), Props: itemProps(rel+partialExt, &it, partial),
		Time: seconds(0), Cases: cases})
}

// endedCase is a test the .partial recorded an end of, as a JUnit case: failed
// in its call, errored in its setup or teardown, skipped, or passed.
func endedCase(id string, ph rerun.Phases) xmlCase {
	file, cls, name := NodeCase(id)
	c := xmlCase{Name: clean(name), Classname: clean(cls), File: clean(file), Time: seconds(0)}
	r := &xmlResult{Message: clean(ph.Message)}
	switch o := ph.Outcome; {
	case o["call"] == "failed":
		c.Failure = r
	case o["setup"] == "failed" || o["teardown"] == "failed":
		c.Error = r
	case o["setup"] == "skipped" || o["call"] == "skipped":
		c.Skipped = &xmlResult{}
	}
	return c
}

// end says how an item ended, shortest first: "timed out, exit code 124", "exit
// code 139, cut off", "never finished".
func (it item) end(partial bool) string {
	parts := it.ended()
	if partial && it.note() == "" {
		parts = append(parts, "cut off")
	}
	return strings.Join(parts, ", ")
}
