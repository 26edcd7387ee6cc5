package weights

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
)

// PriorKind is what a prior estimate rests on (docs/weights.md "Priors for unknown items"), strongest first.
type PriorKind int

const (
	NoPrior     PriorKind = iota
	FromTable             // the same key in another table, scaled by the keys both share
	FromSibling           // the median of the item's siblings: same suite, same test file
	FromSuite             // the median of its suite
)

// Prior is an estimate of an item the run's own table does not hold.
type Prior struct {
	Seconds float64
	Kind    PriorKind
	// From says where it came from, for the plan: "test_weights.gfx942.l1.txt ×0.93".
	From string
}

// Other is another level's, arch's or GPU count's table; Name is how the plan names it.
type Other struct {
	Name  string
	Table *Table
}

// Prior tuning: fewer than minShared common keys say little about a table; a scale stays within maxScale.
const (
	minShared = 3
	maxScale  = 20
)

// Priors estimates each key own lacks from the first source with something: the key in an other table, scaled;
// else its siblings' median, then its suite's (docs/weights.md). A key with nothing is left out.
func Priors(own *Table, others []Other, keys []string) map[string]Prior {
	p := priors{own: own, others: others, scale: make([]float64, len(others)), shared: make([]int, len(others)),
		groups: map[*Table]map[string][]float64{}}
	for k, o := range others {
		p.scale[k], p.shared[k] = Scale(own, o.Table)
	}
	out := map[string]Prior{}
	for _, key := range keys {
		if _, ok := own.Get(key); ok {
			continue
		}
		if pr, ok := p.of(key); ok {
			out[key] = pr
		}
	}
	return out
}

type priors struct {
	own    *Table
	others []Other
	scale  []float64 // by other: own/other
	shared []int     // by other: keys in common
	groups map[*Table]map[string][]float64
}

func (p *priors) of(key string) (Prior, bool) {
	for k, o := range p.others {
		if v, ok := o.Table.Get(key); ok {
			return Prior{Seconds: v * p.scale[k], Kind: FromTable, From: p.name(k)}, true
		}
	}
	// No table holds key itself now: every key of its group is another item.
	sibling, suite := groupsOfKey(key)
	if pr, ok := p.median(sibling, FromSibling); ok {
		return pr, true
	}
	return p.median(suite, FromSuite)
}

// groupsOfKey names key's groups as the plan says them: its siblings (same suite, same test file; "" when it has
// none) and its suite.
func groupsOfKey(key string) (sibling, suite string) {
	id := record.ParseItemID(key)
	if stem := Stem(id.Tag); id.Tag != "" && stem != id.Tag {
		sibling = "its siblings " + id.Label + "/" + stem + ".*"
	}
	return sibling, "its suite " + id.Label
}

// median is a group's median in own, else in the first other that has it, scaled.
func (p *priors) median(group string, kind PriorKind) (Prior, bool) {
	if v, n := p.groupMedian(p.own, group); n > 0 {
		return Prior{Seconds: v, Kind: kind, From: fmt.Sprintf("median of %s (%d)", group, n)}, true
	}
	for k, o := range p.others {
		if v, n := p.groupMedian(o.Table, group); n > 0 {
			return Prior{Seconds: v * p.scale[k], Kind: kind, From: fmt.Sprintf("median of %s (%d) in %s", group, n, p.name(k))}, true
		}
	}
	return Prior{}, false
}

// groupMedian is the median weight of the group's keys in t, and their count.
func (p *priors) groupMedian(t *Table, group string) (float64, int) {
	g, ok := p.groups[t]
	if !ok {
		g = groupsOf(t)
		p.groups[t] = g
	}
	vs := g[group]
	if len(vs) == 0 {
		return 0, 0
	}
	return medianOf(vs), len(vs)
}

// groupsOf indexes t's weights by sibling group and by suite, each sorted.
func groupsOf(t *Table) map[string][]float64 {
	g := map[string][]float64{}
	for k, v := range t.w {
		if _, _, pooled := cutPoolKey(k); pooled {
			continue
		}
		sibling, suite := groupsOfKey(k)
		g[suite] = append(g[suite], v)
		if sibling != "" {
			g[sibling] = append(g[sibling], v)
		}
	}
	for _, vs := range g {
		slices.Sort(vs)
	}
	return g
}

func (p *priors) name(k int) string {
	s := p.scale[k]
	if p.shared[k] < minShared {
		return fmt.Sprintf("%s (unscaled: %d keys in common)", p.others[k].Name, p.shared[k])
	}
	return fmt.Sprintf("%s ×%.2f", p.others[k].Name, s)
}

// Scale is the median of own/other over their shared keys (within [1/20, 20]) and their count; 1 when too few.
func Scale(own, other *Table) (float64, int) {
	var r []float64
	for k, v := range own.w {
		if o, ok := other.w[k]; ok && o > 0 && v > 0 {
			r = append(r, v/o)
		}
	}
	if len(r) < minShared {
		return 1, len(r)
	}
	slices.Sort(r)
	return min(max(medianOf(r), 1.0/maxScale), maxScale), len(r)
}

// medianOf is the median of sorted vs (not empty).
func medianOf(vs []float64) float64 {
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// Stem is the test file an item's tag names, shared by its variants (TE: test_numerics.ck.amax; pytest: before "::").
// A tag that is its own stem has no siblings.
func Stem(tag string) string {
	if file, _, ok := strings.Cut(tag, "::"); ok {
		return file
	}
	parts := strings.Split(tag, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if strings.HasPrefix(parts[i], "test") {
			return strings.Join(parts[:i+1], ".")
		}
	}
	return parts[0]
}

// PoolOthers are the weights p holds for other pool sizes, one table per size: priors for a pooled
// item new on this size.
func (p *Pool) PoolOthers() []Other {
	by := map[int]*Table{}
	for k, v := range p.aside.w {
		key, n, ok := cutPoolKey(k)
		if !ok || !p.pooled[key] {
			continue
		}
		if by[n] == nil {
			by[n] = New()
		}
		by[n].w[key] = v
	}
	sizes := make([]int, 0, len(by))
	for n := range by {
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	out := make([]Other, 0, len(sizes))
	for _, n := range sizes {
		out = append(out, Other{Name: fmt.Sprintf("the weights on %d GPUs", n), Table: by[n]})
	}
	return out
}

// Place is where a run's or a plan's own table lives: the other tables its priors read are found beside it.
type Place struct {
	RepoRoot, Arch, Level string
	// Table is the own table's local path and Queues the queues whose TE tables seed it: none of these is an other table.
	Table  string
	Queues []string
}

// Priors estimates the keys p's view lacks (Priors) from p's other pool sizes, then the other tables under at's
// ci-weights (OtherTables); it returns the tables it could not read as warnings.
func (p *Pool) Priors(at Place, keys []string) (map[string]Prior, []string) {
	skip := []string{at.Table}
	for _, q := range at.Queues {
		skip = append(skip, TEPath(at.RepoRoot, q, at.Arch, at.Level, p.n))
	}
	others, warns := OtherTables(at.RepoRoot, at.Arch, at.Level, skip)
	return Priors(p.View, append(p.PoolOthers(), others...), keys), warns
}
