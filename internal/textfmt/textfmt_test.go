package textfmt

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDur(t *testing.T) {
	tests := []struct {
		secs float64
		want string
	}{
		{0, "0.0s"},
		{0.04, "0.0s"},
		{0.45, "0.5s"},
		{9.94, "9.9s"},
		{10, "10s"},
		{12.4, "12s"},
		{599.4, "599s"},
		{600, "10m00s"},
		{245, "245s"},
		{1204, "20m04s"},
		{3599.9, "59m59s"},
		{3600, "1h00m"},
		{3725, "1h02m"},
		{500500, "139h01m"},
		{-2, "-2.0s"},
		{math.NaN(), "?"},
		{math.Inf(1), "?"},
		{math.Inf(-1), "?"},
	}
	for _, tt := range tests {
		if got := Dur(tt.secs); got != tt.want {
			t.Errorf("Dur(%v) = %q, want %q", tt.secs, got, tt.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct {
		in     string
		quoted bool
	}{
		{"test_numerics.ck.amax+triton", false},
		{"mxfp4..ck", false},
		{"../evil/x", false}, // odd but one word with nothing to hide
		{"", false},
		{"héllo-wörld_日本", false},
		{"a b", true},
		{"a\tb", true},
		{"line\nbreak", true},
		{"\x1b[31mred\x1b[0m", true},
		{"bell\x07", true},
		{"del\x7f", true},
		{"c1\u009b31m", true}, // C1 CSI, UTF-8 encoded
		{"raw\x9b31m", true},  // C1 CSI as a raw byte: not UTF-8
		{"bad\xff\xfe", true}, // not UTF-8
		{"zero\u200bwidth", true},
		{"nb\u00a0space", true},
		{"ls\u2028sep", true},
		{"bidi\u202eevil", true}, // right-to-left override
		{`"a b"`, true},          // would read as the quoted name a b
		{`"x`, true},
		{`x"y`, false},
	}
	for _, tt := range tests {
		got := Printable(tt.in)
		want := tt.in
		if tt.quoted {
			want = strconv.Quote(tt.in)
		}
		if got != want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"a", "a b", "\x1b[2J", "\xff", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		for _, r := range p {
			if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0x202e {
				t.Fatalf("Printable(%q) = %q lets %U through", s, p, r)
			}
		}
		if p == s && strings.HasPrefix(s, `"`) {
			t.Fatalf("Printable(%q) left a leading quote: it reads as a quoted name", s)
		}
		if p != s {
			if back, err := strconv.Unquote(p); err != nil || back != s {
				t.Fatalf("Printable(%q) = %q does not unquote back (%v)", s, p, err)
			}
		}
	})
}

func TestFileTail(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString("\x1b[31mline ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\x1b[0m\r\n")
	}
	b.WriteString("last words")
	p := filepath.Join(dir, "big.log")
	os.WriteFile(p, []byte(b.String()), 0o644)
	tail := FileTail(p, 4096, 40)
	lines := strings.Split(strings.TrimSuffix(tail, "\n"), "\n")
	if len(lines) != 40 || lines[39] != "last words" || strings.Contains(tail, "\x1b") || strings.Contains(tail, "\r") {
		t.Errorf("tail has %d lines, last %q:\n%q", len(lines), lines[len(lines)-1], tail)
	}
	if FileTail(filepath.Join(dir, "none.log"), 4096, 40) != "" || FileTail(dir, 4096, 40) != "" {
		t.Error("tail of a missing file or a directory")
	}
	// An item may leave a FIFO where its log was: no tail, and no wait for a writer.
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- FileTail(fifo, 4096, 40) }()
	select {
	case got := <-done:
		if got != "" {
			t.Errorf("tail of a FIFO %q", got)
		}
	case <-time.After(30 * time.Second): // generous: nothing here is timed
		t.Fatal("FileTail blocked on a FIFO")
	}
}

func TestCapped(t *testing.T) {
	c := &Capped{Max: 5}
	for _, p := range []string{"ab", "cd", "efg", "h"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want every byte taken, no error", p, n, err)
		}
	}
	if string(c.Bytes()) != "abcd" || !c.Over() {
		t.Errorf("kept %q over=%v, want \"abcd\" (nothing after the first write that did not fit) and over", c.Bytes(), c.Over())
	}
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 GPUs"}, {1, "1 GPU"}, {2, "2 GPUs"}, {-1, "-1 GPUs"}} {
		if got := Count(tt.n, "GPU"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		note string
		want string
	}{
		{"short", 10, "…", "short"},
		{"exactly10!", 10, "…", "exactly10!"},
		{"abcdefghijk", 10, "…", "abcdefg…"},
		{"ééééé", 5, "", "éé"},             // never half a rune
		{"ab\xffcd", 10, "", "ab\uFFFDcd"}, // invalid UTF-8 is replaced, not sent
		{"abcdef", 3, "long note", "abc"},  // a note that does not fit is dropped
	}
	for _, tc := range tests {
		if got := Truncate(tc.in, tc.max, tc.note); got != tc.want {
			t.Errorf("Truncate(%q, %d, %q) = %q, want %q", tc.in, tc.max, tc.note, got, tc.want)
		}
	}
}
