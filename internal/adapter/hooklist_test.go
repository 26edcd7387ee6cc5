package adapter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/hook"
)

func TestParseListing(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		items string // tag[:gpus] joined by |
		warns int
	}{
		{"te output", "setup skipped\nTE_CI_ITEM test_numerics.ck.amax+triton\nTE_CI_ITEM mxfp4..ck\n", "test_numerics.ck.amax+triton|mxfp4..ck", 0},
		{"crlf and spaces", "TE_CI_ITEM  a \r\nTE_CI_ITEM\tb\n", "a|b", 0},
		{"hostile tags kept", "TE_CI_ITEM ../../x\nTE_CI_ITEM a b/c\nTE_CI_ITEM t\x01x\n", "../../x|a b/c|t\x01x", 0},
		{"duplicates run once", "TE_CI_ITEM a\nTE_CI_ITEM b\nTE_CI_ITEM a\n", "a|b", 1},
		{"empty tag", "TE_CI_ITEM\nTE_CI_ITEM   \n", "", 2},
		{"other words", "TE_CI_ITEMS a\n  TE_CI_ITEM b\nxTE_CI_ITEM c\n", "", 0},
		// A GPU count after the tag (docs/hooks.md#listing-te_ci_item-tag).
		{"counts", "TE_CI_ITEM dist.a gpus=2\nTE_CI_ITEM dist.b\tgpus=all \r\nTE_CI_ITEM c gpus=1\n", "dist.a:2|dist.b:all|c:1", 0},
		{"tag with spaces and a count", "TE_CI_ITEM a b  c gpus=4\n", "a b  c:4", 0},
		{"a tag that ends in gpus= is listed with a count", "TE_CI_ITEM run gpus=2 gpus=1\n", "run gpus=2:1", 0},
		{"gpus= inside a word is the tag's", "TE_CI_ITEM test_gpus=2\nTE_CI_ITEM x,gpus=2\n", "test_gpus=2|x,gpus=2", 0},
		{"a count with no tag", "TE_CI_ITEM gpus=2\nTE_CI_ITEM  gpus=all \n", "", 2},
		{"a bad count is refused", "TE_CI_ITEM a gpus=0\nTE_CI_ITEM b gpus=02\nTE_CI_ITEM c gpus=\nTE_CI_ITEM d gpus=1025\nTE_CI_ITEM e gpus=ALL\n", "a:bad|b:bad|c:bad|d:bad|e:bad", 0},
		// TE's current scripts: "TE_CI_ITEM <tag> <N>", N the call site's TE_CI_GPUS.
		{"te bare counts", "TE_CI_ITEM distributed.test_numerics 4\nTE_CI_ITEM test_sanity.ck\tgpus=2\nTE_CI_ITEM x 1 \r\n", "distributed.test_numerics:4|test_sanity.ck:2|x:1", 0},
		{"a bare count that is no GPU count is refused", "TE_CI_ITEM a 0\nTE_CI_ITEM b -1\nTE_CI_ITEM c 04\nTE_CI_ITEM d +2\nTE_CI_ITEM e 1025\nTE_CI_ITEM f 99999999999999999999999\n", "a:bad|b:bad|c:bad|d:bad|e:bad|f:bad", 0},
		{"a word alone is a tag, numbers or not", "TE_CI_ITEM 4\nTE_CI_ITEM -1\n", "4|-1", 0},
		{"other last words stay in the tag", "TE_CI_ITEM a 4x\nTE_CI_ITEM b 1.5\nTE_CI_ITEM c all\nTE_CI_ITEM d -\n", "a 4x|b 1.5|c all|d -", 0},
		{"a tag that ends in a number is listed with a count", "TE_CI_ITEM my test 3 gpus=1\n", "my test 3:1", 0},
		{"duplicate with another count", "TE_CI_ITEM a gpus=2\nTE_CI_ITEM a gpus=4\n", "a:2", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := ParseListing([]byte(tt.in), "TE_CI_ITEM")
			var s []string
			for _, l := range got {
				switch {
				case l.Bad != "":
					s = append(s, l.Tag+":bad")
				case l.All:
					s = append(s, l.Tag+":all")
				case l.GPUs > 0:
					s = append(s, fmt.Sprintf("%s:%d", l.Tag, l.GPUs))
				default:
					s = append(s, l.Tag)
				}
			}
			if strings.Join(s, "|") != tt.items || len(warns) != tt.warns {
				t.Errorf("items %q warns %q, want %q and %d warnings", s, warns, tt.items, tt.warns)
			}
		})
	}
}

