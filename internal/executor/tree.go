package executor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MarkPrefix starts the variable that marks one command's processes, inherited even by one that leaves the process
// group (setsid); Run finds them in /proc/<pid>/environ. One that also clears its environment escapes
// (docs/bad-day.md).
const MarkPrefix = "SGPU_QUEUE_MARK_"

// NewMark returns a fresh "NAME=1" mark for one command; the Docker executor uses it too.
func NewMark() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a time-based id still tells runs apart.
		return fmt.Sprintf("%s%x_%d=1", MarkPrefix, time.Now().UnixNano(), os.Getpid())
	}
	return MarkPrefix + hex.EncodeToString(b[:]) + "=1"
}

// withMark returns env (nil: this process's environment) with the mark added.
func withMark(env []string, mark string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(env[:len(env):len(env)], mark)
}

// Tracking tells whether Run can find processes that leave the group: it needs /proc.
func Tracking() error {
	if _, err := os.ReadFile("/proc/self/stat"); err != nil {
		return fmt.Errorf("cannot read /proc (%w): processes that leave a command's process group (setsid, daemons) are not found or stopped "+
			"when it ends", err)
	}
	return nil
}

// tree is everything one command started: its process group and the processes carrying its mark.
type tree struct {
	pgid  int
	mark  []byte
	since uint64 // the leader's start (clock ticks after boot): nothing of it is older
}

func newTree(leader int, mark string) *tree {
	t := &tree{pgid: leader, mark: []byte(mark)}
	if st, err := readStat(leader); err == nil {
		t.since = st.start
	}
	return t
}

// member is one live process of a tree.
type member struct {
	pid     int
	escaped bool // outside the group: found by its mark
}

// members lists the tree's live processes; the error says /proc cannot be read.
func (t *tree) members() ([]member, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var buf [1024]byte // a stat line is a few hundred bytes
	var out []member
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		st, err := readStatInto(pid, buf[:])
		if err != nil || st.state == 'Z' || st.state == 'X' || st.start < t.since {
			continue
		}
		if st.pgid == t.pgid {
			out = append(out, member{pid: pid})
		} else if t.marked(pid) {
			out = append(out, member{pid: pid, escaped: true})
		}
	}
	return out, nil
}

func (t *tree) marked(pid int) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(env, t.mark)
}

// signal sends sig to the group and to every marked process outside it.
func (t *tree) signal(sig syscall.Signal) {
	_ = syscall.Kill(-t.pgid, sig)
	ms, _ := t.members()
	for _, m := range ms {
		if m.escaped {
			t.signalMarked(m.pid, sig)
		}
	}
}

// signalMarked signals pid if it still carries the mark, through a handle taken first, so a reused pid is never hit.
func (t *tree) signalMarked(pid int, sig syscall.Signal) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	defer p.Release()
	if t.marked(pid) {
		_ = p.Signal(sig)
	}
}

// gone tells whether nothing of the tree runs any more.
func (t *tree) gone() bool {
	ms, err := t.members()
	if err != nil {
		return errors.Is(syscall.Kill(-t.pgid, 0), syscall.ESRCH)
	}
	return len(ms) == 0
}

// leftover is a process found running after its command's leader ended.
type leftover struct {
	pid     int
	cmd     string
	escaped bool // it had left the process group
	holds   bool // it held the command's output open
	stuck   bool // still there after KILL
}

// sweepWait bounds how long sweep keeps killing a tree that keeps forking or does not die.
const sweepWait = 2 * time.Second

// sweep KILLs what is left of the tree and returns it; pipes are the output pipes' inodes, to tell who held them.
func (t *tree) sweep(pipes []uint64) []leftover {
	var left []leftover
	seen := map[int]int{} // pid → index in left
	delay := 5 * time.Millisecond
	deadline := time.Now().Add(sweepWait)
	for {
		ms, err := t.members()
		if err != nil {
			_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
			return left
		}
		if len(ms) == 0 {
			return left
		}
		if time.Now().After(deadline) {
			for _, m := range ms {
				if i, ok := seen[m.pid]; ok {
					left[i].stuck = true
				}
			}
			return left
		}
		for _, m := range ms {
			if _, ok := seen[m.pid]; !ok {
				seen[m.pid] = len(left)
				left = append(left, leftover{pid: m.pid, cmd: cmdline(m.pid), escaped: m.escaped, holds: holds(m.pid, pipes)})
			}
		}
		_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
		for _, m := range ms {
			if m.escaped {
				t.signalMarked(m.pid, syscall.SIGKILL)
			}
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

type stat struct {
	state byte
	pgid  int
	start uint64
}

// readStat reads the fields of /proc/<pid>/stat that Run needs.
func readStat(pid int) (stat, error) {
	var buf [1024]byte
	return readStatInto(pid, buf[:])
}

// readStatInto reads with plain system calls and the caller's buffer: it runs for every process at every command's end.
func readStatInto(pid int, buf []byte) (stat, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return stat{}, err
	}
	n, err := syscall.Read(fd, buf)
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return stat{}, errors.New("bad stat")
	}
	data := buf[:n]
	// The command name may hold anything: count fields from the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, errors.New("bad stat")
	}
	// Then state (3), ppid, pgrp (5), … starttime (22), parsed in place.
	var st stat
	field := 2
	for k := i + 1; k < len(data) && field <= 22; {
		for k < len(data) && data[k] == ' ' {
			k++
		}
		field++
		start := k
		for k < len(data) && data[k] != ' ' && data[k] != '\n' {
			k++
		}
		w := data[start:k]
		switch field {
		case 3:
			if len(w) != 1 {
				return stat{}, errors.New("bad stat")
			}
			st.state = w[0]
		case 5:
			v, ok := digits(w)
			if !ok {
				return stat{}, errors.New("bad stat")
			}
			st.pgid = int(v)
		case 22:
			v, ok := digits(w)
			if !ok {
				return stat{}, errors.New("bad stat")
			}
			st.start = v
			return st, nil
		}
	}
	return stat{}, errors.New("bad stat")
}

// digits parses a non-empty decimal.
func digits(w []byte) (uint64, bool) {
	var v uint64
	for _, c := range w {
		if c < '0' || c > '9' || v > (1<<63)/10 {
			return 0, false
		}
		v = 10*v + uint64(c-'0')
	}
	return v, len(w) > 0
}

// cmdline is a process's command line for a message, shortened.
func cmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	s := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	if s == "" {
		return "?"
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return s
}

// holds tells whether pid has one of the pipes open.
func holds(pid int, pipes []uint64) bool {
	if len(pipes) == 0 {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		for _, ino := range pipes {
			if link == "pipe:["+strconv.FormatUint(ino, 10)+"]" {
				return true
			}
		}
	}
	return false
}
