package rerun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// StateVersion is the format of the state file; another is not trusted.
const StateVersion = 1

// StateKey is what a queue's re-run state was written for (docs/reruns.md#keys);
// an empty Code is not compared.
type StateKey struct {
	Queue string `json:"queue"`
	Arch  string `json:"arch"`
	Level string `json:"level"`
	Code  string `json:"code,omitempty"`
}

func (k StateKey) String() string {
	s := fmt.Sprintf("queue %s, arch %s, level %s", k.Queue, k.Arch, k.Level)
	if k.Code != "" {
		s += ", code " + short(k.Code)
	}
	return s
}

func short(code string) string {
	if len(code) > 12 {
		return code[:12] + "…"
	}
	return code
}

// State is the record beside a failed list: its key, digests of the list and tests
// files, and each item's latest outcome. TE's tools never read it.
type State struct {
	Version int `json:"version"`
	StateKey
	Failed string            `json:"failed_sha256"`
	Tests  map[string]string `json:"tests,omitempty"`
	Items  []record.Carried  `json:"items,omitempty"`
}

// Trust is how far a failed list may be trusted, by its state.
type Trust int

const (
	// Keyed: the state is of this run's key and the list is the one it records.
	Keyed Trust = iota
	// Unkeyed: no state speaks for the list (none, another format, or rewritten
	// since by TE's script or a hand).
	Unkeyed
	// Foreign: the state is of another queue, arch, level or code.
	Foreign
)

// Check says how far a run of key want may trust the failed list, and why not.
func (s *State) Check(want StateKey, list []byte) (Trust, string) {
	switch {
	case s == nil:
		return Unkeyed, "no record of the code it was written for"
	case s.Version != StateVersion:
		return Unkeyed, fmt.Sprintf("its record is of format %d, not %d", s.Version, StateVersion)
	case s.Failed != Digest(list):
		return Unkeyed, "it changed since sgpu-queue wrote it"
	case s.Queue != want.Queue || s.Arch != want.Arch || s.Level != want.Level:
		return Foreign, "it was written for " + s.StateKey.String()
	case want.Code != "" && s.Code != want.Code:
		had := "no known code"
		if s.Code != "" {
			had = "code " + short(s.Code)
		}
		return Foreign, fmt.Sprintf("it was written for %s, this run tests %s", had, short(want.Code))
	}
	return Keyed, ""
}

// Prior is one queue's state as a run of its key trusts it.
type Prior struct {
	Failed []record.ItemID
	State  *State // nil: no record of this key (outside git, the list is still used)
	// ByList: the list is trusted without a record (outside git, one TE's
	// run_queue.sh wrote).
	ByList bool
}

// Load reads f's failed list and its record and says what a run of f's key trusts;
// notice says why a list is not (p.Failed still holds it).
func Load(f Files) (p *Prior, notice string, err error) {
	keys, list, err := ReadFailed(f.Failed())
	if err != nil {
		return &Prior{}, "", err
	}
	st, serr := ReadState(f.State())
	trust, why := st.Check(f.StateKey, list)
	if serr != nil {
		rel, _ := filepath.Rel(f.Root, f.State())
		why = fmt.Sprintf("its record %s cannot be read: %v", rel, errors.Unwrap(serr))
	}
	switch {
	case trust == Keyed:
		return &Prior{Failed: keys, State: st}, "", nil
	case trust == Unkeyed && f.Code == "":
		return &Prior{Failed: keys, ByList: list != nil}, "", nil
	}
	return &Prior{Failed: keys}, why, nil
}

// TestsKept reports whether the tests file name is as this key's run wrote it:
// another level's or arch's run may have rewritten it.
func (s *State) TestsKept(name string, data []byte) bool {
	return s != nil && s.Tests[name] != "" && s.Tests[name] == Digest(data)
}

// Digest is the SHA-256 of data, in hex.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ReadState reads a state file; nil when there is none.
func ReadState(path string) (*State, error) {
	data, err := safefs.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("re-run state %s: %w", path, err)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("re-run state %s: %w", path, err)
	}
	return &s, nil
}

// FormatState is the state file's text.
func FormatState(s *State) []byte {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil // strings, numbers and maps of strings: cannot happen
	}
	return append(data, '\n')
}
