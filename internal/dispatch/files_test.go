package dispatch

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/tmpfstest"
	"github.com/rocm/sgpu-queue/internal/treetest"
)

// fullDisk is a log dir on a small tmpfs that is full: a full disk on demand.
func fullDisk(t *testing.T) logdir.Layout {
	t.Helper()
	l := logdir.Layout{Root: tmpfstest.Mount(t, 64<<10)}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	return l
}

// logHarness is a dispatcher writing item logs into l, its losses and warnings
// kept.
func logHarness(l logdir.Layout) (*dispatcher, *[]string) {
	var msgs []string
	d := &dispatcher{cfg: Config{Layout: l, Warn: func(s string) { msgs = append(msgs, s) }}}
	return d, &msgs
}

func TestItemLogFullDisk(t *testing.T) {
	l := fullDisk(t)
	d, warns := logHarness(l)
	it := expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "x"}}}
	// The file is made before the disk fills: an inode is no data block.
	f, err := os.Create(l.ItemLog("s", "x"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	tmpfstest.Fill(t, l.Root)
	log := d.openLog(it)
	for i := 0; i < 3; i++ {
		if n, err := log.Write([]byte("output line\n")); n != 12 || err != nil {
			t.Fatalf("write %d = %d, %v: a full disk must not fail the item's own writes", i, n, err)
		}
	}
	err = log.Close()
	path := l.ItemLog("s", "x")
	if err == nil || err.Error() != path+": output lost after 0 bytes: write "+path+": no space left on device" {
		t.Errorf("Close = %v", err)
	}
	if len(*warns) != 0 {
		t.Errorf("warned at open: %q", *warns)
	}
}

// An item log that cannot be created (its folder is gone, a link or a FIFO is in
// its place) is NOT written, said once; the item's writes still succeed, and what
// the link points at keeps its bytes.
func TestItemLogCannotCreate(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, why string
		make      func(l logdir.Layout, path string) error
	}{
		{"a file for items/", "items is a regular file", func(l logdir.Layout, _ string) error {
			if err := os.Remove(l.ItemsDir()); err != nil {
				return err
			}
			return os.WriteFile(l.ItemsDir(), nil, 0o644)
		}},
		{"a link", "is a symbolic link to " + outside, func(_ logdir.Layout, p string) error { return os.Symlink(outside, p) }},
		{"a dangling link", "is a symbolic link to " + outside + ".new",
			func(_ logdir.Layout, p string) error { return os.Symlink(outside+".new", p) }},
		{"a FIFO", "is a named pipe (FIFO)", func(_ logdir.Layout, p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := logdir.Layout{Root: t.TempDir()}
			if err := l.Prepare(); err != nil {
				t.Fatal(err)
			}
			p := l.ItemLog("s", "x")
			if err := tc.make(l, p); err != nil {
				t.Fatal(err)
			}
			var lost []string
			d, warns := logHarness(l)
			d.cfg.Lost = func(what, path string, err error) {
				lost = append(lost, fmt.Sprintf("%s (%s): %v", path, what, err))
			}
			log := d.openLog(expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "x"}}})
			if n, err := log.Write([]byte("abc")); n != 3 || err != nil {
				t.Errorf("write = %d, %v", n, err)
			}
			if err := log.Close(); err != nil {
				t.Errorf("Close = %v (the loss was already reported)", err)
			}
			want := p + " (the log of item s/x, its output is lost): "
			if len(lost) != 1 || len(*warns) != 0 || !strings.HasPrefix(lost[0], want) || !strings.Contains(lost[0], tc.why) {
				t.Errorf("lost %q, warnings %q: want one %q…%s", lost, *warns, want, tc.why)
			}
			if data, _ := os.ReadFile(outside); string(data) != "precious\n" {
				t.Errorf("the link's target now holds %q", data)
			}
			if _, err := os.Lstat(outside + ".new"); err == nil {
				t.Error("the dangling link's target was created")
			}
		})
	}
}

