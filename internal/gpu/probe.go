package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// tool is one vendor tool invocation and how to read its output.
type tool struct {
	path    string
	args    []string
	vendor  Vendor
	devices func(stdout string) []Device
	none    string // what an output without GPUs means, for the error
}

func (t tool) cmdline() string { return strings.TrimSpace(t.path + " " + strings.Join(t.args, " ")) }

// poolTools list the GPUs, in the order docs/cli.md#gpus gives.
func poolTools() []tool {
	return []tool{
		{path: "rocminfo", vendor: AMD, none: "lists no GPU agent",
			devices: func(s string) []Device { return RocminfoGPUs(ParseRocminfo(s)) }},
		{path: "amd-smi", args: []string{"list"}, vendor: AMD, none: "lists no GPU", devices: ParseAMDSMI},
		{path: "rocm-smi", vendor: AMD, none: "lists no GPU", devices: ParseROCmSMITable},
		{path: "nvidia-smi", args: []string{"-L"}, vendor: NVIDIA, none: "lists no GPU", devices: ParseNvidiaSMIList},
	}
}

// archTools show the GPUs' arch; nvidia-smi is asked with a header, as in the captured output the tests replay.
func archTools() []tool {
	return []tool{
		poolTools()[0],
		{path: "amd-smi", args: []string{"static", "--asic"}, vendor: AMD, none: "shows no GPU", devices: ParseAMDSMI},
		{path: "rocm-smi", args: []string{"--showproductname"}, vendor: AMD, none: "shows no GPU",
			devices: func(s string) []Device { return ROCmSMIDevices(ParseROCmSMIFields(s)) }},
		{path: "nvidia-smi", args: []string{"--query-gpu=name,compute_cap", "--format=csv"}, vendor: NVIDIA, none: "shows no GPU",
			devices: func(s string) []Device {
				return NvidiaQueryDevices(ParseNvidiaSMIQuery(s, []string{"name", "compute_cap"}))
			}},
	}
}

// toolRun is how one tool run went.
type toolRun struct {
	stdout, stderr string
	exit           int
	absent         bool   // not installed where the items run
	failure        string // it could not be run, or was stopped
}

// try runs t once per Detect call and parses its standard output.
func (d *detector) try(ctx context.Context, t tool) ([]Device, *toolRun) {
	key := t.cmdline()
	r, done := d.runs[key]
	if !done {
		r = d.run(ctx, t)
		d.runs[key] = r
	}
	devs := t.devices(r.stdout)
	if !done {
		if len(devs) > 0 {
			d.tried = append(d.tried, fmt.Sprintf("%s: %s", key, textfmt.Count(len(devs), "GPU")))
		} else {
			d.tried = append(d.tried, key+": "+r.why(t.none))
		}
	}
	return devs, r
}

// maxToolOutput caps what is kept of a tool's output; rocminfo prints well under 1 MiB.
const maxToolOutput = 8 << 20

func (d *detector) run(ctx context.Context, t tool) *toolRun {
	tctx, cancel := context.WithTimeout(ctx, d.o.ToolTimeout)
	defer cancel()
	var out, errOut cappedBuffer
	res, err := d.o.Exec.Run(tctx, executor.Command{
		Path: t.path, Args: t.args, Env: d.o.Env, Stdout: &out, Stderr: &errOut,
	})
	r := &toolRun{stdout: out.String(), stderr: errOut.String(), exit: res.ExitCode}
	switch {
	case errors.Is(err, executor.ErrNotFound):
		r.absent = true
	case err != nil:
		r.failure = oneLine(err.Error())
	case res.Cancelled && ctx.Err() == nil:
		r.failure = fmt.Sprintf("timed out after %s", d.o.ToolTimeout)
	case res.Cancelled:
		r.failure = "cancelled"
	case res.ExitCode == exitcode.NotFound:
		// A shell (the container executor's, or a wrapper script's) could not find it.
		r.absent = true
	}
	return r
}

// why says in one line why a run gave no GPU.
func (r *toolRun) why(none string) string {
	switch {
	case r.absent:
		return "not found"
	case r.failure != "":
		return r.failure
	}
	s := tellingLine(r.stderr)
	if s == "" {
		s = tellingLine(r.stdout)
	}
	if s == "" {
		s = none
	}
	if r.exit != 0 {
		s += fmt.Sprintf(" (exit %d)", r.exit)
	}
	return s
}

// tellWords mark the line saying what went wrong, strongest first: "Unable to open /dev/kfd" beats the lines before it.
var tellWords = [][]string{
	{"error", "unable", "fail", "cannot", "couldn't", "permission denied", "no devices"},
	{"fatal", "not found", "not loaded", "no amd gpu", "no drm", "no gpu", "mismatch", "no such file"},
}

// tellingLine is the first line with a word of the strongest tier present; "" when none.
func tellingLine(text string) string {
	ls := lines(text)
	for _, tier := range tellWords {
		for _, l := range ls {
			low := strings.ToLower(l)
			for _, w := range tier {
				if strings.Contains(low, w) {
					return oneLine(l)
				}
			}
		}
	}
	return ""
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// oneLine makes s one clean log line of at most 200 characters.
func oneLine(s string) string {
	s = ansi.ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = textfmt.OneLine(s)
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:197]) + "..."
	}
	return s
}

// cappedBuffer keeps the first maxToolOutput bytes, so a runaway tool cannot fill the memory.
type cappedBuffer struct{ b bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxToolOutput - c.b.Len(); room > 0 {
		if len(p) > room {
			c.b.Write(p[:room])
		} else {
			c.b.Write(p)
		}
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string { return c.b.String() }
