package junit

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/rocm/sgpu-queue/internal/rerun"
)

// UnfinishedType is the error case of a test an item's .partial says started and never ended
// (docs/files.md, "Merged JUnit").
const UnfinishedType = ToolType + "unfinished"

// readSidecar reads rel if it is a regular file of this run, within Merge's limits.
func (m *merger) readSidecar(rel string) ([]byte, bool) {
	fi, err := fs.Lstat(m.fsys, rel) // never through a link
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > m.lim.maxBytes || fi.ModTime().Before(m.since) {
		return nil, false
	}
	data, err := readCapped(m.fsys, rel, m.lim.maxBytes)
	return data, err == nil
}

// NodeCase splits a pytest node id into file, classname and name; an id without "::" is a name alone.
func NodeCase(id string) (file, classname, name string) {
	parts := strings.Split(id, "::")
	if len(parts) < 2 || !strings.HasSuffix(parts[0], ".py") {
		return "", "", id
	}
	file = parts[0]
	cls := append([]string{strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")}, parts[1:len(parts)-1]...)
	return file, strings.Join(cls, "."), parts[len(parts)-1]
}

// locate gives each failed case without a file attribute the file of the one node id in ids naming it (docs/files.md).
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
	data, ok := m.readSidecar(rel + rerun.FailedSuffix)
	if !ok {
		return nil
	}
	return rerun.Lines(data)
}

// addProgress adds an error case per test the .partial says never ended and, when the item wrote no XML,
// a case per test that ended.
func (m *merger) addProgress(it item, rel string, wrote, partial bool) {
	data, ok := m.readSidecar(rel + rerun.PartialSuffix)
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
	m.addSuite(xmlSuite{Name: clean(m.label + ":" + it.Column() + rerun.PartialSuffix), Props: itemProps(rel+rerun.PartialSuffix, &it, partial),
		Time: seconds(0), Cases: cases})
}

// endedCase is a test the .partial saw end, as a JUnit case.
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

// end says how an item ended, shortest first ("exit code 139, cut off").
func (it item) end(partial bool) string {
	parts := it.ended()
	if partial && it.note() == "" {
		parts = append(parts, "cut off")
	}
	return strings.Join(parts, ", ")
}
