package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/dispatch"
)

// panicWriter is a stdout that panics: the cheapest way into a command's code path
// with a bug in it.
type panicWriter struct{ v any }

func (p panicWriter) Write([]byte) (int, error) { panic(p.v) }

func TestPanicIsOneLine(t *testing.T) {
	tests := []struct {
		name  string
		v     any
		debug string
		want  string
	}{
		{"string", "boom", "", "sgpu-queue: internal error: boom; please report it with the log\n"},
		{"error", errors.New("index out of range [3] with length 3"), "",
			"sgpu-queue: internal error: index out of range [3] with length 3; please report it with the log\n"},
		{"multi-line value stays one line", "first\nsecond\tthird", "", "sgpu-queue: internal error: first second third; please report it with the log\n"},
		{"nil map write", runtimeError(), "", "sgpu-queue: internal error: assignment to entry in nil map; please report it with the log\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			code := Main(Env{Args: []string{"version"}, Stdout: panicWriter{tt.v}, Stderr: &errb,
				Getenv: func(string) string { return tt.debug }})
			if code != 70 {
				t.Errorf("exit %d, want 70", code)
			}
			if errb.String() != tt.want {
				t.Errorf("stderr %q\nwant   %q", errb.String(), tt.want)
			}
		})
	}
}

// runtimeError returns what a real runtime panic carries.
func runtimeError() (v any) {
	defer func() { v = recover() }()
	var m map[string]int
	//lint:ignore SA5000 a real runtime panic is what this helper is for
	m["x"] = 1
	return nil
}

func TestPanicStackWithDebug(t *testing.T) {
	var errb bytes.Buffer
	env := map[string]string{"SGPU_DEBUG": "1"}
	code := Main(Env{Args: []string{"version"}, Stdout: panicWriter{"boom"}, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }})
	lines := strings.Split(errb.String(), "\n")
	if code != 70 || lines[0] != "sgpu-queue: internal error: boom; please report it with the log" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(errb.String(), "goroutine ") || !strings.Contains(errb.String(), "panicWriter.Write") {
		t.Errorf("no stack with SGPU_DEBUG set:\n%s", errb.String())
	}
}

func TestNoPanicNoChange(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(Env{Args: []string{"version"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Version: "v9"})
	if code != 0 || out.String() != "sgpu-queue v9\n" || errb.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	code = Main(Env{Args: []string{"frobnicate"}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 2 || !strings.HasPrefix(errb.String(), `sgpu-queue: unknown command "frobnicate"`) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// A panic in a dispatch worker is raised again in Main's goroutine; with SGPU_DEBUG
// the stack shown is the worker's.
func TestWorkerPanicShowsItsStack(t *testing.T) {
	var errb bytes.Buffer
	wp := &dispatch.WorkerPanic{Value: "boom in a worker", Stack: []byte("the worker's stack\n")}
	code := Main(Env{Args: []string{"version"}, Stdout: panicWriter{wp}, Stderr: &errb,
		Getenv: func(k string) string { return map[string]string{"SGPU_DEBUG": "1"}[k] }})
	want := "sgpu-queue: internal error: boom in a worker; please report it with the log\nthe worker's stack\n"
	if code != 70 || errb.String() != want {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// A console that fails (a closed pipe) is said once on stderr; every write, that one
// and later ones, reports success so that no caller stops the run over it, and
// nothing more is tried.
func TestConsoleSurvivesAFailedWrite(t *testing.T) {
	w := &failAfter{n: 1}
	var stderr strings.Builder
	c := &console{w: w, stderr: &stderr}
	for i, s := range []string{"phase 0\n", "phase 1\n", "phase 2\n", "phase 3\n"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("write %d: %d %v", i, n, err)
		}
	}
	if w.out.String() != "phase 0\n" || w.tries != 2 {
		t.Errorf("console got %q in %d tries, want the first line, then one failed try", w.out.String(), w.tries)
	}
	if want := "sgpu-queue: console output lost (write /dev/stdout: broken pipe); the run goes on, its files in the log dir are complete\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// failAfter accepts n writes, then fails every one as a closed pipe does.
type failAfter struct {
	n, tries int
	out      strings.Builder
}

func (f *failAfter) Write(p []byte) (int, error) {
	f.tries++
	if f.tries > f.n {
		return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
	}
	return f.out.Write(p)
}
