// Package gpu finds the GPU pool, the arch that keys the weight table, and the variable that pins an item to its GPUs
// (docs/cli.md#gpus). Ids are logical and pass through unchanged. Where inputs could be read two ways:
//
//   - HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES set to different lists is an error: which one the suites
//     follow is not ours to guess (docs/choices.md).
//   - An empty visible-devices variable is unset, as HIP reads it; a malformed one only warns under a --gpus list.
//   - amd-smi and rocm-smi ignore ROCR_VISIBLE_DEVICES, so their count is capped at the mask's length.
//   - A tool that lists GPUs counts even when it exits non-zero (rocm-smi often does).
package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Vendor is who made the GPUs: "amd", "nvidia", or "" when unknown.
type Vendor string

// Vendors.
const (
	AMD     Vendor = "amd"
	NVIDIA  Vendor = "nvidia"
	Unknown Vendor = ""
)

// Variables the pool is read from and pinned with.
const (
	HIPVisible  = "HIP_VISIBLE_DEVICES"
	CUDAVisible = "CUDA_VISIBLE_DEVICES"
	ROCRVisible = "ROCR_VISIBLE_DEVICES"
)

// DefaultToolTimeout bounds each vendor tool: a hung driver must fail detection, not hang it.
const DefaultToolTimeout = 60 * time.Second

// Pool is the set of GPUs a run uses, and how to pin an item to one of them.
type Pool struct {
	IDs []string // ids to pin one item to, in worker order (logical ids, passed through unchanged)
	// Source is where the pool came from: the gpus option as Face names it, a variable or a tool.
	Source string
	Detail string // more about Source, e.g. "2 of HIP_VISIBLE_DEVICES=2,3,5" for a count; may be ""
	Vendor Vendor
	Arch   string // "gfx942", "gfx950", "sm_90", ... ; "" when it could not be found
	// ArchSource is where the arch came from; "" with no Arch.
	ArchSource string
	PinVar     string   // the variable that pins an item to one GPU
	AlsoPin    []string // the other visible-devices variable, set to the same id, when the items' environment sets it too
	Names      []string // marketing names of the GPUs the tools listed (for the log); may be empty
	Warnings   []string // one line each, for the log: inputs read in a way the user may not expect
	Tried      []string // one line per vendor tool run, with what it said (for a verbose log)
}

// Options are the inputs of Detect.
type Options struct {
	Explicit    string            // the --gpus value: a list "0,1,2,3" or a count "4"; "" = not given
	Arch        string            // the --arch override; "" = detect
	PinVar      string            // configured pin variable; "" = by vendor
	Env         []string          // environment of the place items run (KEY=VALUE); also the tools' environment
	Exec        executor.Executor // runs the vendor tools where items run
	ToolTimeout time.Duration     // per tool run; 0 = DefaultToolTimeout
	// Face names the options in messages as the user gave them.
	Face optname.Face
}

// ErrNoGPU is wrapped by Detect's error when no pool was given and no tool found a GPU.
var ErrNoGPU = errors.New("no GPU found")

// ErrBadPool is wrapped by Detect's error for a malformed or contradictory selection.
var ErrBadPool = errors.New("bad GPU selection")

// Error is a one-line message that wraps ErrNoGPU or ErrBadPool.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func badf(format string, args ...any) error {
	return &Error{Kind: ErrBadPool, Msg: fmt.Sprintf(format, args...)}
}

// Describe is one line for the log, e.g.
// "4 GPUs [0 1 2 3] from rocminfo (AMD Instinct MI300X), arch gfx942 from rocminfo, pinned with HIP_VISIBLE_DEVICES".
func (p Pool) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s] from %s", textfmt.Count(len(p.IDs), "GPU"), strings.Join(p.IDs, " "), p.Source)
	if p.Detail != "" {
		b.WriteString(" " + p.Detail)
	}
	if names := uniq(p.Names); len(names) > 0 {
		fmt.Fprintf(&b, " (%s)", oneLine(strings.Join(names, ", ")))
	}
	if p.Arch != "" {
		fmt.Fprintf(&b, ", arch %s from %s", p.Arch, p.ArchSource)
	} else {
		b.WriteString(", arch unknown")
	}
	fmt.Fprintf(&b, ", pinned with %s", p.PinVar)
	if len(p.AlsoPin) > 0 {
		fmt.Fprintf(&b, " and %s (the environment sets it too)", strings.Join(p.AlsoPin, " and "))
	}
	return b.String()
}

