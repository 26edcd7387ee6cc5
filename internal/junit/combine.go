package junit

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Part is one shard's merged file of a suite (docs/runners.md).
type Part struct {
	Shard string // how the shard is named in the properties, e.g. "2/3"
	Path  string
}

// Combine builds suite s's merged-run document from the shards' merged files, each suite marked with its shard.
// A missing or unusable part, an unreported item and a broken suite each get an error case, so the file never
// reads as passed for want of a shard; nil, nil when no shard had the suite's items.
func Combine(ctx context.Context, s verdict.Suite, parts []Part, unreported func(verdict.Item) bool) (*Doc, error) {
	var notRun []item
	for _, it := range s.Items {
		if unreported(it) {
			notRun = append(notRun, item{Item: it})
		}
	}
	if len(parts) == 0 && len(notRun) == 0 && s.Broken == "" {
		return nil, nil
	}
	label, broken := s.Label, s.Broken
	if label == "" {
		return nil, fmt.Errorf("junit: empty suite label; pass the suite's label from the config")
	}
	m := &merger{label: label, lim: defaultLimits()}
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("junit: combine %s: %w", label, err)
		}
		m.stats.Files++
		suites, err := readJUnit(dirFS(filepath.Dir(p.Path)), filepath.Base(p.Path), m.lim)
		shardProp := xmlProperty{Name: "sgpu.shard", Value: clean(p.Shard)}
		if err != nil {
			m.stats.Malformed++
			m.addSuite(errorSuite(label, p.Path, 0, "sgpu-queue.shard-junit",
				fmt.Sprintf("shard %s: its merged JUnit file %s cannot be read (%v): upload the shard's JUnit directory with its log dir", p.Shard,
					p.Path, err), "",
				[]xmlProperty{shardProp, {Name: "sgpu.source", Value: clean(p.Path)}}))
			continue
		}
		for _, s := range suites {
			s.Props = append(s.Props, shardProp)
			m.addSuite(s)
		}
	}
	if broken != "" {
		m.addSuite(errorSuite(label, "before its items", 0, "sgpu-queue.suite-failed",
			fmt.Sprintf("suite %s: %s", label, broken), "", nil))
	}
	for _, it := range notRun {
		m.addItemError(it, false, "sgpu-queue.never-ran",
			fmt.Sprintf("item %s of suite %s: %s", it.Column(), label, it.status(false)))
	}
	return m.doc(), nil
}
