package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(script string) Command {
	return Command{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin", "X=42"}}
}

func TestLocalExitCodes(t *testing.T) {
	tests := []struct {
		script   string
		code     int
		signaled bool
	}{
		{"exit 0", 0, false},
		{"exit 3", 3, false},
		{"kill -SEGV $$", 139, true},
		{"kill -KILL $$", 137, true},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res, err := Local{}.Run(context.Background(), sh(tt.script))
			if err != nil || res.ExitCode != tt.code || res.Signaled != tt.signaled || res.Cancelled {
				t.Errorf("res %+v err %v", res, err)
			}
		})
	}
}

func TestLocalEnvDirOutput(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	c := sh(`echo "x=$X pwd=$(pwd)"; echo oops >&2`)
	c.Dir, c.Stdout, c.Stderr = dir, &out, &errb
	if _, err := (Local{}).Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if out.String() != "x=42 pwd="+real+"\n" || errb.String() != "oops\n" {
		t.Errorf("out %q err %q", out.String(), errb.String())
	}
}

func TestLocalNotFound(t *testing.T) {
	for _, p := range []string{"/nonexistent/tool", "no-such-tool-sgpu"} {
		_, err := Local{}.Run(context.Background(), Command{Path: p, Env: []string{"PATH=/bin"}})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err %v", p, err)
		}
	}
	dir := t.TempDir()
	noexec := filepath.Join(dir, "x.sh")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	if _, err := (Local{}).Run(context.Background(), Command{Path: noexec}); !errors.Is(err, ErrNotFound) {
		t.Errorf("not executable: %v", err)
	}
}

// Cancel reaches the whole process group: a child that ignores nothing dies with its
// parent, and one that traps TERM is killed after the grace period.
func TestLocalCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		res, _ := Local{Grace: 200 * time.Millisecond}.Run(ctx, sh(`trap '' TERM; sleep 60 & echo $! > `+pidfile+`; wait`))
		done <- res
	}()
	waitFile(t, pidfile)
	cancel()
	res := <-done
	if !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v, want cancelled and killed (137)", res)
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		t.Fatalf("pid %q", data)
	}
	for i := 0; i < 100; i++ {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("child %d survived the cancel", pid)
}

// alive reports whether pid runs; a zombie (dead, not yet reaped by an init that may
// not reap in a container) counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestLocalForceCutsGrace(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	done := make(chan Result)
	go func() {
		res, _ := Local{Grace: time.Hour, Force: force}.Run(ctx, sh(`trap '' TERM; touch `+ready+`; while :; do sleep 0.05; done`))
		done <- res
	}()
	waitFile(t, ready)
	cancel()
	close(force)
	if res := <-done; !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v", res)
	}
}

func TestLocalCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Local{}.Run(ctx, sh("exit 0"))
	if err != nil || !res.Cancelled {
		t.Errorf("res %+v err %v", res, err)
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if fi, err := os.Stat(p); err == nil && fi.Size() >= 0 {
			if data, _ := os.ReadFile(p); len(data) > 0 || strings.HasSuffix(p, "ready") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", p)
}

// A bare name is looked up on the PATH the command runs with, not on this process's.
func TestLocalLooksUpTheCommandsPATH(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sgpu-fake-tool"), []byte("#!/bin/sh\necho found\n"), 0o755)
	var out bytes.Buffer
	res, err := Local{}.Run(context.Background(), Command{Path: "sgpu-fake-tool", Env: []string{"PATH=" + dir + ":/bin"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "found\n" {
		t.Errorf("res %+v err %v out %q", res, err, out.String())
	}
	if _, err := (Local{}).Run(context.Background(), Command{Path: "sgpu-fake-tool", Env: []string{"PATH=/bin"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("found outside the command's PATH: %v", err)
	}
}
