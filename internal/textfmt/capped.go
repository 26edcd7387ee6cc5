package textfmt

import "bytes"

// Capped is an io.Writer that keeps a command's output (a listing's stdout) up to
// the first write that would pass Max bytes, and from then on only notes that there
// was more. It never fails a write: an error would make the command die on its own
// output instead of ending.
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
