package mdcheck

import (
	"strings"
	"testing"
)

func TestRelativeLinks(t *testing.T) {
	md := strings.Join([]string{
		"[ok](https://github.com/o/r/actions/runs/1) and [anchor](#failed-items)",
		"[bad](../items/a.log) ![pic](timeline.svg) [spaced]( items/b.log )",
		"<a href=\"items/c.log\">c</a> <img src='https://x/y.png'>",
		"[ref]: report/d.md",
		"`[code](not/a/link)` and ``[also](code) ` ``",
		"```text",
		"[fenced](../../etc/passwd)",
		"```",
		"````",
		"```",
		"[still fenced](x)",
		"````",
		"[after](e.log)",
	}, "\n")
	got := strings.Join(RelativeLinks(md), " ")
	if want := "../items/a.log timeline.svg items/b.log items/c.log report/d.md e.log"; got != want {
		t.Errorf("RelativeLinks = %q, want %q", got, want)
	}
}

func TestAnchors(t *testing.T) {
	md := strings.Join([]string{
		"# sgpu-queue",
		"### Files written (TE's layout)",
		"### First: `sgpu-queue verify`",
		"## Single- and multi-GPU switches",
		"## `queue/run.json`",
		"## Notes",
		"## Notes",
		"```",
		"## not a heading",
		"```",
		"#no-space",
	}, "\n")
	got := Anchors(md)
	for _, want := range []string{"sgpu-queue", "files-written-tes-layout", "first-sgpu-queue-verify", "single--and-multi-gpu-switches", "queuerunjson", "notes", "notes-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || got["no-space"] || len(got) != 7 {
		t.Errorf("anchors %v", got)
	}
}

func TestCodeSpans(t *testing.T) {
	got := strings.Join(CodeSpans("`engine.Run` and `` a ` b `` then `unclosed"), "|")
	if want := "engine.Run|a ` b"; got != want {
		t.Errorf("CodeSpans = %q, want %q", got, want)
	}
}
