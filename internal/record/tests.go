package record

import "fmt"

// TestCounts are tests by how they ended (docs/report.md, "Tests first"); Errored includes Unfinished, Passed Flaky.
type TestCounts struct {
	Total      int `json:"total"`
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Errored    int `json:"errored"`
	Skipped    int `json:"skipped"`
	Flaky      int `json:"flaky"`
	Unfinished int `json:"unfinished"`
}

// Bad is how many tests did not pass: failed or errored.
func (c TestCounts) Bad() int { return c.Failed + c.Errored }

// Add adds d to c.
func (c *TestCounts) Add(d TestCounts) {
	c.Total += d.Total
	c.Passed += d.Passed
	c.Failed += d.Failed
	c.Errored += d.Errored
	c.Skipped += d.Skipped
	c.Flaky += d.Flaky
	c.Unfinished += d.Unfinished
}

// BaseFormat is a BaseTests record's format; another format is not used.
const BaseFormat = 1

// BaseTests is what the last run on a branch counted, for its pull requests to compare with
// (docs/action.md, "The base branch's counts").
type BaseTests struct {
	Format int    `json:"format"`
	Ref    string `json:"ref"` // the branch
	SHA    string `json:"sha"`
	RunID  string `json:"run_id"`
	Level  string `json:"level"`
	// Key is the cache key it was restored from (set by the restore, not saved).
	Key    string                `json:"key,omitempty"`
	Tests  TestCounts            `json:"tests"`
	Suites map[string]TestCounts `json:"suites"`
	// Failed are its bad tests, at most MaxBaseFailed; MoreFailed counts those left out, and then no test is new.
	Failed     []TestRef `json:"failed"`
	MoreFailed int       `json:"more_failed,omitempty"`
}

// TestRef names a test by its item's key (one file runs in several TE items) and its id.
type TestRef struct {
	Item string `json:"item"`
	ID   string `json:"id"`
}

// MaxBaseFailed bounds the failed ids a BaseTests record keeps.
const MaxBaseFailed = 2000

// Check says why a restored record, written by another run, cannot be compared with; its names are printed on the
// console, where a newline would start a workflow command.
func (b *BaseTests) Check() error {
	if err := b.Tests.check(); err != nil {
		return fmt.Errorf("tests: %w", err)
	}
	for label, c := range b.Suites {
		if !plainWord(label) {
			return fmt.Errorf("suite label %q is not one plain word", label)
		}
		if err := c.check(); err != nil {
			return fmt.Errorf("suite %s: %w", label, err)
		}
	}
	switch {
	case !plainWord(b.RunID) || !plainWord(b.Level):
		return fmt.Errorf("run id %q or level %q is not one plain word", b.RunID, b.Level)
	case len(b.Failed) > MaxBaseFailed || b.MoreFailed < 0:
		return fmt.Errorf("%d failed ids (%d more), a record keeps at most %d", len(b.Failed), b.MoreFailed, MaxBaseFailed)
	}
	return nil
}

// check says whether c's counts add up.
func (c TestCounts) check() error {
	if c.Total < 0 || c.Passed < 0 || c.Failed < 0 || c.Errored < 0 || c.Skipped < 0 || c.Flaky < 0 || c.Unfinished < 0 ||
		c.Passed+c.Failed+c.Errored+c.Skipped != c.Total || c.Flaky > c.Passed || c.Unfinished > c.Errored {
		return fmt.Errorf("counts %+v do not add up", c)
	}
	return nil
}

// plainWord is a non-empty word of printable ASCII without spaces.
func plainWord(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
