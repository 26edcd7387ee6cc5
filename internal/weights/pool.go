package weights

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
)

// poolSep joins the key of an item whose width is the pool and the pool size its
// weight was learned on: "<label>/<tag>@g8" (docs/files.md "The weight table").
const poolSep = "@g"

// PoolKey is the stored key of a pool-sized item's weight on a pool of n GPUs. An
// item that takes the whole pool (an undeclared mGPU item, gpus=all) sizes itself to
// the box: its time on 4 GPUs says nothing of its time on 8, so each pool size has a
// weight of its own.
func PoolKey(key string, n int) string { return key + poolSep + strconv.Itoa(n) }

// cutPoolKey splits a PoolKey; ok is false for any other key.
func cutPoolKey(k string) (key string, n int, ok bool) {
	i := strings.LastIndex(k, poolSep)
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(k[i+len(poolSep):])
	if err != nil || n < 1 || strconv.Itoa(n) != k[i+len(poolSep):] {
		return "", 0, false
	}
	return k[:i], n, true
}

// Pool is a stored table as a run on N GPUs sees it (SplitPool): View holds plain
// keys, the weights of the pool-sized items on N GPUs among them; the other pool
// sizes' weights wait aside, untouched, until Join puts them back.
type Pool struct {
	View   *Table
	n      int
	pooled map[string]bool
	aside  *Table
}

// SplitPool is the view of stored for a run on n GPUs in which the items of the keys
// in pooled take the whole pool. A pooled item's plain key (learned before weights
// were kept per pool size, so on a pool of unknown size) is dropped: its first run
// on each size learns it anew.
func SplitPool(stored *Table, pooled map[string]bool, n int) *Pool {
	p := &Pool{View: New(), n: n, pooled: pooled, aside: New()}
	p.View.learned = slices.Clone(stored.learned) // a merge's record travels with the table
	for k, v := range stored.w {
		key, m, ok := cutPoolKey(k)
		switch {
		case ok && m == n && pooled[key]:
			p.View.w[key] = v
		case ok:
			p.aside.w[k] = v
		case !pooled[k]:
			p.View.w[k] = v
		}
	}
	return p
}

// Over is p's split of another stored table (the one phase 6 reads again under the
// lock: Rewrite), for the same run.
func (p *Pool) Over(stored *Table) *Pool { return SplitPool(stored, p.pooled, p.n) }

// PooledKeys are the keys of the pool-sized items of stored: those with a weight
// per pool size (PoolKey). A plan, which lists nothing, knows them as the items
// that take a whole runner.
func PooledKeys(stored *Table) map[string]bool {
	out := map[string]bool{}
	for k := range stored.w {
		if key, _, ok := cutPoolKey(k); ok {
			out[key] = true
		}
	}
	return out
}

// Join is the table to store after the run learned into p.View: the pooled keys
// written as PoolKey, and the weights held aside, but those of an item its suite's
// census no longer lists (Prune's rule), which it returns as pruned.
func (p *Pool) Join(census Census) (stored *Table, pruned []string) {
	stored = New()
	stored.learned = slices.Clone(p.View.learned)
	for k, v := range p.View.w {
		if p.pooled[k] {
			k = PoolKey(k, p.n)
		}
		stored.w[k] = v
	}
	for k, v := range p.aside.w {
		key, _, _ := cutPoolKey(k)
		if keys, has := census[record.ParseItemID(key).Label]; has && keys != nil && !keys[key] {
			pruned = append(pruned, k)
			continue
		}
		stored.w[k] = v
	}
	return stored, pruned
}

// TEPath is TE's current table of a queue (run_queue.sh): <repoRoot>/ci-weights/
// test_weights.<queue>.<arch>.l<level>.g<gpus>.txt. sgpu-queue reads it (Seed), never
// writes it.
func TEPath(repoRoot, queue, arch, level string, gpus int) string {
	return filepath.Join(repoRoot, "ci-weights", "test_weights."+queue+"."+arch+".l"+level+".g"+strconv.Itoa(gpus)+".txt")
}

// Seed fills t from TE's table at path for the keys t lacks, a pool-sized item's as
// its PoolKey on gpus GPUs (TE keys the whole table by the pool size): the first run
// after switching from TE's queue is ordered. It returns what it added (for a re-read
// table to be filled alike: Table.Fill) and the table's warnings; a missing or
// unreadable table adds nothing.
func Seed(ctx context.Context, t *Table, path string, pooled map[string]bool, gpus int) (*Table, []string) {
	te, warns, _ := File{Path: path}.Load(ctx)
	added := New()
	for k, v := range te.w {
		if pooled[k] {
			k = PoolKey(k, gpus)
		}
		if _, has := t.w[k]; !has {
			t.w[k] = v
			added.w[k] = v
		}
	}
	return added, warns
}

// Fill sets the weights of from that t lacks and returns how many it set.
func (t *Table) Fill(from *Table) int {
	n := 0
	for k, v := range from.w {
		if _, has := t.w[k]; !has {
			t.w[k] = v
			n++
		}
	}
	return n
}
