package engine

import (
	"io"
	"strings"
	"sync"
)

// tailBuffer keeps the last lines of a command's output for an error message.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// indented returns the last 20 lines, indented for an error message.
func (t *tailBuffer) indented() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "    | " + strings.Join(lines, "\n    | ")
}

func teeWriter(a, b io.Writer) io.Writer { return io.MultiWriter(a, b) }
