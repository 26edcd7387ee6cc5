package textfmt

import (
	"bytes"
	"io"
)

// Prefixer writes to W with Prefix before every line, so echoed output reads as nested; Flush ends a last open line.
type Prefixer struct {
	W      io.Writer
	Prefix string
	mid    bool // inside a line: its prefix is written
}

func (p *Prefixer) Write(b []byte) (int, error) {
	var out bytes.Buffer
	for rest := b; len(rest) > 0; {
		if !p.mid {
			out.WriteString(p.Prefix)
			p.mid = true
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			out.Write(rest)
			break
		}
		out.Write(rest[:i+1])
		rest = rest[i+1:]
		p.mid = false
	}
	if _, err := p.W.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush ends an unfinished last line.
func (p *Prefixer) Flush() {
	if p.mid {
		_, _ = io.WriteString(p.W, "\n")
		p.mid = false
	}
}
