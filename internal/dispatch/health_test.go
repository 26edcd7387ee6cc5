package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// obs is one finished attempt fed to the health tracker.
type obs struct {
	slot, item int
	rc         int
	secs       float64
	dev        string // device-error line found in its log
}

func (o obs) attempt() Attempt {
	t0 := time.Unix(1000, 0)
	out := outcome.OK
	if o.rc != 0 {
		out = outcome.Failed
	}
	return Attempt{Attempt: record.Attempt{GPUs: []string{fmt.Sprint(o.slot)}, RC: o.rc, Outcome: out}, Item: o.item, Slots: []int{o.slot},
		Start: t0, End: t0.Add(time.Duration(o.secs * float64(time.Second))), DeviceErr: o.dev}
}

// fail and pass build observations; items 0–9 are known (100 s, so a failure under
// 25 s is fast), items 10 and up are unknown (fast under 30 s).
func fail(slot, item int, secs float64) obs { return obs{slot: slot, item: item, rc: 1, secs: secs} }
func pass(slot, item int) obs               { return obs{slot: slot, item: item, secs: 50} }
func devFail(slot, item int) obs {
	return obs{slot: slot, item: item, rc: 1, secs: 1, dev: "hipErrorNoDevice"}
}

func healthItem(i int) expand.Item {
	return expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: fmt.Sprint("t", i)}, Weight: 100, Known: i < 10}}
}

func (a action) String() string {
	switch a.kind {
	case actSuspect:
		return fmt.Sprintf("suspect %d", a.slot)
	case actQuarantine:
		return fmt.Sprintf("quarantine %d", a.slot)
	case actRelease:
		return fmt.Sprintf("release %d", a.slot)
	case actRequeue:
		return fmt.Sprintf("requeue %d from %d", a.item, a.slot)
	}
	return "?"
}

