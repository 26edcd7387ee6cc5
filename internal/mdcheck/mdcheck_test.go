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

func TestCodeSpans(t *testing.T) {
	got := strings.Join(CodeSpans("`engine.Run` and `` a ` b `` then `unclosed"), "|")
	if want := "engine.Run|a ` b"; got != want {
		t.Errorf("CodeSpans = %q, want %q", got, want)
	}
}