// A line that is easy to misread gets a warning saying what was read: a tag holding
// a word that reads as a width but is not the line's last (the width rule), and a
// tag listed again with another width (which width is kept).
func TestParseListingHints(t *testing.T) {
	for _, tt := range []struct {
		in    string
		items string
		warns []string
	}{
		{"TE_CI_ITEM tag 4 extra\n", "tag 4 extra", []string{`line 1: tag "tag 4 extra" read whole: its word "4" is not the line's last, ` +
			`and only the last word gives a width (TE_CI_ITEM <tag> <N>, or gpus=N); if 4 is the item's width, print it last`}},
		{"TE_CI_ITEM t gpus=2 x\n", "t gpus=2 x", []string{`line 1: tag "t gpus=2 x" read whole: its word "gpus=2" is not the line's last, ` +
			`and only the last word gives a width (TE_CI_ITEM <tag> <N>, or gpus=N); if gpus=2 is the item's width, print it last`}},
		{"TE_CI_ITEM my test 3 gpus=1\nTE_CI_ITEM tag 4\nTE_CI_ITEM 4\n", "my test 3|tag|4", nil}, // the rule kept: no hint
		{"TE_CI_ITEM a 2\nTE_CI_ITEM a 3\n", "a", []string{`line 2: tag "a" listed again with gpus=3 (line 1 gave gpus=2): queued once, ` +
			`as line 1 gives it; give each width a tag of its own`}},
		{"TE_CI_ITEM a\nTE_CI_ITEM a gpus=all\n", "a", []string{`line 2: tag "a" listed again with gpus=all (line 1 gave no width): ` +
			`queued once, as line 1 gives it; give each width a tag of its own`}},
		{"TE_CI_ITEM a 2\nTE_CI_ITEM a gpus=2\n", "a", []string{`line 2: duplicate tag "a", queued once (its dispatch runs every call line of that tag)`}},
	} {
		got, warns := ParseListing([]byte(tt.in), "TE_CI_ITEM")
		if tags := strings.Join(Tags(got), "|"); tags != tt.items || strings.Join(warns, "\n") != strings.Join(tt.warns, "\n") {
			t.Errorf("%q: items %q, warnings\n%s\nwant %q and\n%s", tt.in, tags, strings.Join(warns, "\n"), tt.items, strings.Join(tt.warns, "\n"))
		}
	}
}

