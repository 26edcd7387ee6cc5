package executor

import (
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// output joins a command's stdout and stderr through pipes Run owns: os/exec's Wait waits for every holder of a
// pipe, and a left-behind process may hold it for ever. Copy goroutines write err under mu; Run owns the rest.
type output struct {
	stdout, stderr *os.File // the child's ends (nil: /dev/null)
	child          []*os.File
	pipes          []*os.File // this process's read ends
	inodes         []uint64
	copied         sync.WaitGroup

	mu  sync.Mutex
	err error // the first write error of any copy
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
	o.copied.Add(1)
	go func() {
		defer o.copied.Done()
		_, _ = io.Copy(&sink{o: o, w: w}, r)
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

// writeErr is the first error a writer returned.
func (o *output) writeErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// sink keeps reading after a write error (a full disk), as a pipe left unread would block the command.
type sink struct {
	o   *output
	w   io.Writer
	err error // this pipe's first write error, also given to o.err
}

func (s *sink) Write(p []byte) (int, error) {
	if s.err == nil {
		if _, err := s.w.Write(p); err != nil {
			s.err = err
			s.o.mu.Lock()
			if s.o.err == nil {
				s.o.err = err
			}
			s.o.mu.Unlock()
		}
	}
	return len(p), nil
}
