package textfmt

import "bytes"

// Capped keeps a command's output up to Max bytes, then only notes there was more. It never fails a write,
// which would make the command die on its own output.
type Capped struct {
	Max  int
	buf  bytes.Buffer
	over bool
}

func (c *Capped) Write(p []byte) (int, error) {
	if c.over || c.buf.Len()+len(p) > c.Max {
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Bytes is what was kept.
func (c *Capped) Bytes() []byte { return c.buf.Bytes() }

// Over reports whether output past Max was dropped.
func (c *Capped) Over() bool { return c.over }
