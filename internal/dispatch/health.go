package dispatch

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Quarantine configures the bad-GPU detector (docs/bad-day.md): Threshold fast
// failures on a GPU suspend it, and it is quarantined only when its failed items pass
// elsewhere, since a device error that follows the item is the test's.
type Quarantine struct {
	Threshold   int // 0 = off
	Fast        float64
	FastUnknown time.Duration
}

// DefaultQuarantine is on, with a threshold of 3.
var DefaultQuarantine = Quarantine{Threshold: 3, Fast: 0.25, FastUnknown: 30 * time.Second}

// deviceErrors are log lines that mean the GPU (or its driver), not the test, failed.
var deviceErrors = regexp.MustCompile(`(?i)(hipErrorNoDevice|no ROCm-capable device|no CUDA-capable device|cudaErrorNoDevice|` +
	`hipErrorECCNotCorrectable|cudaErrorECCUncorrectable|uncorrectable ECC error|ECC error|GPU hang|HW Exception by GPU node|` +
	`Memory access fault by GPU|GPU is lost|hipErrorLaunchFailure: unspecified launch failure|amdgpu: .*ring .* timeout|NVRM: Xid)`)

// deviceError returns the first device-error line in the tail of a log, or "".
func deviceError(path string) string {
	f, err := safefs.Open(path) // the item may have put a FIFO there
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 256 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, tail))
	loc := deviceErrors.FindIndex(data)
	if loc == nil {
		return ""
	}
	start := loc[0]
	for start > 0 && data[start-1] != '\n' && loc[0]-start < 200 {
		start--
	}
	end := loc[1]
	for end < len(data) && data[end] != '\n' && end-loc[1] < 200 {
		end++
	}
	return strings.TrimSpace(string(data[start:end]))
}

type slotState int

const (
	slotOK slotState = iota
	slotSuspended
	slotQuarantined
)

type actionKind int

const (
	actSuspect actionKind = iota
	actQuarantine
	actRelease
	actRequeue
)

type action struct {
	kind   actionKind
	slot   int
	item   int
	reason string
}

// suspicion is a suspended GPU waiting for its failed items' verdict elsewhere.
type suspicion struct {
	items          map[int]bool
	passed, failed int
	reason         string
}

// health tracks each GPU slot's recent failures. It is driven by the dispatch loop
// alone, so it needs no lock.
type health struct {
	cfg     Quarantine
	state   []slotState
	streak  [][]Attempt
	suspect map[int]*suspicion // by slot
	byItem  map[int]int        // item under verification → suspect slot
}

func newHealth(cfg Quarantine, slots int) *health {
	return &health{cfg: cfg, state: make([]slotState, slots), streak: make([][]Attempt, slots),
		suspect: map[int]*suspicion{}, byItem: map[int]int{}}
}

func (h *health) usable(slot int) bool { return h.state[slot] == slotOK }

// left is the number of GPUs not quarantined (suspended ones included).
func (h *health) left() int { return len(h.state) - h.count(slotQuarantined) }

// count is the number of GPUs in state st.
func (h *health) count(st slotState) int {
	n := 0
	for _, s := range h.state {
		if s == st {
			n++
		}
	}
	return n
}

// releaseSuspended gives every suspended GPU back when nothing else could verify it.
func (h *health) releaseSuspended() []action {
	var acts []action
	for slot, st := range h.state {
		if st == slotSuspended {
			acts = append(acts, h.release(slot, "no other GPU is left to check its failed items on")...)
		}
	}
	return acts
}

func (h *health) summary(gpus []string) string {
	var q []string
	for s, st := range h.state {
		if st != slotOK {
			q = append(q, "gpu"+gpus[s])
		}
	}
	return strings.Join(q, ", ")
}

func (h *health) fast(a Attempt, it expand.Item) bool {
	if !it.Known {
		return a.Seconds() < h.cfg.FastUnknown.Seconds()
	}
	return a.Seconds() < h.cfg.Fast*it.Weight
}