// Pin is the environment that pins a command to GPU id(s): PinVar and each of AlsoPin.
func (p Pool) Pin(id string) []string {
	return hook.Assign(id, append([]string{p.PinVar}, p.AlsoPin...)...)
}

// Detect works out the pool, arch and pin variable; errors wrap ErrBadPool, ErrNoGPU or the context's.
func Detect(ctx context.Context, o Options) (Pool, error) {
	if o.Exec == nil {
		return Pool{}, errors.New("gpu.Detect: no executor to run the vendor tools with")
	}
	if o.Arch != "" && !archName.MatchString(o.Arch) {
		return Pool{}, badf("%s %q: an arch is a name such as gfx942 or sm_90 (letters, digits, _ . + -, up to 64): fix %s",
			o.Face.Name("arch"), o.Arch, o.Face.Name("arch"))
	}
	if o.PinVar != "" && !envName.MatchString(o.PinVar) {
		return Pool{}, badf("pin variable %q is not an environment variable name: use a name such as HIP_VISIBLE_DEVICES", o.PinVar)
	}
	d := &detector{o: o, env: hook.Env(o.Env), runs: map[string]*toolRun{}, count: -1}
	if d.o.ToolTimeout <= 0 {
		d.o.ToolTimeout = DefaultToolTimeout
	}
	p, err := d.pool(ctx)
	if err == nil {
		err = d.arch(ctx, &p)
	}
	if err != nil {
		return Pool{}, err
	}
	d.pin(&p)
	if err := d.check(&p); err != nil {
		return Pool{}, err
	}
	p.Tried = d.tried
	return p, nil
}

// detector is one Detect call's state; each tool runs at most once.
type detector struct {
	o        Options
	env      hook.Env
	runs     map[string]*toolRun
	tried    []string
	outerVar string // the visible-devices variable the pool (or its count) came from
	count    int    // GPUs an authoritative tool (rocminfo, nvidia-smi) counted; -1 = none
	countBy  string
}

