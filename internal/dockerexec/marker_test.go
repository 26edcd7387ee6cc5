package dockerexec

import (
	"bytes"
	"strconv"
	"testing"
)

// feed writes stream to a marker in pieces cut at the given sizes, then finishes it.
func feed(stream []byte, cuts []int) (*marker, string) {
	var out bytes.Buffer
	m := newMarker(&out)
	for len(stream) > 0 {
		n := len(stream)
		if len(cuts) > 0 {
			n = min(max(cuts[0], 1), n)
			cuts = cuts[1:]
		}
		if k, err := m.Write(stream[:n]); k != n || err != nil {
			panic("short write")
		}
		stream = stream[n:]
	}
	if err := m.finish(); err != nil {
		panic(err)
	}
	return m, out.String()
}

func TestMarker(t *testing.T) {
	const rs = "\x1e"
	tests := []struct {
		name   string
		stream string
		out    string
		kind   string
		pgid   int
		ended  bool
		exit   int
	}{
		{name: "reports around output", stream: rs + "sgpu-queue:pgid=42\nwarning: x\n" + rs + "sgpu-queue:exit=3\n", out: "warning: x\n", kind: markPgid, pgid: 42, ended: true, exit: 3},
		{name: "no output", stream: rs + "sgpu-queue:pgid=7\n" + rs + "sgpu-queue:exit=0\n", kind: markPgid, pgid: 7, ended: true},
		{name: "killed launcher: no last report", stream: rs + "sgpu-queue:pgid=7\npartial", out: "partial", kind: markPgid, pgid: 7},
		{name: "not found", stream: rs + "sgpu-queue:notfound\n" + rs + "sgpu-queue:exit=127\n", kind: markNotFound, ended: true, exit: 127},
		{name: "no dir", stream: rs + "sgpu-queue:nodir\n", kind: markNoDir},
		{name: "no setsid", stream: rs + "sgpu-queue:nosetsid\n", kind: markNoSetsid},
		{name: "no launcher", stream: "sh: not found\n", out: "sh: not found\n"},
		{name: "empty", stream: ""},
		{name: "bad pgid passes through", stream: rs + "sgpu-queue:pgid=1\nx", out: rs + "sgpu-queue:pgid=1\nx"},
		{name: "leading zero pgid passes through", stream: rs + "sgpu-queue:pgid=012\n", out: rs + "sgpu-queue:pgid=012\n"},
		{name: "unknown report passes through", stream: rs + "sgpu-queue:what\n", out: rs + "sgpu-queue:what\n"},
		{name: "unfinished report passes through", stream: rs + "sgpu-queue:pg", out: rs + "sgpu-queue:pg"},
		{name: "long first line passes through", stream: rs + "sgpu-queue:" + string(bytes.Repeat([]byte("x"), 100)), out: rs + "sgpu-queue:" + string(bytes.Repeat([]byte("x"), 100))},
		{name: "program's look-alike stays", stream: rs + "sgpu-queue:pgid=9\n" + rs + "sgpu-queue:pgid=9\n" + rs + "sgpu-queue:exit=1\nmore\n" + rs + "sgpu-queue:exit=2\n",
			out: rs + "sgpu-queue:pgid=9\n" + rs + "sgpu-queue:exit=1\nmore\n", kind: markPgid, pgid: 9, ended: true, exit: 2},
		{name: "separator in output", stream: rs + "sgpu-queue:pgid=9\na" + rs + "b" + rs, out: "a" + rs + "b" + rs, kind: markPgid, pgid: 9},
		{name: "exit over 255 is no report", stream: rs + "sgpu-queue:pgid=9\n" + rs + "sgpu-queue:exit=256\n", out: rs + "sgpu-queue:exit=256\n", kind: markPgid, pgid: 9},
		{name: "trailer without newline is output", stream: rs + "sgpu-queue:pgid=9\n" + rs + "sgpu-queue:exit=0", out: rs + "sgpu-queue:exit=0", kind: markPgid, pgid: 9},
	}
	for _, tt := range tests {
		for _, cut := range []int{1, 2, 5, 13, 1 << 20} {
			t.Run(tt.name+"/cut "+strconv.Itoa(cut), func(t *testing.T) {
				cuts := make([]int, len(tt.stream))
				for i := range cuts {
					cuts[i] = cut
				}
				m, out := feed([]byte(tt.stream), cuts)
				if out != tt.out || m.kind != tt.kind || m.pgid != tt.pgid || m.ended != tt.ended || m.exit != tt.exit {
					t.Errorf("got out %q kind %q pgid %d ended %v exit %d; want %q %q %d %v %d",
						out, m.kind, m.pgid, m.ended, m.exit, tt.out, tt.kind, tt.pgid, tt.ended, tt.exit)
				}
				select {
				case <-m.ready:
				default:
					t.Error("ready not closed after finish")
				}
			})
		}
	}
}

// The filter takes out at most the two report lines, and nothing else, however the
// stream is cut into frames.
func FuzzMarker(f *testing.F) {
	f.Add([]byte("\x1esgpu-queue:pgid=42\nhello\n\x1esgpu-queue:exit=3\n"), []byte{3, 1, 200})
	f.Add([]byte("\x1esgpu-queue:notfound\n\x1esgpu-queue:exit=127\n"), []byte{1})
	f.Add([]byte("plain\x1e\x1esgpu-queue:exit=9"), []byte{2, 2})
	f.Fuzz(func(t *testing.T, stream, cutBytes []byte) {
		cuts := make([]int, len(cutBytes))
		for i, c := range cutBytes {
			cuts[i] = int(c)
		}
		m, out := feed(stream, cuts)
		var head, tail string
		switch m.kind {
		case markNone:
		case markPgid:
			head = markerPrefix + "pgid=" + strconv.Itoa(m.pgid) + "\n"
		default:
			head = markerPrefix + m.kind + "\n"
		}
		if m.ended {
			tail = trailerPrefix + strconv.Itoa(m.exit) + "\n"
		}
		if got := head + out + tail; got != string(stream) {
			t.Errorf("head %q + out %q + tail %q != stream %q", head, out, tail, stream)
		}
		if m2, out2 := feed(stream, nil); out2 != out || m2.kind != m.kind || m2.pgid != m.pgid || m2.ended != m.ended || m2.exit != m.exit {
			t.Errorf("cutting the stream changed the result: %q vs %q", out, out2)
		}
	})
}
