package action

// The base branch's counts (docs/action.md#the-base-branchs-counts): a branch's run
// saves them in the cache; a pull request's run restores its base branch's.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rocm/sgpu-queue/internal/cache"
	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/record"
)

// maxBaseBytes bounds a base record (counts and up to record.MaxBaseFailed ids).
const maxBaseBytes = 4 << 20

// baseStore is where a job leg's base records live in the cache.
type baseStore struct {
	store  *cache.Store
	branch string // the branch whose record is read (a PR's base) or written (a push's)
	pr     bool   // a pull request's run: it reads, never writes
	prefix string // "<cache-key-prefix>-tests-<leg>-<branch>-": every level's
	level  string
	sha    string
	runID  string
	try    string
}

// baseStore is the leg's base record store for a run at level; nil without a cache
// or for a ref that is neither a pull request nor a branch.
func (a *act) baseStore(level string) *baseStore {
	env := a.e.Getenv
	store, cfg := a.blobStore(maxBaseBytes)
	if store == nil {
		return nil
	}
	b := &baseStore{store: store, level: level, sha: env("GITHUB_SHA"), runID: cfg.RunID, try: cfg.RunAttempt}
	switch ref := env("GITHUB_REF"); {
	case env("GITHUB_BASE_REF") != "":
		b.branch, b.pr = env("GITHUB_BASE_REF"), true
	case strings.HasPrefix(ref, "refs/heads/"):
		b.branch = strings.TrimPrefix(ref, "refs/heads/")
	default:
		return nil
	}
	b.prefix = BaseKeyPrefix(cfg.Prefix, a.leg, b.branch)
	return b
}

// BaseKeyPrefix is the start of the keys of a leg's base records for a branch, the
// same for a pull request's run as for its base branch's.
func BaseKeyPrefix(prefix, leg, branch string) string {
	return fmt.Sprintf("%s-tests-%s-%s-", prefix, CacheLeg(leg), CacheLeg(branch))
}

// restore is the base branch's newest record, of this level if any; nil when none
// is usable.
func (b *baseStore) restore(ctx context.Context, a *act) *record.BaseTests {
	if b == nil || !b.pr {
		return nil
	}
	key, data, err := b.store.LoadBlob(ctx, b.prefix+"l"+b.level+"-", b.prefix)
	switch {
	case err != nil:
		a.obs.Warn(err.Error() + "; the report shows no change against the base branch")
		return nil
	case key == "":
		fmt.Fprintf(a.e.Stdout, "  base: no record of %s's last run in the cache (%s*): the report shows no change against it\n",
			b.branch, b.prefix)
		return nil
	}
	var rec record.BaseTests
	if err := json.Unmarshal(data, &rec); err != nil || rec.Format != record.BaseFormat {
		a.obs.Warn(fmt.Sprintf("base: cache entry %s is not a record this version reads; the report shows no change against %s", key, b.branch))
		return nil
	}
	if err := rec.Check(); err != nil {
		a.obs.Warn(fmt.Sprintf("base: cache entry %s is not usable (%v); the report shows no change against %s", key, err, b.branch))
		return nil
	}
	rec.Key = key
	fmt.Fprintf(a.e.Stdout, "  base: restored %s (%s's run %s at level %s, %d tests)\n", key, b.branch, rec.RunID, rec.Level, rec.Tests.Total)
	return &rec
}

// save stores the record of a full branch run: a re-run, shard or cancelled run
// counted only part.
func (b *baseStore) save(ctx context.Context, a *act, res *engine.Result, shard bool) {
	if b == nil || b.pr || res == nil || res.Rerun != nil || shard || res.Cancelled || !res.Stats.Tests.Known {
		return
	}
	rec := res.Stats.Tests.Record(b.branch, b.sha, b.runID)
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	key := b.prefix + "l" + rec.Level + "-" + b.runID + "-" + b.try
	if err := b.store.SaveBlob(ctx, key, data); err != nil {
		a.obs.Warn(err.Error() + ": pull requests into " + b.branch + " will show no change against this run")
		return
	}
	if b.store.CanSave() {
		fmt.Fprintf(a.e.Stdout, "  base: saved %s for the pull requests into %s\n", key, b.branch)
	}
}
