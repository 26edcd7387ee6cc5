package logdir

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSafeTag(t *testing.T) {
	tests := []struct {
		tag  string
		want string // exact, or prefix+"~" when hashed
	}{
		{"", "whole"},
		{"test_numerics.ck.amax+triton", "test_numerics.ck.amax+triton"},
		{"mxfp4..ck", "mxfp4..ck"},
		{"a=b-c_d", "a=b-c_d"},
		{"a/b", "a_b~"},
		{"../../etc/passwd", ".._.._etc_passwd~"},
		{"with space", "with_space~"},
		{"tab\there", "tab_here~"},
		{"nl\nx", "nl_x~"},
		{"a_b~0000", "a_b_0000~"},
		{"whole", "whole~"}, // the opaque item's name is never a tag's
		{"ü", "__~"},
	}
	for _, tt := range tests {
		got := SafeTag(tt.tag)
		if strings.HasSuffix(tt.want, "~") {
			if !strings.HasPrefix(got, tt.want) || len(got) != len(tt.want)+hashLen {
				t.Errorf("SafeTag(%q) = %q, want %s<hash>", tt.tag, got, tt.want)
			}
		} else if got != tt.want {
			t.Errorf("SafeTag(%q) = %q, want %q", tt.tag, got, tt.want)
		}
	}
	if SafeTag("a/b") == SafeTag("a b") || SafeTag("a/b") == SafeTag("a_b") {
		t.Error("two tags share a file name")
	}
	if long := SafeTag(strings.Repeat("x", 500)); len(long) != MaxSafeTag {
		t.Errorf("long tag gives %d bytes", len(long))
	}
}

// Whatever the tag, the item's files stay directly inside items/ and cwd/.
func FuzzSafeTagStaysInside(f *testing.F) {
	for _, s := range []string{"a", "../x", "a/../../b", "..", "/", "\x00", "a\nb"} {
		f.Add(s)
	}
	l := Layout{Root: "/logs"}
	f.Fuzz(func(t *testing.T, tag string) {
		for _, p := range []string{l.ItemLog("torch", tag), l.ItemCwd("torch", tag)} {
			dir := filepath.Dir(p)
			if dir != "/logs/items" && dir != "/logs/cwd" {
				t.Fatalf("tag %q → %s outside items/ and cwd/", tag, p)
			}
		}
		s := SafeTag(tag)
		if s == "" || strings.ContainsAny(s, "/\\\x00") || !utf8.ValidString(s) {
			t.Fatalf("SafeTag(%q) = %q", tag, s)
		}
	})
}

