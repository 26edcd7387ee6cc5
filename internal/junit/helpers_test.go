package junit

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// schema is the Jenkins junit-10.xsd (MIT) with the three additions on <testcase>
// the merge keeps (file, line, properties); testdata/junit-10-relaxed.xsd says why.
const schema = "testdata/junit-10-relaxed.xsd"

// validateXSD runs xmllint against the schema in a subtest, so a machine
// without xmllint still runs every other assertion.
func validateXSD(t *testing.T, data []byte) {
	t.Helper()
	t.Run("xsd", func(t *testing.T) {
		lint, err := exec.LookPath("xmllint")
		if err != nil {
			t.Skip("!!! XMLLINT NOT FOUND: merged JUnit NOT validated against junit-10-relaxed.xsd; install libxml2-utils (apt-get install -y libxml2-utils) !!!")
		}
		f := filepath.Join(t.TempDir(), "merged.xml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lint, "--noout", "--schema", schema, f).CombinedOutput()
		if err != nil {
			t.Fatalf("xmllint rejects the merged file: %v\n%s\n--- file ---\n%s", err, out, data)
		}
	})
}

// encode renders d and checks that encoding/xml reads it back.
func encode(t *testing.T, d *Doc) ([]byte, xmlSuites) {
	t.Helper()
	var buf bytes.Buffer
	if err := d.Encode(&buf); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	var back xmlSuites
	if err := xml.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("output does not parse back: %v\n%s", err, buf.Bytes())
	}
	return buf.Bytes(), back
}

// writeTree creates files (relative path -> content) under dir with mtime.
func writeTree(t *testing.T, dir string, files map[string]string, mtime time.Time) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

func readFixture(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// findCase returns the first case with this name, and its suite.
func findCase(s xmlSuites, name string) (*xmlSuite, *xmlCase) {
	for i := range s.Suites {
		for j := range s.Suites[i].Cases {
			if s.Suites[i].Cases[j].Name == name {
				return &s.Suites[i], &s.Suites[i].Cases[j]
			}
		}
	}
	return nil, nil
}

func prop(s *xmlSuite, name string) (string, bool) {
	for _, p := range s.Props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// emptyDoc is a suite's document of no test: a merge of nothing.
func emptyDoc(label string) *Doc { return (&merger{label: label}).doc() }