func TestItemTagDropsTheCount(t *testing.T) {
	for line, want := range map[string]string{
		"TE_CI_ITEM a b gpus=2": "a b", "TE_CI_ITEM a gpus=x": "a", "TE_CI_ITEM a gpus=2 gpus=1": "a gpus=2",
		"TE_CI_ITEM a 4": "a", "TE_CI_ITEM a -1": "a", "TE_CI_ITEM a b": "a b",
	} {
		if tag, ok := ItemTag(line, "TE_CI_ITEM"); !ok || tag != want {
			t.Errorf("ItemTag(%q) = %q, %v; want %q", line, tag, ok, want)
		}
	}
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte("TE_CI_ITEM a\nTE_CI_ITEM b c\n"))
	f.Add([]byte("TE_CI_ITEM \x00\r\nTE_CI_ITEM a\nTE_CI_ITEM a\n"))
	f.Add([]byte("TE_CI_ITEM a gpus=2\nTE_CI_ITEM b c\tgpus=all\nTE_CI_ITEM d gpus=0 gpus=3\nTE_CI_ITEM gpus=4\n"))
	f.Add([]byte("TE_CI_ITEM a 4\nTE_CI_ITEM b -1\nTE_CI_ITEM c 3 gpus=1\nTE_CI_ITEM 2\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		items, _ := ParseListing(in, "TE_CI_ITEM")
		seen := map[string]bool{}
		for _, l := range items {
			tag := l.Tag
			if tag == "" || seen[tag] || strings.ContainsAny(tag, "\n") || tag != strings.TrimSpace(tag) {
				t.Fatalf("bad tag %q in %+v", tag, items)
			}
			seen[tag] = true
			if l.GPUs < 0 || l.GPUs > config.MaxGPUs || (l.All && l.GPUs != 0) || l.Bad != "" && (l.GPUs != 0 || l.All) {
				t.Fatalf("bad count %+v", l)
			}
			if l.Bad != "" {
				continue // refused: Line.Err stops the suite
			}
			// The round trip: a line that gives the item, with its count when it
			// has one, reads back as the same item.
			line := "TE_CI_ITEM " + tag
			switch {
			case l.All:
				line += " gpus=all"
			case l.GPUs > 0:
				line += fmt.Sprintf(" gpus=%d", l.GPUs)
			default:
				line += " gpus=1"
			}
			back, ok := ItemLine(line, "TE_CI_ITEM")
			want := l
			if want.GPUs == 0 && !want.All {
				want.GPUs = 1
			}
			if !ok || back != want {
				t.Fatalf("%q reads back as %+v, want %+v", line, back, want)
			}
		}
	})
}

// A list suite's setup pass is its own script from the repo root with the setup
// switch (never the filter or skip-setup of an item), pinned to the GPUs it is
// given, with the suite's JUnit folder and suffix; an opaque suite has none (its
// setup is part of its one item), nor has a tool's (its setup= runs before listing).
func TestSetupCommand(t *testing.T) {
	names := hook.Default()
	s := config.Suite{Label: "torch", Mode: config.List, Path: "ci/pytorch.sh", Args: []string{"--fast"},
		Options: config.Options{Env: []string{"MY_VAR=on the line"}}}
	a, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	su, ok := a.(SetUpper)
	if !ok {
		t.Fatal("a list suite's adapter has no setup pass")
	}
	c := su.SetupCommand(Run{Dir: "/repo", Cwd: "/repo/logs/cwd/torch.x", JUnitDir: "/out/torch/", JUnitSuffix: ".xml",
		Hook: Hook{Names: names, Level: "3", Base: hook.Env{"PATH=/bin", names.Filter + "=stale"}, Pin: []string{"HIP_VISIBLE_DEVICES=2"}}})
	env := hook.Env(c.Env)
	want := map[string]string{names.SetupOnly: "1", names.Level: "3", "HIP_VISIBLE_DEVICES": "2", "MY_VAR": "on the line",
		names.JUnitPrefix: "/out/torch/", names.JUnitSuffix: ".xml", "PATH": "/bin"}
	for k, v := range want {
		if got, _ := env.Get(k); got != v {
			t.Errorf("%s=%q, want %q (env %q)", k, got, v, c.Env)
		}
	}
	for _, k := range []string{names.SkipSetup, names.ListItems} {
		if got, ok := env.Get(k); ok && got != "" {
			t.Errorf("the setup pass has %s=%q", k, got)
		}
	}
	if c.Path != "ci/pytorch.sh" || len(c.Args) != 1 || c.Args[0] != "--fast" || c.Dir != "/repo" {
		t.Errorf("command %q %q in %q, want the suite's script in the repo root", c.Path, c.Args, c.Dir)
	}
	for _, m := range []config.Mode{config.Opaque, config.Pytest, config.CTest, config.Cmd} {
		o := config.Suite{Label: "x", Mode: m, Path: "ci/x.sh"}
		if m != config.Opaque {
			o.Path = ""
			o.Args = []string{"tests"}
		}
		a, err := New(o)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if _, ok := a.(SetUpper); ok {
			t.Errorf("a %s suite has a setup pass", m)
		}
	}
}