func TestEscapeField(t *testing.T) {
	for _, s := range []string{"plain", "a\tb", "a\\tb", "x\ny\r", `\`, `a\\`, ""} {
		e := EscapeField(s)
		if strings.ContainsAny(e, "\t\n\r") {
			t.Errorf("EscapeField(%q) = %q keeps a separator", s, e)
		}
		if back := UnescapeField(e); back != s {
			t.Errorf("round trip %q → %q → %q", s, e, back)
		}
	}
}

func TestTimingsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "timings.tsv")
	w, err := OpenTimings(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := []Timing{
		{Label: "torch", Item: "test_a", GPU: "0", Secs: 1.5, RC: 0, StartOff: 0, EndOff: 1.5, Est: "1.2"},
		{Label: "torch", Item: "tab\there", GPU: "1", Secs: 260, RC: 139, StartOff: 3.25, EndOff: 263.25, Est: "unknown", Incomplete: true},
		{Label: "core", Item: Whole, GPU: "2", Secs: 0.001, RC: 1, EndOff: 0.001, Est: "5"},
	}
	for _, r := range rows {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, _ := os.Open(path)
	defer f.Close()
	got, warns := ParseTimings(f)
	if len(warns) != 0 || len(got) != len(rows) {
		t.Fatalf("got %d rows, warnings %q", len(got), warns)
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], rows[i])
		}
	}
}

func TestParseTimingsBadRows(t *testing.T) {
	in := "torch\ta\t0\t1\t0\t0\t1\t1\t0\n" + // good
		"torch\tb\t0\n" + // missing columns (killed mid-write)
		"torch\tc\t0\tx\t0\n" + // not a number
		"torch\td\t1\t2\t1\n" + // torn after rc
		"\n" +
		"torch\te\t0\t-1\t0\t0\t1\t1\t0\n" + // negative
		"torch\tf\t1\t2\t0\t3.5\t5.5\t\t1\n" // good: no estimate, cut off
	got, warns := ParseTimings(strings.NewReader(in))
	if len(got) != 2 || got[1].Item != "f" || got[1].EndOff != 5.5 || got[1].Est != "unknown" || !got[1].Incomplete {
		t.Errorf("rows %+v", got)
	}
	if len(warns) != 4 || !strings.HasPrefix(warns[0], "timings.tsv:2:") || !strings.HasPrefix(warns[3], "timings.tsv:6:") {
		t.Errorf("warnings %q", warns)
	}
}

func FuzzParseTimings(f *testing.F) {
	f.Add("torch\ta\t0\t1\t0\t0\t1\t1\t0\n")
	f.Add("a\tb\tc\n\t\t\t\t\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, _ := ParseTimings(strings.NewReader(in))
		for _, r := range rows {
			if r.Secs < 0 || r.Secs != r.Secs || r.Label == "" || r.Item == "" {
				t.Fatalf("accepted %+v", r)
			}
			back, warns := ParseTimings(strings.NewReader(r.Format()))
			if len(warns) != 0 || len(back) != 1 || back[0].Label != r.Label || back[0].Item != r.Item || back[0].RC != r.RC {
				t.Fatalf("round trip %+v → %+v %q", r, back, warns)
			}
		}
	})
}

func TestQueueRoundTrip(t *testing.T) {
	rows := []QueueRow{
		{Weight: 999999, Label: "torch", Cmd: "ci/pytorch.sh", Tag: "new"},
		{Weight: 12.5, Label: "core", Cmd: "ci/core.sh", Args: []string{"-x", "y"}},
	}
	var b strings.Builder
	if err := FormatQueue(&b, rows); err != nil {
		t.Fatal(err)
	}
	if b.String() != "999999\ttorch\tci/pytorch.sh\tnew\t\n12.5\tcore\tci/core.sh\t\t-x y\n" {
		t.Errorf("queue.tsv = %q", b.String())
	}
	back, err := ParseQueue(strings.NewReader(b.String()))
	if err != nil || len(back) != 2 || back[1].Tag != "" || strings.Join(back[1].Args, ",") != "-x,y" {
		t.Errorf("parse: %v %+v", err, back)
	}
}

// shortWriter fails its first write after writing part of it, like a disk that
// fills up mid-row, then works again.
type shortWriter struct {
	buf    strings.Builder
	failed bool
}

func (s *shortWriter) String() string { return s.buf.String() }

func (s *shortWriter) Write(p []byte) (int, error) {
	if !s.failed {
		s.failed = true
		s.buf.Write(p[:len(p)/2])
		return len(p) / 2, io.ErrShortWrite
	}
	return s.buf.Write(p)
}

func (s *shortWriter) Close() error { return nil }

// A row torn by a failed write costs that row only: the next one starts on its own line.
func TestTimingsWriterTornRow(t *testing.T) {
	sw := &shortWriter{}
	w := &TimingsWriter{w: sw}
	a := Timing{Label: "s", Item: "a", GPU: "0", Secs: 1, RC: 0, EndOff: 1, Est: "1"}
	b := Timing{Label: "s", Item: "b", GPU: "1", Secs: 2, RC: 0, EndOff: 2, Est: "2"}
	if err := w.Append(a); err == nil {
		t.Fatal("the short write was not reported")
	}
	if err := w.Append(b); err != nil {
		t.Fatal(err)
	}
	rows, warns := ParseTimings(strings.NewReader(sw.String()))
	if len(rows) != 1 || rows[0].Item != "b" || len(warns) != 1 {
		t.Errorf("rows %+v warnings %q from %q", rows, warns, sw.String())
	}
}