func TestHealth(t *testing.T) {
	q := DefaultQuarantine // threshold 3
	tests := []struct {
		name  string
		cfg   Quarantine
		slots int
		steps []obs
		want  []string // actions of each step, joined with ", "; "" for none
		state []slotState
	}{
		{name: "threshold 0 is off", cfg: Quarantine{Fast: 0.25, FastUnknown: 30 * time.Second}, slots: 2,
			steps: []obs{devFail(0, 0), devFail(0, 1), fail(0, 2, 1), fail(0, 3, 1)},
			want:  []string{"", "", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "slow failures are the tests' business", cfg: q, slots: 2,
			steps: []obs{fail(0, 0, 30), fail(0, 1, 30), fail(0, 2, 99)},
			want:  []string{"", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "a pass breaks the streak", cfg: q, slots: 2,
			steps: []obs{fail(0, 0, 1), fail(0, 1, 1), pass(0, 2), fail(0, 3, 1), fail(0, 4, 1)},
			want:  []string{"", "", "", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "streaks are per GPU", cfg: q, slots: 2,
			steps: []obs{fail(0, 0, 1), fail(1, 1, 1), fail(0, 2, 1), fail(1, 3, 1)},
			want:  []string{"", "", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "unknown items fail fast within FastUnknown", cfg: q, slots: 2,
			steps: []obs{fail(0, 10, 29), fail(0, 11, 1), fail(0, 12, 31), fail(0, 13, 2)},
			want:  []string{"", "", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "suspect, then quarantine when an item passes elsewhere", cfg: q, slots: 3,
			steps: []obs{fail(0, 0, 1), fail(0, 1, 2), fail(0, 2, 1), pass(1, 1), fail(2, 0, 1)},
			want: []string{"", "", "suspect 0, requeue 0 from 0, requeue 1 from 0, requeue 2 from 0",
				"quarantine 0", ""},
			state: []slotState{slotQuarantined, slotOK, slotOK}},
		{name: "suspect, then release when its items fail elsewhere too", cfg: q, slots: 2,
			steps: []obs{fail(0, 0, 1), fail(0, 1, 1), fail(0, 2, 1), fail(1, 0, 1), fail(1, 1, 1), fail(1, 2, 1)},
			want: []string{"", "", "suspect 0, requeue 0 from 0, requeue 1 from 0, requeue 2 from 0",
				"", "", "release 0"},
			// The checks that failed on gpu1 are evidence about gpu0 only: they
			// must not suspend gpu1 in turn (which would rerun them forever).
			state: []slotState{slotOK, slotOK}},
		{name: "a suspended GPU's late results are ignored", cfg: q, slots: 2,
			steps: []obs{fail(0, 0, 1), fail(0, 1, 1), fail(0, 2, 1), fail(0, 3, 1), pass(0, 4)},
			want:  []string{"", "", "suspect 0, requeue 0 from 0, requeue 1 from 0, requeue 2 from 0", "", ""},
			state: []slotState{slotSuspended, slotOK}},
		{name: "two device errors in a row suspect at once; a pass elsewhere quarantines", cfg: q, slots: 2,
			steps: []obs{devFail(1, 0), devFail(1, 1), pass(0, 0)},
			want:  []string{"", "suspect 1, requeue 0 from 1, requeue 1 from 1", "quarantine 1"},
			state: []slotState{slotOK, slotQuarantined}},
		{name: "device errors that follow the item are the tests'", cfg: q, slots: 2,
			steps: []obs{devFail(0, 0), devFail(0, 1), devFail(1, 0), devFail(1, 1)},
			want:  []string{"", "suspect 0, requeue 0 from 0, requeue 1 from 0", "", "release 0"},
			state: []slotState{slotOK, slotOK}},
		{name: "device errors on the checking GPU too: neither is taken out", cfg: q, slots: 2,
			steps: []obs{devFail(0, 0), devFail(0, 1), devFail(1, 2), devFail(1, 3), devFail(1, 0), devFail(1, 1), devFail(0, 2), devFail(0, 3)},
			want: []string{"", "suspect 0, requeue 0 from 0, requeue 1 from 0", "", "", "", "release 0",
				"", "suspect 0, requeue 2 from 0, requeue 3 from 0"},
			state: []slotState{slotSuspended, slotOK}},
		{name: "device errors must be in a row", cfg: q, slots: 2,
			steps: []obs{devFail(1, 0), pass(1, 1), devFail(1, 2)},
			want:  []string{"", "", ""}, state: []slotState{slotOK, slotOK}},
		{name: "a slow failure with a device error still counts", cfg: q, slots: 2,
			steps: []obs{{slot: 0, item: 0, rc: 1, secs: 90, dev: "GPU hang"}, {slot: 0, item: 1, rc: 1, secs: 90, dev: "ECC error"}},
			want:  []string{"", "suspect 0, requeue 0 from 0, requeue 1 from 0"},
			state: []slotState{slotSuspended, slotOK}},
		{name: "single GPU: fast failures have nothing to compare with", cfg: q, slots: 1,
			steps: []obs{fail(0, 0, 1), fail(0, 1, 1), fail(0, 2, 1), fail(0, 3, 1), fail(0, 4, 1), fail(0, 5, 1)},
			want:  []string{"", "", "", "", "", ""}, state: []slotState{slotOK}},
		{name: "single GPU: device errors still quarantine it", cfg: q, slots: 1,
			steps: []obs{devFail(0, 0), devFail(0, 1)},
			want:  []string{"", "quarantine 0, requeue 0 from 0, requeue 1 from 0"},
			state: []slotState{slotQuarantined}},
		{name: "single GPU: the same item's device errors are not two", cfg: q, slots: 1,
			steps: []obs{devFail(0, 0), devFail(0, 0), devFail(0, 1)},
			want:  []string{"", "", ""}, state: []slotState{slotOK}},
		{name: "last usable GPU is not suspended", cfg: q, slots: 2,
			steps: []obs{devFail(1, 5), devFail(1, 6), fail(0, 0, 1), fail(0, 1, 1), fail(0, 2, 1)},
			want:  []string{"", "suspect 1, requeue 5 from 1, requeue 6 from 1", "", "", ""},
			state: []slotState{slotOK, slotSuspended}},
		{name: "threshold 1", cfg: Quarantine{Threshold: 1, Fast: 0.25, FastUnknown: 30 * time.Second}, slots: 2,
			steps: []obs{fail(0, 0, 1), pass(1, 0)},
			want:  []string{"suspect 0, requeue 0 from 0", "quarantine 0"},
			state: []slotState{slotQuarantined, slotOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHealth(tt.cfg, tt.slots)
			for i, o := range tt.steps {
				var got []string
				for _, a := range h.observe(o.attempt(), healthItem(o.item)) {
					got = append(got, a.String())
				}
				if g := strings.Join(got, ", "); g != tt.want[i] {
					t.Errorf("step %d %+v: actions %q, want %q", i, o, g, tt.want[i])
				}
			}
			for s, st := range tt.state {
				if h.state[s] != st {
					t.Errorf("slot %d state %d, want %d", s, h.state[s], st)
				}
				if h.usable(s) != (st == slotOK) {
					t.Errorf("slot %d usable = %v in state %d", s, h.usable(s), st)
				}
			}
		})
	}
}

func TestHealthReasons(t *testing.T) {
	h := newHealth(DefaultQuarantine, 2)
	h.observe(devFail(0, 0).attempt(), healthItem(0))
	acts := h.observe(obs{slot: 0, item: 1, rc: 139, secs: 2.5, dev: strings.Repeat("x", 100)}.attempt(), healthItem(1))
	want := `2 items failed in a row on it (rc=1 after 1.0s with "hipErrorNoDevice"; rc=139 after 2.5s with "` + strings.Repeat("x", 80) + `…")`
	if len(acts) == 0 || acts[0].kind != actSuspect || acts[0].reason != want {
		t.Fatalf("actions %v, reason %q\nwant %q", acts, acts[0].reason, want)
	}
	if got := h.summary([]string{"4", "5"}); got != "gpu4" { // suspended: out of the pool for now
		t.Errorf("summary %q", got)
	}

	h = newHealth(DefaultQuarantine, 2)
	for i := 0; i < 3; i++ {
		h.observe(fail(0, i, 1).attempt(), healthItem(i))
	}
	acts = h.observe(pass(1, 2).attempt(), healthItem(2))
	if len(acts) != 1 || !strings.HasSuffix(acts[0].reason, ", and s/t2 then passed on gpu1") {
		t.Errorf("quarantine reason %v", acts)
	}
}

// When nothing could check a suspended GPU's items (every other GPU is out), the
// dispatcher gives it back rather than stall.
func TestHealthReleaseSuspended(t *testing.T) {
	h := newHealth(DefaultQuarantine, 3)
	h.observe(devFail(2, 7).attempt(), healthItem(7))
	h.observe(devFail(2, 8).attempt(), healthItem(8))
	h.observe(pass(1, 7).attempt(), healthItem(7)) // gpu2 is quarantined
	for i := 0; i < 3; i++ {
		h.observe(fail(0, i, 1).attempt(), healthItem(i))
	}
	if h.usable(0) || h.usable(2) || !h.usable(1) {
		t.Fatalf("states %v", h.state)
	}
	// gpu2 is quarantined, gpu0 suspended: two are left in the pool.
	if h.left() != 2 {
		t.Errorf("left %d, want 2", h.left())
	}
	if got := h.summary([]string{"0", "1", "2"}); got != "gpu0, gpu2" {
		t.Errorf("summary %q", got)
	}
	acts := h.releaseSuspended()
	if len(acts) != 1 || acts[0].String() != "release 0" || !h.usable(0) || h.usable(2) {
		t.Errorf("releaseSuspended: %v, states %v", acts, h.state)
	}
	if len(h.byItem) != 0 || len(h.suspect) != 0 {
		t.Errorf("suspicion left behind: %v %v", h.byItem, h.suspect)
	}
	// Items of the released GPU are first-class again: a failure counts where it runs.
	h.observe(fail(1, 0, 1).attempt(), healthItem(0))
	if len(h.streak[1]) != 1 {
		t.Errorf("streak on gpu1 = %d, want 1", len(h.streak[1]))
	}
}

func TestDeviceError(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		log  string
		want string
	}{
		{"hip no device", "collecting...\nRuntimeError: HIP error: hipErrorNoDevice: no ROCm-capable device is detected\nFAILED\n",
			"RuntimeError: HIP error: hipErrorNoDevice: no ROCm-capable device is detected"},
		{"cuda no device", "torch.cuda: no CUDA-capable device is detected\n", "torch.cuda: no CUDA-capable device is detected"},
		{"memory access fault", "ok\nMemory access fault by GPU node-2 (Agent handle: 0x55) on address 0x7f. Reason: Page not present.\n",
			"Memory access fault by GPU node-2 (Agent handle: 0x55) on address 0x7f. Reason: Page not present."},
		{"ecc, case-insensitive", "error: uncorrectable ecc error encountered\n", "error: uncorrectable ecc error encountered"},
		{"gpu hang", "HW Exception by GPU node-1 (Agent handle: 0x1) reason :GPU Hang\n", "HW Exception by GPU node-1 (Agent handle: 0x1) reason :GPU Hang"},
		{"amdgpu ring timeout", "[  12.3] amdgpu: ring gfx_0.0.0 timeout, signaled seq=1\n", "[  12.3] amdgpu: ring gfx_0.0.0 timeout, signaled seq=1"},
		{"first match wins", "GPU is lost\nhipErrorNoDevice\n", "GPU is lost"},
		{"no newline at end", "x\nNVRM: Xid 79", "NVRM: Xid 79"},
		{"a plain failure", "AssertionError: 1 != 2\nFAILED test_x.py::test_y\n", ""},
		{"similar words", "hipErrorNoDev\nno device found in config\nhang on\n", ""},
		{"empty", "", ""},
		{"long line is clipped around the match", strings.Repeat("a", 500) + "GPU hang" + strings.Repeat("b", 500) + "\n",
			strings.Repeat("a", 200) + "GPU hang" + strings.Repeat("b", 200)},
		// One big log for both (the regexp over 256 KiB is slow under -race): a match
		// before the last 256 KiB is not read, one in them is found.
		{"only the tail of a big log is read", "GPU hang\n" + strings.Repeat("ok line\n", 40000) + "hipErrorNoDevice\n", "hipErrorNoDevice"},
		{"binary garbage", "\x00\xff\xfe\x01GPU hang\x00\n", "\x00\xff\xfe\x01GPU hang\x00"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("%d.log", i))
			if err := os.WriteFile(p, []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := deviceError(p); got != tt.want {
				t.Errorf("deviceError = %q, want %q", got, tt.want)
			}
		})
	}
	if got := deviceError(filepath.Join(dir, "missing.log")); got != "" {
		t.Errorf("missing log: %q", got)
	}
}
