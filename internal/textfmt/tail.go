package textfmt

import (
	"strings"
	"sync"
)

// Tail is an io.Writer that keeps the last lines of a command's output (each cut at
// 512 bytes), for the error message of a listing or setup that failed. It is safe for
// the stdout and stderr copiers to write at once.
type Tail struct {
	Max   int // lines kept; 0 = 20
	mu    sync.Mutex
	lines []string
	part  string
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	max := t.Max
	if max <= 0 {
		max = 20
	}
	parts := strings.Split(t.part+string(p), "\n")
	t.part = parts[len(parts)-1]
	if len(t.part) > 4096 {
		t.part = t.part[len(t.part)-4096:]
	}
	for _, l := range parts[:len(parts)-1] {
		if len(l) > 512 {
			l = l[:512] + "…"
		}
		t.lines = append(t.lines, l)
	}
	if len(t.lines) > max {
		t.lines = append([]string(nil), t.lines[len(t.lines)-max:]...)
	}
	return len(p), nil
}

// String is the kept lines, the unfinished last one included.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if t.part != "" {
		lines = append(append([]string(nil), lines...), t.part)
	}
	return strings.Join(lines, "\n")
}

// Indent prefixes each line of s with "    | ", to set output apart in a message.
func Indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    | " + strings.Join(lines, "\n    | ")
}
