// Package proctest finds the processes a test left behind. Fixtures start them as
// "sleep MARK", MARK unique to the test, so no other test's process is mistaken.
package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Mark returns a sleep duration of 40 to 60 s unique to this moment and process.
func Mark() string {
	now := time.Now().UnixNano()
	return fmt.Sprintf("%d.%06d", 40+now%20, (now/1000+int64(os.Getpid()))%1000000)
}

// Sleeping lists the live processes whose command line is exactly "sleep mark".
func Sleeping(mark string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if string(cmd) == "sleep\x00"+mark+"\x00" && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// NoSurvivors fails when a process of mark still runs a moment after the run ended
// (the exit after KILL takes a moment), and kills it.
func NoSurvivors(t testing.TB, mark string) {
	t.Helper()
	var left []int
	for i := 0; i < 100; i++ {
		if left = Sleeping(mark); len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	Kill(mark)
	t.Errorf("processes of the test survived: pids %v (sleep %s)", left, mark)
}

// Kill kills every process of mark, for a test's cleanup.
func Kill(mark string) {
	for _, pid := range Sleeping(mark) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
