package executor

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// output joins a command's stdout and stderr through pipes Run owns: os/exec's Wait waits for every holder of a
// pipe, and a left-behind process may hold it for ever. Each sink is its copy goroutine's until wait returns.
type output struct {
	stdout, stderr *os.File // the child's ends (nil: /dev/null)
	child          []*os.File
	pipes          []*os.File // this process's read ends
	inodes         []uint64
	sinks          []*Sink
	copied         sync.WaitGroup
}

// connect makes the child's ends; one writer for both gets one pipe, keeping the streams' order.
func connect(stdout, stderr io.Writer) (*output, error) {
	o := &output{}
	var err error
	if o.stdout, err = o.attach(stdout); err != nil {
		o.close()
		return nil, err
	}
	if stderr != nil && sameWriter(stdout, stderr) {
		o.stderr = o.stdout
	} else if o.stderr, err = o.attach(stderr); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// sameWriter compares two writers without panicking on uncomparable ones.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func (o *output) attach(w io.Writer) (*os.File, error) {
	switch f := w.(type) {
	case nil:
		return nil, nil
	case *os.File:
		return f, nil // a file is never held open against anyone
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// Stat, not Fd: Fd would make the read end blocking, and Close could no longer stop a Read.
	if fi, err := r.Stat(); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			o.inodes = append(o.inodes, st.Ino)
		}
	}
	o.child = append(o.child, pw)
	o.pipes = append(o.pipes, r)
	s := &Sink{W: w}
	o.sinks = append(o.sinks, s)
	o.copied.Add(1)
	go func() {
		defer o.copied.Done()
		_, _ = io.Copy(s, r)
	}()
	return pw, nil
}

// started closes this process's copies of the child's ends: the child has its own.
func (o *output) started() {
	for _, f := range o.child {
		f.Close()
	}
	o.child = nil
}

// wait waits up to d for every pipe to end, then stops reading; true when all ended by themselves.
func (o *output) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		o.copied.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	ended := true
	select {
	case <-done:
	case <-t.C:
		ended = false
	}
	o.close()
	<-done
	return ended
}

func (o *output) close() {
	o.started()
	for _, r := range o.pipes {
		r.Close()
	}
}

// writeErr is the writers' errors, read once wait returned.
func (o *output) writeErr() error {
	errs := make([]error, len(o.sinks))
	for i, s := range o.sinks {
		errs[i] = s.Err
	}
	return errors.Join(errs...)
}

// Sink passes writes on to W (nil: discards) until one fails, then keeps taking them: a pipe or stream left unread
// would block the command. Its copy owns it until the copy ended.
type Sink struct {
	W   io.Writer
	Err error // the first write error
	N   int64 // bytes W took
}

func (s *Sink) Write(p []byte) (int, error) {
	if s.W != nil && s.Err == nil {
		n, err := s.W.Write(p)
		s.N += int64(n)
		s.Err = err
	}
	return len(p), nil
}