func (d *detector) warnf(p *Pool, format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

// visible reads one visible-devices variable of the items' environment.
func (d *detector) visible(p *Pool, name string) ([]string, error) {
	v, ok := d.env.Get(name)
	if !ok {
		return nil, nil
	}
	if strings.TrimSpace(v) == "" {
		d.warnf(p, "%s is set but empty: treated as unset", name)
		return nil, nil
	}
	return ParseIDs(name, v)
}

// pool applies the precedence --gpus → HIP_VISIBLE_DEVICES → CUDA_VISIBLE_DEVICES → detection.
func (d *detector) pool(ctx context.Context) (Pool, error) {
	var p Pool
	var spec Spec
	if d.o.Explicit != "" {
		var err error
		if spec, err = ParseSpecAs(d.o.Face, d.o.Explicit); err != nil {
			return p, err
		}
	}
	var vars [2][]string
	for i, name := range []string{HIPVisible, CUDAVisible} {
		ids, err := d.visible(&p, name)
		switch {
		case err != nil && spec.IDs != nil:
			// --gpus gives the ids and each item's pin replaces the variable.
			d.warnf(&p, "%v (%s decides)", err, d.o.Face.Set("gpus", strings.Join(spec.IDs, ",")))
		case err != nil:
			return p, err
		}
		vars[i] = ids
	}
	hip, cuda := vars[0], vars[1]
	gpus := d.o.Face.Name("gpus")
	outer, outerVar := hip, HIPVisible
	if hip == nil {
		outer, outerVar = cuda, CUDAVisible
	}
	if hip != nil && cuda != nil && !slices.Equal(hip, cuda) {
		conflict := fmt.Sprintf("%s=%s and %s=%s name different GPUs (HIP programs follow the first, CUDA programs the second)",
			HIPVisible, strings.Join(hip, ","), CUDAVisible, strings.Join(cuda, ","))
		if spec.IDs == nil {
			return p, badf("%s: unset one of them, or give %s a list of ids", conflict, gpus)
		}
		d.warnf(&p, "%s: %s decides", conflict, d.o.Face.Set("gpus", strings.Join(spec.IDs, ",")))
	}
	switch {
	case spec.IDs != nil:
		p.IDs, p.Source = spec.IDs, gpus
		return p, nil
	case spec.Count > 0 && outer != nil:
		if spec.Count > len(outer) {
			return p, badf("%s %d: %s=%s lists only %s: give %s or fewer, or widen %s",
				gpus, spec.Count, outerVar, strings.Join(outer, ","), textfmt.Count(len(outer), "GPU"),
				d.o.Face.Set("gpus", strconv.Itoa(len(outer))), outerVar)
		}
		p.IDs, p.Source = outer[:spec.Count], gpus
		p.Detail = fmt.Sprintf("%d of %s=%s", spec.Count, outerVar, strings.Join(outer, ","))
		d.outerVar = outerVar
		return p, nil
	case spec.Count > 0:
		p.IDs, p.Source = countIDs(spec.Count), gpus
		return p, nil
	case outer != nil:
		p.IDs, p.Source = outer, outerVar
		d.outerVar = outerVar
		return p, nil
	}
	return p, d.detect(ctx, &p)
}

// detect finds the pool with the vendor tools, the first that lists a GPU winning.
func (d *detector) detect(ctx context.Context, p *Pool) error {
	var why []string
	for _, t := range poolTools() {
		devs, r := d.try(ctx, t)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("GPU detection: %w", err)
		}
		if len(devs) == 0 {
			why = append(why, t.path+": "+r.why(t.none))
			continue
		}
		p.Source, p.Vendor = t.path, t.vendor
		p.Names = names(devs)
		switch {
		case t.vendor == NVIDIA:
			for _, dv := range devs {
				p.IDs = append(p.IDs, dv.ID)
			}
		case t.path == "rocminfo":
			// rocminfo honours ROCR_VISIBLE_DEVICES: its GPU agents are the logical GPUs.
			p.IDs = countIDs(len(devs))
			d.count, d.countBy = len(devs), t.path
		default:
			n := len(devs)
			if mask, k, ok := d.rocrMask(); ok && k < n {
				d.warnf(p, "%s lists %s but does not apply %s=%s: using the %s the mask leaves visible (%s inside it)",
					t.path, textfmt.Count(n, "GPU"), ROCRVisible, mask, textfmt.Count(k, "GPU"), idRange(k))
				n = k
			}
			p.IDs = countIDs(n)
		}
		d.setArch(p, devs, t.path)
		return nil
	}
	msg := "no GPU found where the items run: " + strings.Join(why, "; ")
	if mask, _, ok := d.rocrMask(); ok {
		msg += fmt.Sprintf("; %s=%s is set and may hide them", ROCRVisible, mask)
	}
	msg += "; if the GPUs are there, give " + d.o.Face.Name("gpus") + " (e.g. " + d.o.Face.Set("gpus", "0,1,2,3") + ") or set " +
		HIPVisible + " (" + CUDAVisible + " on NVIDIA)"
	return &Error{Kind: ErrNoGPU, Msg: msg}
}

// arch fills the arch: --arch, else the tools; best effort, "" with no error when none answers.
func (d *detector) arch(ctx context.Context, p *Pool) error {
	if d.o.Arch != "" {
		if p.Arch != "" && p.Arch != d.o.Arch {
			d.warnf(p, "%s overrides the detected arch %s (from %s)", d.o.Face.Set("arch", d.o.Arch), p.Arch, p.ArchSource)
		}
		p.Arch, p.ArchSource = d.o.Arch, d.o.Face.Name("arch")
		if p.Vendor == Unknown {
			p.Vendor = vendorOfArch(d.o.Arch)
		}
	}
	for _, t := range archTools() {
		if p.Arch != "" && p.Vendor != Unknown {
			break
		}
		if p.Vendor != Unknown && t.vendor != p.Vendor {
			continue
		}
		devs, _ := d.try(ctx, t)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("GPU detection: %w", err)
		}
		if len(devs) == 0 {
			continue
		}
		if p.Vendor == Unknown {
			p.Vendor = t.vendor
		}
		if len(p.Names) == 0 {
			p.Names = names(devs)
		}
		if d.count < 0 && (t.path == "rocminfo" || t.vendor == NVIDIA) {
			d.count, d.countBy = len(devs), t.path
		}
		d.setArch(p, devs, t.path)
	}
	return nil
}

// setArch takes the first device's arch and warns when the devices differ.
func (d *detector) setArch(p *Pool, devs []Device, tool string) {
	if p.Arch != "" {
		return
	}
	var archs []string
	for _, dv := range devs {
		if dv.Arch != "" {
			archs = append(archs, dv.Arch)
		}
	}
	archs = uniq(archs)
	if len(archs) == 0 {
		return
	}
	p.Arch, p.ArchSource = archs[0], tool
	if len(archs) > 1 {
		d.warnf(p, "%s lists GPUs of several archs (%s): the weight table is keyed by %s; give %s or %s to choose",
			tool, strings.Join(archs, ", "), archs[0], d.o.Face.Name("arch"), d.o.Face.Name("gpus"))
	}
}

