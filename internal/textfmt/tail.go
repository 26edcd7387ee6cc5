package textfmt

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Tail keeps the last lines of a command's output (each cut at 512 bytes) for a failure's message;
// stdout and stderr copiers may write at once.
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

// FileTail is the last lines of a regular log file, without terminal escapes and with CRLF as LF; "" when unreadable.
func FileTail(path string, maxBytes int64, maxLines int) string {
	f, err := safefs.Open(path) // never waits on a FIFO an item left there
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(info.Size()-maxBytes, 0)
	buf, err := io.ReadAll(io.NewSectionReader(f, off, maxBytes))
	if err != nil {
		return ""
	}
	if off > 0 { // drop the partial first line
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	text := strings.TrimRight(StripANSI(strings.ReplaceAll(string(buf), "\r\n", "\n")), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// ansiCSI matches terminal colour and cursor sequences, noise outside a terminal.
var ansiCSI = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// StripANSI removes terminal colour and cursor sequences.
func StripANSI(s string) string { return ansiCSI.ReplaceAllString(s, "") }
