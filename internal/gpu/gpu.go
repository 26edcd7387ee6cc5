// Package gpu finds the GPU pool and arch (SPEC §8). Placeholder until the detection
// branch lands: explicit list/count, visible-devices variables, rocminfo.
package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
)

type Vendor string

type Pool struct {
	IDs        []string
	Source     string
	Vendor     Vendor
	Arch       string
	ArchSource string
	PinVar     string
	Names      []string
}

type Options struct {
	Explicit string
	Arch     string
	PinVar   string
	Env      []string
	Exec     executor.Executor
}

var ErrNoGPU = errors.New("no GPU found")

var gfx = regexp.MustCompile(`(?m)^\s*Name:\s+(gfx[0-9a-f]+)\s*$`)

func Detect(ctx context.Context, o Options) (Pool, error) {
	p := Pool{PinVar: "HIP_VISIBLE_DEVICES", Vendor: "amd"}
	var buf bytes.Buffer
	_, rerr := o.Exec.Run(ctx, executor.Command{Path: "rocminfo", Env: o.Env, Stdout: &buf})
	agents := gfx.FindAllStringSubmatch(buf.String(), -1)
	if rerr == nil && len(agents) > 0 {
		p.Arch, p.ArchSource = agents[0][1], "rocminfo"
	}
	if o.Arch != "" {
		p.Arch, p.ArchSource = o.Arch, "--arch"
	}
	if o.PinVar != "" {
		p.PinVar = o.PinVar
	}
	env := hook.Env(o.Env)
	switch {
	case o.Explicit != "":
		p.Source = "--gpus"
		if n, err := strconv.Atoi(o.Explicit); err == nil {
			if n <= 0 {
				return p, fmt.Errorf("--gpus %s: want a positive count or a list of ids", o.Explicit)
			}
			for i := 0; i < n; i++ {
				p.IDs = append(p.IDs, strconv.Itoa(i))
			}
		} else {
			p.IDs = strings.Split(o.Explicit, ",")
		}
	default:
		if v, ok := env.Get("HIP_VISIBLE_DEVICES"); ok && v != "" {
			p.Source, p.IDs = "HIP_VISIBLE_DEVICES", strings.Split(v, ",")
		} else if len(agents) > 0 {
			p.Source = "rocminfo"
			for i := range agents {
				p.IDs = append(p.IDs, strconv.Itoa(i))
			}
		} else {
			return p, fmt.Errorf("%w: rocminfo lists no GPU agent; pass --gpus or set HIP_VISIBLE_DEVICES", ErrNoGPU)
		}
	}
	return p, nil
}

func (p Pool) Describe() string {
	return fmt.Sprintf("%d GPUs [%s] from %s, arch %s, pinned with %s", len(p.IDs), strings.Join(p.IDs, " "), p.Source, p.Arch, p.PinVar)
}