// pin chooses the pin variable: configured, else by vendor, else the pool's variable (docs/hooks.md, "Pinning").
func (d *detector) pin(p *Pool) {
	switch {
	case d.o.PinVar != "":
		p.PinVar = d.o.PinVar
	case p.Vendor == AMD:
		p.PinVar = HIPVisible
	case p.Vendor == NVIDIA:
		p.PinVar = CUDAVisible
	case d.outerVar != "":
		p.PinVar = d.outerVar
	case p.Source == CUDAVisible:
		p.PinVar = CUDAVisible
	default:
		p.PinVar = HIPVisible
	}
	if p.Vendor == NVIDIA && (p.Source == HIPVisible || d.outerVar == HIPVisible) {
		d.warnf(p, "the pool comes from %s but the GPUs are NVIDIA: CUDA programs ignore it; items are pinned with %s", HIPVisible, p.PinVar)
	}
	if d.o.PinVar != "" && d.o.PinVar != HIPVisible && d.o.PinVar != CUDAVisible {
		for _, v := range []string{HIPVisible, CUDAVisible} {
			if val, ok := d.env.Get(v); ok && strings.TrimSpace(val) != "" {
				d.warnf(p, "%s=%s stays set around each item's %s=<id> and applies on top of it: unset it if the ids do not compose", v, oneLine(val),
					p.PinVar)
			}
		}
		return
	}
	// Pin every set visible-devices variable, or a program reading the other one would see all the pool's GPUs.
	for _, v := range []string{HIPVisible, CUDAVisible} {
		if val, ok := d.env.Get(v); ok && v != p.PinVar && strings.TrimSpace(val) != "" {
			p.AlsoPin = append(p.AlsoPin, v)
		}
	}
}

// check rejects ids beyond the ROCR_VISIBLE_DEVICES mask or beyond what the tools counted where the items run.
func (d *detector) check(p *Pool) error {
	if p.PinVar != HIPVisible && p.PinVar != CUDAVisible {
		return nil // a custom variable has its own id space
	}
	mask, k, masked := d.rocrMask()
	for _, id := range p.IDs {
		n, err := strconv.Atoi(id)
		if err != nil {
			continue // a UUID
		}
		if masked && p.Vendor != NVIDIA && n >= k {
			return badf("%s: GPU %s is beyond the %s that %s=%s leaves visible (%s inside it): fix the ids or the mask",
				d.poolWhat(p), id, textfmt.Count(k, "GPU"), ROCRVisible, mask, idRange(k))
		}
		if d.count >= 0 && n >= d.count && d.countBy != p.Source {
			return badf("%s: GPU %s does not exist where the items run: %s lists %s (%s): fix the ids",
				d.poolWhat(p), id, d.countBy, textfmt.Count(d.count, "GPU"), idRange(d.count))
		}
	}
	return nil
}

// poolWhat names the input the pool came from, for an error.
func (d *detector) poolWhat(p *Pool) string {
	switch p.Source {
	case d.o.Face.Name("gpus"):
		if p.Detail != "" {
			return p.Source + " " + p.Detail
		}
		return p.Source + " " + strings.TrimSpace(d.o.Explicit)
	case HIPVisible, CUDAVisible:
		return p.Source + "=" + strings.Join(p.IDs, ",")
	}
	return p.Source
}

func (d *detector) rocrMask() (string, int, bool) {
	v, _ := d.env.Get(ROCRVisible)
	k, ok := maskLen(v)
	return oneLine(v), k, ok
}

// idRange is "id 0" or "ids 0-3": the logical ids of n GPUs.
func idRange(n int) string {
	if n == 1 {
		return "id 0"
	}
	return fmt.Sprintf("ids 0-%d", n-1)
}

func vendorOfArch(a string) Vendor {
	switch {
	case strings.HasPrefix(a, "gfx"):
		return AMD
	case strings.HasPrefix(a, "sm_"):
		return NVIDIA
	}
	return Unknown
}

func names(devs []Device) []string {
	var out []string
	for _, d := range devs {
		if n := oneLine(d.Name); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
