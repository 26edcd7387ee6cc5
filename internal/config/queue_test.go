package config

import (
	"fmt"
	"testing"

	"github.com/rocm/sgpu-queue/internal/hook"
)

// A suite's queue gives its switch and the width of an item that declares none;
// gpus= in the config line still wins.
func TestQueues(t *testing.T) {
	suites := []Suite{
		{Label: "torch", File: "s.conf"},
		{Label: "pair", File: "s.conf", Options: Options{GPUs: 2}},
		{Label: "torch-mgpu", File: "m.conf"},
		{Label: "one", File: "m.conf", Options: Options{GPUs: 1}},
		{Label: "all", File: "s.conf", Options: Options{AllGPUs: true}},
	}
	for _, c := range []struct {
		queue string
		mgpu  []string
		want  string // label:queue:kind:width per suite
	}{
		{"sgpu", nil, "torch:sgpu:S:1 pair:sgpu:M:2 torch-mgpu:sgpu:S:1 one:sgpu:S:1 all:sgpu:M:all"},
		{"", []string{"m.conf"}, "torch:sgpu:S:1 pair:sgpu:M:2 torch-mgpu:mgpu:M:all one:mgpu:M:1 all:sgpu:M:all"},
		{"mgpu", nil, "torch:mgpu:M:all pair:mgpu:M:2 torch-mgpu:mgpu:M:all one:mgpu:M:1 all:mgpu:M:all"},
	} {
		MarkQueues(suites, c.queue, c.mgpu)
		got := ""
		for _, s := range suites {
			kind := "S"
			if s.GPUKind() == hook.MultiGPU {
				kind = "M"
			}
			n, all := s.Width()
			w := fmt.Sprint(max(n, 1))
			if all {
				w = "all"
			}
			got += fmt.Sprintf(" %s:%s:%s:%s", s.Label, s.Queue(), kind, w)
		}
		if got[1:] != c.want {
			t.Errorf("queue %q, mgpu %q:\n got %s\nwant %s", c.queue, c.mgpu, got[1:], c.want)
		}
	}
}
