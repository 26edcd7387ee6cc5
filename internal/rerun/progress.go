package rerun

import (
	"bufio"
	"bytes"
	"encoding/json"
)

// Progress is what a .partial sidecar of TE's pytest plugin recorded before its
// process died.
type Progress struct {
	// Collected are the ids it was going to run; nil when it died before that.
	Collected []string
	// Started are the ids that started, in start order, each once.
	Started []string
	// Phases are each test's reports, by test id.
	Phases map[string]Phases
}

// Phases are one test's reports: phase → outcome, and its first failure's line.
type Phases struct {
	Outcome map[string]string
	Message string
}

// Ended says the test reached an end: a "call" report, or a setup that failed or
// skipped (no call follows those).
func (p Phases) Ended() bool {
	_, call := p.Outcome["call"]
	return call || p.Outcome["setup"] == "failed" || p.Outcome["setup"] == "skipped"
}

// ParseProgress reads a .partial sidecar, skipping a killed process's
// half-written last line.
func ParseProgress(data []byte) Progress {
	p := Progress{Phases: map[string]Phases{}}
	started := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var r partialRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch r.E {
		case "collected":
			p.Collected = make([]string, 0, len(r.NodeIDs))
			for _, id := range r.NodeIDs {
				if id != "" {
					p.Collected = append(p.Collected, id)
				}
			}
		case "start":
			if r.NodeID != "" && !started[r.NodeID] {
				started[r.NodeID] = true
				p.Started = append(p.Started, r.NodeID)
			}
		case "report":
			ph := p.Phases[r.NodeID]
			if ph.Outcome == nil {
				ph.Outcome = map[string]string{}
			}
			ph.Outcome[r.When] = r.Outcome
			if ph.Message == "" && r.Outcome == "failed" {
				ph.Message = r.Msg
			}
			p.Phases[r.NodeID] = ph
		}
	}
	return p
}

// Done are the ids that reached an end (Phases.Ended).
func (p Progress) Done() map[string]bool {
	done := map[string]bool{}
	for id, ph := range p.Phases {
		if ph.Ended() {
			done[id] = true
		}
	}
	return done
}

// Unfinished are the tests that started and never ended, in start order: where a
// crash, hang or kill struck.
func (p Progress) Unfinished() []string {
	var out []string
	for _, id := range p.Started {
		if !p.Phases[id].Ended() {
			out = append(out, id)
		}
	}
	return out
}

// partialRecord is one NDJSON line of a .partial sidecar.
type partialRecord struct {
	E       string   `json:"e"`
	NodeIDs []string `json:"nodeids"`
	NodeID  string   `json:"nodeid"`
	When    string   `json:"when"`
	Outcome string   `json:"outcome"`
	Msg     string   `json:"msg"`
}
