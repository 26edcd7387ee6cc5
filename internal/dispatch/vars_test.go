package dispatch

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
)

// Every variable an item's command gets from sgpu-queue (not from the base
// environment) is one of hook.Names.Uses, the list the clash check reads: a
// variable added to an item's environment without being added there would escape
// the check (issue 27: PET_MASTER_PORT did). Each kind of item is built as dispatch
// builds it: a list item narrowed to its failed tests, an opaque item, a cmd item,
// all with a JUnit prefix, the port and a second visible-devices variable.
func TestItemVariablesAreChecked(t *testing.T) {
	h := newHarness(t, "0", "1")
	h.cfg.JUnitPrefix = filepath.Join(h.dir, "junit") + "/"
	h.cfg.JUnitSuffix = ".xml"
	h.cfg.AlsoPin = []string{"CUDA_VISIBLE_DEVICES"}
	h.cfg.Ports = map[string]int{"0": 29600, "1": 29601}
	narrowed := h.item("t", -1)
	narrowed.Narrowed, narrowed.OnlyTests = true, filepath.Join(h.dir, "only.txt")
	items := append([]expand.Item{narrowed, h.opaque(1)}, h.adapterItems(config.Cmd, "c1 true\n")...)

	var checked []string
	for _, u := range h.cfg.Hooks.Uses("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") {
		checked = append(checked, u.Name)
	}
	base := map[string]string{}
	for _, kv := range h.cfg.Env {
		k, v, _ := strings.Cut(kv, "=")
		base[k] = v
	}
	d := &dispatcher{cfg: h.cfg}
	for _, it := range items {
		c, _, err := d.command(it, "0", io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", name(it), err)
		}
		for _, kv := range c.Env {
			k, v, _ := strings.Cut(kv, "=")
			if old, ok := base[k]; ok && old == v {
				continue
			}
			if !slices.Contains(checked, k) {
				t.Errorf("%s: %s=%s is set by sgpu-queue but not among hook.Names.Uses, which the clash check reads", name(it), k, v)
			}
		}
	}
	if _, ok := hook.Env(mustCommandEnv(t, d, narrowed)).Get(hook.MasterPort); !ok {
		t.Error("the list item got no port: the test no longer covers it")
	}
}

func mustCommandEnv(t *testing.T, d *dispatcher, it expand.Item) []string {
	c, _, err := d.command(it, "0", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return c.Env
}
