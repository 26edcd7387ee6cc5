package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// devFull is a file every write to fails with ENOSPC: a full disk on demand.
func devFull(t *testing.T) string {
	t.Helper()
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	f.Close()
	return "/dev/full"
}

func TestItemLogFullDisk(t *testing.T) {
	full := devFull(t)
	var warns []string
	l := openLog(full, func(s string) { warns = append(warns, s) })
	for i := 0; i < 3; i++ {
		if n, err := l.Write([]byte("output line\n")); n != 12 || err != nil {
			t.Fatalf("write %d = %d, %v: a full disk must not fail the item's own writes", i, n, err)
		}
	}
	err := l.Close()
	if err == nil || err.Error() != "/dev/full: output lost after 0 bytes: write /dev/full: no space left on device" {
		t.Errorf("Close = %v", err)
	}
	if len(warns) != 0 {
		t.Errorf("warned at open: %q", warns)
	}
}

func TestItemLogCannotCreate(t *testing.T) {
	var warns []string
	p := filepath.Join(t.TempDir(), "missing", "x.log")
	l := openLog(p, func(s string) { warns = append(warns, s) })
	if n, err := l.Write([]byte("abc")); n != 3 || err != nil {
		t.Errorf("write = %d, %v", n, err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close = %v (the loss was already reported)", err)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], p+": cannot create the item log, its output is lost: ") {
		t.Errorf("warnings %q", warns)
	}
}

func TestItemLogCountsWhatWasWritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.log")
	l := openLog(p, func(s string) { t.Errorf("warned %q", s) })
	l.Write([]byte("12345"))
	l.Write([]byte("678"))
	if err := l.Close(); err != nil || l.written != 8 {
		t.Errorf("Close = %v, written %d", err, l.written)
	}
	if data, _ := os.ReadFile(p); string(data) != "12345678" {
		t.Errorf("log %q", data)
	}
}

// A full disk under the log dir: each item's lost output is reported once (naming its
// log), a lost timings row or rc file is a warning, and the items neither fail nor
// stop the run.
func TestRunFullDisk(t *testing.T) {
	full := devFull(t)
	h := newHarness(t, "0", "1")
	fullLayout := logdir.Layout{Root: t.TempDir()}
	os.Mkdir(fullLayout.QueueDir(), 0o755)
	for _, p := range []string{fullLayout.TimingsTSV(), fullLayout.OutcomesTSV()} {
		if err := os.Symlink(full, p); err != nil {
			t.Fatal(err)
		}
	}
	tw, err := fullLayout.OpenTimings()
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	h.cfg.Timings = tw
	tags := []string{"noisy.1", "noisy.2", "sleep.3"}
	var items []Item
	for _, tag := range tags {
		items = append(items, h.item(tag, 1))
		if err := os.Symlink(full, h.layout.ItemLog("s", tag)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(full, h.layout.ItemRC("s", "sleep.3")); err != nil {
		t.Fatal(err)
	}
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
		case strings.HasPrefix(w, "cannot record s/") && strings.Contains(w, ": timings.tsv: ") && strings.Contains(w, "; outcomes.tsv: ") && strings.HasSuffix(w, "no space left on device"):
			rows++
		case strings.HasPrefix(w, h.layout.ItemRC("s", "sleep.3")+": ") && strings.HasSuffix(w, "no space left on device"):
			rcs++
		default:
			t.Errorf("unexpected warning %q", w)
		}
	}
	for _, tag := range tags {
		if perLog[tag] != 1 {
			t.Errorf("lost output of %s reported %d times, want once", tag, perLog[tag])
		}
	}
	if rows != 3 || rcs != 1 {
		t.Errorf("%d timings warnings (want 3), %d rc warnings (want 1)", rows, rcs)
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
	list := func(label, tag string) Item {
		return adapted(Item{Item: schedule.Item{Label: label, Tag: tag}, Suite: config.Suite{Label: label, Mode: config.List}})
	}
	opaque := func(label string) Item {
		return adapted(Item{Item: schedule.Item{Label: label}, Suite: config.Suite{Label: label, Mode: config.Opaque}})
	}
	tests := []struct {
		name   string
		prefix string
		it     Item
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
