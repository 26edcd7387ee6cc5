package gpu

import (
	"context"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/optname"
)

// Each face reads its own option names: an action user never reads a flag, a CLI
// user never an input (the message is pinned for each).
func TestMessagesNameTheFacesOptions(t *testing.T) {
	empty := t.TempDir() // a PATH with no vendor tool
	cases := []struct {
		name          string
		o             Options
		cli, action   string
		warnCLI, warn string
	}{
		{"bad arch", Options{Arch: "gfx 942"},
			`--arch "gfx 942": an arch is a name such as gfx942 or sm_90 (letters, digits, _ . + -, up to 64): fix --arch`,
			`input arch "gfx 942": an arch is a name such as gfx942 or sm_90 (letters, digits, _ . + -, up to 64): fix input arch`, "", ""},
		{"zero count", Options{Explicit: "0"},
			"--gpus 0: a count must be at least 1 (to use GPU 0 alone, write --gpus 0, with a trailing comma)",
			"input gpus 0: a count must be at least 1 (to use GPU 0 alone, write gpus: 0, with a trailing comma)", "", ""},
		{"not an id", Options{Explicit: "0,x"},
			`--gpus "0,x": "x" is not a GPU id (an index such as 0, or a GPU-/MIG- UUID): list GPU ids like 0,1,2,3`,
			`input gpus "0,x": "x" is not a GPU id (an index such as 0, or a GPU-/MIG- UUID): list GPU ids like 0,1,2,3`, "", ""},
		{"count over the visible", Options{Explicit: "4", Env: []string{"HIP_VISIBLE_DEVICES=0,1"}},
			"--gpus 4: HIP_VISIBLE_DEVICES=0,1 lists only 2 GPUs: give --gpus 2 or fewer, or widen HIP_VISIBLE_DEVICES",
			"input gpus 4: HIP_VISIBLE_DEVICES=0,1 lists only 2 GPUs: give gpus: 2 or fewer, or widen HIP_VISIBLE_DEVICES", "", ""},
		{"no GPU", Options{Env: []string{"PATH=" + empty}},
			"if the GPUs are there, give --gpus (e.g. --gpus 0,1,2,3) or set HIP_VISIBLE_DEVICES",
			"if the GPUs are there, give input gpus (e.g. gpus: 0,1,2,3) or set HIP_VISIBLE_DEVICES", "", ""},
		{"arch override", Options{Explicit: "0,1", Arch: "gfx950", Env: []string{"PATH=" + empty}}, "", "",
			"2 GPUs [0 1] from --gpus, arch gfx950 from --arch", "2 GPUs [0 1] from input gpus, arch gfx950 from input arch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []struct {
				face      optname.Face
				err, info string
			}{{optname.CLI, c.cli, c.warnCLI}, {optname.Action, c.action, c.warn}} {
				o := c.o
				o.Face, o.Exec = f.face, executor.Local{}
				p, err := Detect(context.Background(), o)
				if f.err != "" {
					if err == nil || !strings.Contains(err.Error(), f.err) {
						t.Errorf("face %d: error %v, want %q", f.face, err, f.err)
					}
					if f.face == optname.Action && strings.Contains(err.Error(), "--") {
						t.Errorf("the action's message names a flag: %v", err)
					}
					continue
				}
				if err != nil || !strings.Contains(p.Describe(), f.info) {
					t.Errorf("face %d: pool %q, %v; want %q", f.face, p.Describe(), err, f.info)
				}
			}
		})
	}
}
