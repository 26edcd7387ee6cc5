package record

import (
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
)

// Meta is queue/run.json: what a run's TSV files do not say, so a report can be rebuilt from the log dir alone.
type Meta struct {
	Tool string `json:"tool"`
	// Format is logdir.FormatAttempts, logdir.FormatOutcomes (2) for the outcomes.tsv layout, 0 before.
	Format        int         `json:"format,omitempty"`
	Suites        []MetaSuite `json:"suites"`
	GPUs          []string    `json:"gpus"`
	PinVar        string      `json:"pin_var"`
	Arch          string      `json:"arch"`
	Level         string      `json:"level"`
	DefaultWeight float64     `json:"default_weight"`
	Policy        string      `json:"policy,omitempty"`
	Weights       string      `json:"weights"`
	// Pooled are the keys of items that took the whole pool, whose weights are kept per pool size.
	Pooled    []string  `json:"pooled,omitempty"`
	Started   time.Time `json:"started"` // start of phase 4: the zero of the offsets
	Wall      float64   `json:"wall_seconds"`
	Finished  bool      `json:"finished"` // phases 5–8 ran: phase 4 ended (possibly cancelled), or the run stopped before it
	Cancelled bool      `json:"cancelled,omitempty"`
	Changes   []Change  `json:"weight_changes,omitempty"`
	// The bad-day policies in force, and what they did.
	BadDay
	Quarantined []Quarantined `json:"quarantined,omitempty"`
	// Unfit are the items quarantine left unrun: they need more GPUs than it left.
	Unfit []Unfit `json:"unfit,omitempty"`
	// Stop is why the run stopped before its queue was empty; nil when it did not.
	Stop   *Stop    `json:"stop,omitempty"`
	Pruned []string `json:"pruned,omitempty"`
	// Stalled is the stop message of log dirs written before Stop (read only).
	Stalled string `json:"stalled,omitempty"`
	// Shard is set for one shard of a job matrix; Merge for a merge of such shards.
	Shard *ShardRun `json:"shard,omitempty"`
	Merge *Merge    `json:"merge,omitempty"`
	// JUnit are a non-shard run's merged JUnit files, relative to the log dir.
	JUnit []string `json:"junit,omitempty"`
	// Roots are the repo root and its path where the suites ran: the report shows paths relative to them.
	Roots []string `json:"roots,omitempty"`
	// ForeignCwd names the cwd/ entries that were there at the claim and not ours, so no later run
	// deletes them (Owned).
	ForeignCwd []string `json:"foreign_cwd,omitempty"`
	// Rerun is set for a re-run of what failed (docs/reruns.md); nil for a full run.
	Rerun *Rerun `json:"rerun,omitempty"`
	// BaseTests is what the base branch's last run counted; nil: none.
	BaseTests *BaseTests `json:"base_tests,omitempty"`
	// Priors are the estimates of items the table lacked (docs/weights.md); Calibration each suite's end-of-phase-4
	// factor (docs/performance.md).
	Priors      []Prior  `json:"priors,omitempty"`
	Calibration []Factor `json:"calibration,omitempty"`
}

// BadDay are a run's bad-day policies (docs/bad-day.md).
type BadDay struct {
	Retries        int     `json:"retries,omitempty"`
	FlakyIsFailure bool    `json:"flaky_is_failure,omitempty"`
	TimeoutFactor  float64 `json:"item_timeout_factor,omitempty"`
}

// Prior is the estimate a run gave an item its table lacked, and where from.
type Prior struct {
	Key     string  `json:"key"`
	Seconds float64 `json:"seconds"`
	From    string  `json:"from"`
}

// Factor is one suite's calibration: its items took Factor × their estimates (median).
type Factor struct {
	Label  string  `json:"label"`
	Factor float64 `json:"factor"`
	Items  int     `json:"items"`
	Own    bool    `json:"own,omitempty"`
	Run    int     `json:"run"`
}

// Rerun is a re-run's narrowing: items named, queued, and run for their failed tests only.
type Rerun struct {
	Failed   int      `json:"failed"`
	Queued   int      `json:"queued"`
	Narrowed int      `json:"narrowed"`
	Lists    []string `json:"lists"` // the failed lists read, relative to the repo root
	// Ran is how many of the queued items started (a stopped run starts fewer).
	Ran int `json:"ran"`
	// Unrun counts the items no failed list named that no earlier run of the key ran (docs/reruns.md#a-re-run).
	Unrun int `json:"unrun,omitempty"`
	// Carried are the items a shard's re-run did not run again, with their latest outcome, so merge sees each once.
	Carried []Carried `json:"carried,omitempty"`
}

// Carried is an item's latest outcome as the re-run state keeps it (docs/reruns.md).
type Carried struct {
	ItemID
	Result
	// Shard is, in a merged run, the shard whose re-run carried it.
	Shard int `json:"shard,omitempty"`
}

// Result is what an item's verdict decided of it (verdict.Item) that a re-run carries.
type Result struct {
	// Outcome is its last attempt's; "" when it never finished.
	Outcome outcome.Outcome `json:"outcome"`
	RC      int             `json:"rc"`
	Failed  bool            `json:"failed,omitempty"`
	Flaky   bool            `json:"flaky,omitempty"` // failed, then passed on a rerun
	Seconds float64         `json:"seconds"`         // its last attempt's
	// Width is how many GPUs its last attempt took; Tries counts its attempts.
	Width int `json:"gpus,omitempty"`
	Tries int `json:"attempts,omitempty"`
}

// JUnitFiles are the merged JUnit files the run wrote, relative to its log dir.
func (m Meta) JUnitFiles() []string {
	if m.Shard != nil {
		return m.Shard.JUnit
	}
	return m.JUnit
}

// Stop is a typed stop reason with the message the user saw.
type Stop struct {
	Reason  outcome.Stop `json:"reason"`
	Message string       `json:"message"`
	// Phase is the phase the run stopped in: 1 (listing) or 3 (setup) before any item ran, else 4.
	Phase int `json:"phase"`
	// Suite is the label of the suite whose listing or setup failed; "" for any other stop.
	Suite string `json:"suite,omitempty"`
}

// BeforeItems reports whether the run stopped before dispatching items.
func (m *Meta) BeforeItems() bool { return m.Stop != nil && m.Stop.Phase > 0 && m.Stop.Phase < 4 }

// ItemsUnknown reports whether the run stopped before listing, so an empty queue means no listing, not no items.
func (m *Meta) ItemsUnknown() bool { return m.Stop != nil && m.Stop.Phase == 1 }

// Quarantined is a GPU taken out of the pool during the run.
type Quarantined struct {
	GPU    string    `json:"gpu"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Unfit is an item not run because it needs more GPUs than quarantine left.
type Unfit struct {
	ItemID
	GPUs int `json:"gpus"`
	Pool int `json:"pool"` // the GPUs left in the pool
}

// MetaSuite is one suite of the run.
type MetaSuite struct {
	Label   string `json:"label"`
	LogFile string `json:"logfile"`
	Mode    string `json:"mode"`
	// Skip: the suite did not run this time and passes; "" when it ran.
	Skip outcome.Skip `json:"skip,omitempty"`
}

// Change is one weight that moved in phase 6.
type Change struct {
	Key    string  `json:"key"`
	Old    float64 `json:"old"`
	HadOld bool    `json:"had_old"`
	New    float64 `json:"new"`
}