func TestItemLogCountsWhatWasWritten(t *testing.T) {
	l := logdir.Layout{Root: t.TempDir()}
	if err := l.Prepare(); err != nil {
		t.Fatal(err)
	}
	d, warns := logHarness(l)
	log := d.openLog(expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "x"}}})
	log.Write([]byte("12345"))
	log.Write([]byte("678"))
	if err := log.Close(); err != nil || log.N != 8 || len(*warns) != 0 {
		t.Errorf("Close = %v, written %d, warnings %q", err, log.N, *warns)
	}
	if data, _ := os.ReadFile(l.ItemLog("s", "x")); string(data) != "12345678" {
		t.Errorf("log %q", data)
	}
}

// A full disk under the log dir: each item's lost output is reported once (naming its
// log), a lost attempts (and timings) row or rc file is a warning, and the items neither fail nor
// stop the run.
func TestRunFullDisk(t *testing.T) {
	h := newHarness(t, "0", "1")
	full := fullDisk(t)
	h.layout, h.cfg.Layout = full, full
	tw, err := full.OpenAttempts()
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	h.cfg.Attempts = tw
	tags := []string{"noisy.1", "noisy.2", "sleep.3"}
	var items []expand.Item
	for _, tag := range tags {
		items = append(items, h.item(tag, 1))
		// Made before the disk fills, as the cwd/ folder each item runs in.
		f, err := os.Create(full.ItemLog("s", tag))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Mkdir(full.ItemCwd("s", tag), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmpfstest.Fill(t, full.Root)
	res := h.run(context.Background(), items...)
	if len(res.Attempts) != 3 || res.Cancelled || res.Stop != nil {
		t.Fatalf("attempts %d cancelled %v stop %v", len(res.Attempts), res.Cancelled, res.Stop)
	}
	for _, a := range res.Attempts {
		if a.RC != 0 {
			t.Errorf("%s failed with rc=%d on a full disk", items[a.Item].Tag, a.RC)
		}
	}
	perLog := map[string]int{}
	var rows, rcs int
	for _, w := range h.warnings() {
		switch {
		case strings.Contains(w, "output lost after 0 bytes") && strings.HasSuffix(w, "no space left on device"):
			for _, tag := range tags {
				if strings.HasPrefix(w, h.layout.ItemLog("s", tag)+":") {
					perLog[tag]++
				}
			}
		case strings.HasPrefix(w, "cannot record s/") && strings.Contains(w, ": attempts.tsv: ") && strings.Contains(w, "; timings.tsv: ") && strings.HasSuffix(w, "no space left on device"):
			rows++
		case strings.Contains(w, ".log.rc NOT written (the exit code of item s/") && strings.HasSuffix(w, "no space left on device"):
			rcs++
		default:
			t.Errorf("unexpected warning %q", w)
		}
	}
	for _, tag := range tags {
		if perLog[tag] != 1 {
			t.Errorf("lost output of %s reported %d times, want once", tag, perLog[tag])
		}
		if _, err := os.Stat(full.ItemRC("s", tag)); err == nil {
			t.Errorf("%s has an rc file on a full disk: never an empty one", tag)
		}
	}
	if rows != 3 || rcs != 3 {
		t.Errorf("%d timings warnings (want 3), %d rc warnings (want 3)", rows, rcs)
	}
	if !strings.Contains(h.console.String(), "[3/3 eta") {
		t.Errorf("console %q", h.console.String())
	}
}

func TestPartialLeft(t *testing.T) {
	root := t.TempDir()
	prefix := filepath.Join(root, "junit") + "/"
	now := time.Now()
	old := now.Add(-time.Hour)
	files := map[string]time.Time{
		"s/own.xml.partial":            now,
		"s/sub/dir/nested.xml.partial": now,
		"s/stale.xml.partial":          old,
		"s/done.xml":                   now,
		"s-other/x.xml.partial":        now, // a sibling suite whose name starts with "s"
		"other/x.xml.partial":          now,
		"o/deep/er/t.xml.partial":      now,
		"old/a/b.xml.partial":          old,
		"clean/result.xml":             now,
		"x.xml.partial":                now, // straight under the prefix
	}
	for rel, mt := range files {
		p := filepath.Join(root, "junit", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	list := func(label, tag string) expand.Item {
		return adapted(expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: label, Tag: tag}}, Suite: config.Suite{Label: label, Mode: config.List}})
	}
	opaque := func(label string) expand.Item {
		return adapted(expand.Item{Item: schedule.Item{ItemID: record.ItemID{Label: label}}, Suite: config.Suite{Label: label, Mode: config.Opaque}})
	}
	tests := []struct {
		name   string
		prefix string
		it     expand.Item
		want   bool
	}{
		{"list: its own sidecar", prefix, list("s", "own"), true},
		{"list: a tag with a slash", prefix, list("s", "sub/dir/nested"), true},
		{"list: no sidecar", prefix, list("s", "done"), false},
		{"list: another item's sidecar does not count", prefix, list("s", "absent"), false},
		{"list: older than the item", prefix, list("s", "stale"), false},
		{"list: hostile tag into a sibling suite", prefix, list("s", "../other/x"), false},
		{"list: hostile tag into a suite sharing the prefix", prefix, list("s", "../s-other/x"), false},
		{"list: hostile tag up to the prefix", prefix, list("s", "../x"), false},
		{"list: hostile tag far out", prefix, list("s", "../../../../../../../../dev/null"), false},
		{"list: tag that cleans back inside", prefix, list("s", "a/../own"), true},
		{"opaque: a sidecar anywhere below", prefix, opaque("o"), true},
		{"opaque: only old sidecars", prefix, opaque("old"), false},
		{"opaque: finished files only", prefix, opaque("clean"), false},
		{"opaque: no directory", prefix, opaque("never-ran"), false},
		{"no JUnit prefix", "", list("s", "own"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &dispatcher{cfg: Config{JUnitPrefix: tt.prefix, JUnitSuffix: ".xml"}}
			if got := d.partialLeft(tt.it, now.Add(-time.Minute)); got != tt.want {
				t.Errorf("partialLeft = %v, want %v", got, tt.want)
			}
		})
	}
}

// A retry moves the item's log and rc aside, and an item's empty cwd/ is removed
// after it, never through a link an item planted mid-run: items/ or cwd/ replaced by
// a link to a folder outside holding files of the item's names, or a link where the
// attempt's log goes. The outside folder keeps its names and bytes, the link is left
// for the next run's claim to refuse, and a move not made is a warning.
func TestKeepAttemptNeverThroughLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, l logdir.Layout, outside string)
		warns int
	}{
		{"items/ a link", func(t *testing.T, l logdir.Layout, outside string) {
			for _, n := range []string{"s.x.log", "s.x.log.rc"} {
				if err := os.WriteFile(filepath.Join(outside, n), []byte("precious\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			relink(t, l.ItemsDir(), outside)
		}, 2},
		{"a link at the attempt's log", func(t *testing.T, l logdir.Layout, outside string) {
			for _, p := range []string{l.ItemLog("s", "x"), l.ItemRC("s", "x"), filepath.Join(outside, "precious")} {
				if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(filepath.Join(outside, "precious"), l.ItemAttemptLog("s", "x", 1)); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"cwd/ a link", func(t *testing.T, l logdir.Layout, outside string) {
			if err := os.Mkdir(filepath.Join(outside, "s.x"), 0o755); err != nil {
				t.Fatal(err)
			}
			relink(t, l.CwdDir(), outside)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := logdir.Layout{Root: t.TempDir()}
			if err := l.Prepare(); err != nil {
				t.Fatal(err)
			}
			outside := t.TempDir()
			tc.plant(t, l, outside)
			before := treetest.Snapshot(t, outside)
			inside := func() []string {
				var links []string
				for _, p := range []string{l.ItemsDir(), l.CwdDir(), l.ItemAttemptLog("s", "x", 1)} {
					if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
						links = append(links, p)
					}
				}
				return links
			}
			links := inside()
			var warns []string
			keepAttempt(l, "s", "x", 1, func(s string) { warns = append(warns, s) })
			removeIfEmpty(l, l.ItemCwd("s", "x"))
			if after := treetest.Snapshot(t, outside); !maps.Equal(before, after) {
				t.Errorf("the folder outside changed:\n%v\n→\n%v", before, after)
			}
			if got := inside(); !slices.Equal(got, links) {
				t.Errorf("links %q, want %q left as they were", got, links)
			}
			if len(warns) != tc.warns || tc.warns > 0 && !strings.Contains(warns[0], "is a symbolic link to "+outside) {
				t.Errorf("warnings %q, want %d naming the link", warns, tc.warns)
			}
		})
	}
}

// relink replaces the directory dir with a link to target.
func relink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}