// observe takes an attempt's outcome and returns what to do about GPU health.
func (h *health) observe(a Attempt, it expand.Item) []action {
	if h.cfg.Threshold <= 0 {
		return nil
	}
	if len(a.Slots) != 1 {
		h.observeBlock(a)
		return nil
	}
	at := a.Slots[0]
	var acts []action
	// Evidence for a suspended GPU: one of its failed items ran elsewhere.
	if slot, ok := h.byItem[a.Item]; ok && slot != at {
		delete(h.byItem, a.Item)
		if s := h.suspect[slot]; s != nil {
			if a.Failed() {
				s.failed++
			} else {
				s.passed++
			}
			switch {
			case s.passed > 0 && h.state[slot] == slotSuspended:
				acts = append(acts, h.quarantine(slot, s.reason+", and "+name(it)+" then passed on gpu"+a.GPU())...)
			case s.passed+s.failed == len(s.items) && h.state[slot] == slotSuspended:
				acts = append(acts, h.release(slot, "its failed items failed on other GPUs too: the tests, not the GPU")...)
			}
		}
		// A failed check is evidence about the suspended GPU only. Counting it
		// against this GPU as well would let tests that fail fast everywhere (a
		// broken build) suspend each GPU in turn and rerun the same items forever.
		if a.Failed() {
			return acts
		}
	}
	if h.state[at] != slotOK {
		return acts
	}
	if !a.Failed() || !(a.DeviceErr != "" || h.fast(a, it)) {
		h.streak[at] = nil
		return acts
	}
	h.streak[at] = append(h.streak[at], a)
	streak := h.streak[at]
	device := 0
	for _, s := range streak {
		if s.DeviceErr != "" {
			device++
		}
	}
	// Two device errors in a row make a GPU suspect sooner than fast failures do,
	// but neither is proof: a test may print a device error and fail as it would
	// anywhere. The failed items run again on other GPUs first (below).
	if device < 2 && len(streak) < h.cfg.Threshold {
		return acts
	}
	h.streak[at] = nil // decided: whatever comes of it, the streak starts over
	reason := describe(streak)
	switch {
	case len(h.state) == 1 && device >= 2 && distinct(streak) >= 2:
		// A pool of one GPU has nowhere to check: device errors of different
		// items in a row are all the evidence there is.
		acts = append(acts, h.quarantine(at, reason)...)
	case h.count(slotOK) == 1:
		// No other GPU to check on now (the others are out or suspended): the
		// streak starts over rather than take the last GPUs out on no evidence.
		return acts
	default:
		h.state[at] = slotSuspended
		h.suspect[at] = &suspicion{items: map[int]bool{}, reason: reason}
		acts = append(acts, action{kind: actSuspect, slot: at, reason: reason})
	}
	s := h.suspect[at]
	for _, f := range streak {
		if s != nil {
			s.items[f.Item] = true
			h.byItem[f.Item] = at
		}
		acts = append(acts, action{kind: actRequeue, slot: at, item: f.Item})
	}
	return acts
}

// distinct is the number of different items among the attempts.
func distinct(attempts []Attempt) int {
	seen := map[int]bool{}
	for _, a := range attempts {
		seen[a.Item] = true
	}
	return len(seen)
}

// observeBlock takes a multi-GPU item's attempt: its failure never suspects one GPU
// alone (docs/bad-day.md), and its pass starts its GPUs' streaks over.
func (h *health) observeBlock(a Attempt) {
	if a.Failed() {
		return
	}
	for _, s := range a.Slots {
		if s >= 0 && s < len(h.streak) {
			h.streak[s] = nil
		}
	}
}

func describe(streak []Attempt) string {
	var parts []string
	for _, a := range streak {
		p := fmt.Sprintf("rc=%d after %.1fs", a.RC, a.Seconds())
		if a.DeviceErr != "" {
			p += fmt.Sprintf(" with %q", clip(a.DeviceErr, 80))
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%d items failed in a row on it (%s)", len(streak), strings.Join(parts, "; "))
}

func (h *health) quarantine(slot int, reason string) []action {
	h.state[slot] = slotQuarantined
	h.forget(slot)
	return []action{{kind: actQuarantine, slot: slot, reason: reason}}
}

func (h *health) release(slot int, reason string) []action {
	h.state[slot] = slotOK
	h.streak[slot] = nil
	h.forget(slot)
	return []action{{kind: actRelease, slot: slot, reason: reason}}
}

// forget drops a decided GPU's suspicion: its items still being checked count as
// ordinary attempts where they run.
func (h *health) forget(slot int) {
	if s := h.suspect[slot]; s != nil {
		for it := range s.items {
			if h.byItem[it] == slot {
				delete(h.byItem, it)
			}
		}
	}
	delete(h.suspect, slot)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
