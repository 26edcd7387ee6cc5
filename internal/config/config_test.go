package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/err/*.out, testdata/*.golden) from what the code says")

// TestErrorMessages pins every config error as the user reads it: each
// testdata/err/<case>.conf is loaded and resolved as phase 0 does (commands relative
// to testdata/err), and its error lines must be <case>.out, one per line (the CLI
// prints each behind "sgpu-queue: "). A new case is a new pair of files; -update
// writes the .out for review.
func TestErrorMessages(t *testing.T) {
	confs, err := filepath.Glob(filepath.Join("testdata", "err", "*.conf"))
	if err != nil || len(confs) == 0 {
		t.Fatalf("no cases in testdata/err: %v", err)
	}
	for _, conf := range confs {
		name := strings.TrimSuffix(filepath.Base(conf), ".conf")
		t.Run(name, func(t *testing.T) {
			suites, err := Load([]string{conf})
			err = errors.Join(err, Resolve(suites, filepath.Join("testdata", "err"), true))
			if err == nil {
				t.Fatalf("%s is accepted; an error case must fail", conf)
			}
			golden.Check(t, strings.TrimSuffix(conf, ".conf")+".out", []byte(err.Error()+"\n"), *update)
		})
	}
}

// The longest label and logfile the checks accept do fit a file name: every file
// they name is created.
func TestLongestNamesFit(t *testing.T) {
	label := strings.Repeat("l", logdir.MaxLabel)
	logfile := strings.Repeat("f", logdir.MaxLogFile-4) + ".log"
	suites, err := Parse(strings.NewReader(label+" "+logfile+" list ci/x.sh\n"), "c.conf")
	if err != nil || len(suites) != 1 {
		t.Fatalf("longest names refused: %v", err)
	}
	l := logdir.Layout{Root: t.TempDir()}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	tag := strings.Repeat("t", 500) // a tag that takes the longest safetag
	for _, p := range []string{
		l.ItemAttemptRC(label, tag, 1<<31-1), l.ItemLog(label, tag), l.SetupLog(label), l.SuiteRC(logfile),
		filepath.Join(l.SuitesDir(), "."+logfile+".rc.tmp4294967295"),
	} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Errorf("%d-byte name: %v", len(filepath.Base(p)), err)
		}
	}
	if err := os.Mkdir(l.ItemCwd(label, tag), 0o755); err != nil {
		t.Error(err)
	}
	if _, err := Parse(strings.NewReader(label+"x a.log list ci/x.sh\n"), "c.conf"); err == nil {
		t.Error("a label one byte longer is accepted")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		labels  []string
		wantErr []string // substrings, one per expected error line
	}{
		{name: "te config", in: "examples  examples.log  opaque  .github/scripts/run_examples.sh\ntorch     torch.log     list    ci/pytorch.sh\n", labels: []string{"examples", "torch"}},
		{name: "comments and blanks", in: "# header\n\n   # indented comment\ntorch torch.log list ci/pytorch.sh --fast x\n", labels: []string{"torch"}},
		{name: "tabs crlf bom", in: "\xef\xbb\xbftorch\ttorch.log\tlist\tci/pytorch.sh\r\njax jax.log list ci/jax.sh\r\n", labels: []string{"torch", "jax"}},
		{name: "several errors", in: "a a.log list\nb b.log what x\nc c.log list ci/c.sh\n", labels: []string{"c"}, wantErr: []string{"x:1:", "x:2:"}},
		{name: "long line", in: strings.Repeat("x", MaxLineBytes+10) + "\n", wantErr: []string{"x:1: line longer than"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suites, err := Parse(strings.NewReader(tt.in), "x")
			var labels []string
			for _, s := range suites {
				labels = append(labels, s.Label)
			}
			if strings.Join(labels, ",") != strings.Join(tt.labels, ",") {
				t.Errorf("labels = %v, want %v", labels, tt.labels)
			}
			checkErrLines(t, err, tt.wantErr)
		})
	}
}

func checkErrLines(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d error line(s) %q, want %d", len(lines), lines, len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("error line %d = %q, want it to contain %q", i, lines[i], w)
		}
	}
}

func TestParseFields(t *testing.T) {
	suites, err := Parse(strings.NewReader("\n\ntorch torch.log list ci/pytorch.sh -k fast\n"), "c.conf")
	if err != nil {
		t.Fatal(err)
	}
	s := suites[0]
	if s.Label != "torch" || s.LogFile != "torch.log" || s.Mode != List || s.Command != "ci/pytorch.sh" ||
		strings.Join(s.Args, " ") != "-k fast" || s.Where() != "c.conf:3" {
		t.Errorf("got %+v", s)
	}
}

func TestParseHugeFile(t *testing.T) {
	big := strings.NewReader(strings.Repeat("# padding line\n", MaxFileBytes/15+10))
	_, err := Parse(big, "big.conf")
	if err == nil || !strings.Contains(err.Error(), "big.conf: larger than 16 MiB") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.conf", "torch torch.log list ci/pytorch.sh\n")
	b := write("b.conf", "# b\njax jax.log list ci/jax.sh\ntorch t2.log list ci/x.sh\ncore torch.log opaque ci/core.sh\n")
	empty := write("empty.conf", "# nothing\n")
	fifo := filepath.Join(dir, "fifo.conf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		paths   []string
		labels  string
		wantErr []string
	}{
		{name: "duplicate label and logfile", paths: []string{a, b}, labels: "torch,jax",
			wantErr: []string{b + `:3: duplicate label "torch" (first at ` + a + `:1)`, b + `:4: logfile "torch.log" already used by suite "torch"`}},
		{name: "missing file", paths: []string{filepath.Join(dir, "nope.conf")}, wantErr: []string{"nope.conf: cannot open config: no such file or directory"}},
		{name: "no suites", paths: []string{empty}, wantErr: []string{"empty.conf: no suites"}},
		// Never waited on: a FIFO would hold the run in open(2) past any signal.
		{name: "a FIFO", paths: []string{fifo, a}, labels: "torch",
			wantErr: []string{fifo + ": cannot read config: it is a named pipe (FIFO), not a regular file: sgpu-queue reads only regular files " +
				"there; replace it with a file"}},
		{name: "a directory", paths: []string{dir}, wantErr: []string{dir + ": cannot read config: it is a directory, not a regular file"}},
		{name: "no files", paths: nil, wantErr: []string{"no config file given"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suites, err := Load(tt.paths)
			var labels []string
			for _, s := range suites {
				labels = append(labels, s.Label)
			}
			if strings.Join(labels, ",") != tt.labels {
				t.Errorf("labels = %v, want %s", labels, tt.labels)
			}
			checkErrLines(t, err, tt.wantErr)
		})
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "ci", "dir"), 0o755)
	os.WriteFile(filepath.Join(root, "ci", "ok.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(root, "ci", "noexec.sh"), []byte("#!/bin/sh\n"), 0o644)
	mk := func(cmd string) []Suite {
		return []Suite{{Label: "s", Command: cmd, File: "c.conf", Line: 7}}
	}
	tests := []struct {
		cmd, wantPath, wantErr string
	}{
		{cmd: "ci/ok.sh", wantPath: filepath.Join(root, "ci", "ok.sh")},
		{cmd: "sh", wantPath: "/"}, // found on PATH; checked by prefix below
		{cmd: "ci/missing.sh", wantErr: `c.conf:7: command "ci/missing.sh" of suite "s" not found`},
		{cmd: "ci/noexec.sh", wantErr: `c.conf:7: command "ci/noexec.sh" of suite "s" is not executable: chmod +x`},
		{cmd: "ci/dir", wantErr: "is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			s := mk(tt.cmd)
			err := Resolve(s, root, true)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s[0].Path, tt.wantPath) {
				t.Errorf("path = %s, want %s", s[0].Path, tt.wantPath)
			}
		})
	}
	// Without checking (commands run in another container) nothing is looked at.
	s := mk("ci/missing.sh")
	if err := Resolve(s, root, false); err != nil || s[0].Path != filepath.Join(root, "ci/missing.sh") {
		t.Errorf("unchecked resolve: %v %s", err, s[0].Path)
	}
}

func TestErrorIsPerLine(t *testing.T) {
	_, err := Parse(strings.NewReader("a a.log x y\n"), "f")
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 1 || ce.File != "f" {
		t.Fatalf("want a *Error for f:1, got %#v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("torch torch.log list ci/pytorch.sh\n# c\ncore core.log opaque ci/core.sh a b\n")
	f.Add("\xef\xbb\xbfa\tb\tlist\tc\r\n")
	f.Add("a a.log lst c\nb\n")
	f.Fuzz(func(t *testing.T, in string) {
		suites, err := Parse(strings.NewReader(in), "fuzz.conf")
		for _, s := range suites {
			if checkLabel(s.Label) != "" || checkLogFile(s.LogFile) != "" || (s.Mode != List && s.Mode != Opaque) || s.Command == "" {
				t.Fatalf("accepted a bad suite %+v", s)
			}
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "fuzz.conf") {
					t.Fatalf("error line without the file name: %q", line)
				}
			}
		}
	})
}

// A suite's env= settings go on top of the environment its commands start from (a
// later env= of the same name wins), and only its own.
func TestSuiteEnviron(t *testing.T) {
	tests := []struct {
		env  []string
		base hook.Env
		want string
	}{
		{nil, hook.Env{"A=1"}, "A=1"},
		{[]string{"B=2"}, hook.Env{"A=1"}, "A=1 B=2"},
		{[]string{"A=2"}, hook.Env{"A=1", "C=3"}, "C=3 A=2"},
		{[]string{"A=2", "A=3"}, hook.Env{"A=1"}, "A=3"},
		{[]string{"E="}, hook.Env{"E=x"}, "E="},
	}
	for _, tt := range tests {
		s := Suite{Label: "s", Mode: List, Options: Options{Env: tt.env}}
		got := strings.Join(s.Environ(tt.base), " ")
		if got != tt.want {
			t.Errorf("env %q over %q = %q, want %q", tt.env, tt.base, got, tt.want)
		}
		if strings.Join(tt.base, " ") != strings.Join(hook.Env(tt.base), " ") {
			t.Errorf("base changed")
		}
	}
}
