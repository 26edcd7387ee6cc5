package mdcut

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

const note = "\n\n… (truncated)\n"

// TestCut cuts each text at the size of the result it wants, with filler lines
// after it so that it never fits whole.
func TestCut(t *testing.T) {
	const n = "\n~cut\n"
	filler := strings.Repeat("filler line\n", 5)
	tests := []struct {
		name     string
		md, want string
	}{
		{"plain lines: whole lines only", "line one\nline two\nline three\n", "line one\n" + n},
		{"inside a fence: closed before the note", "x\n```text\nA\nB\nC\nD\n```\n", "x\n```text\nA\nB\n```\n" + n},
		{"a longer fence is closed by its own run", "````text\n```\nstill code\n", "````text\n```\n````\n" + n},
		{"a tilde fence", "~~~\n```\nx\n~~~\nafter\n", "~~~\n```\n~~~\n" + n},
		{"a shorter closing run does not close", "`````\n```\nmore code here\n", "`````\n```\n`````\n" + n},
		{"info string with a backtick is no fence", "``` a`b\nplain\nmore lines\n", "``` a`b\nplain\n" + n},
		{"indented four spaces is no fence", "    ```\nplain text\nmore\n", "    ```\nplain text\n" + n},
		{"open details: closed", "<details><summary>s</summary>\n\nbody\nbody2\nbody3\n</details>\n",
			"<details><summary>s</summary>\n\nbody\n\n</details>\n" + n},
		{"nested details with a fence in them", "<details>\n<DETAILS open>\n```\ncode\ncode2\n```\n</details>\n</details>\n",
			"<details>\n<DETAILS open>\n```\ncode\n```\n\n</details>\n\n</details>\n" + n},
		{"details closed on its line", "<details><summary>a</summary>x</details>\nnext line\nlast\n",
			"<details><summary>a</summary>x</details>\nnext line\n" + n},
		{"a <details> in a code span opens nothing", "cell `<details>` here\nnext\nthird line\n", "cell `<details>` here\nnext\n" + n},
		{"a <details> in a fence opens nothing", "```\n<details>\n```\nafter\nmore\n", "```\n<details>\n```\nafter\n" + n},
		{"one long line: cut at a character boundary", strings.Repeat("é", 20), strings.Repeat("é", 4) + n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := tt.md + filler
			if got := Cut(md, len(tt.want), n); got != tt.want {
				t.Errorf("Cut(%q, %d):\n got %q\nwant %q", md, len(tt.want), got, tt.want)
			}
		})
	}
	if got := Cut("a\n```\nb", 100, n); got != "a\n```\nb" {
		t.Errorf("a text that fits changed: %q", got)
	}
	if got := Cut("ab\xffc", 100, n); got != "ab\uFFFDc" {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

// TestCutEveryLimit cuts adversarial reports at every limit in a range: the result
// never exceeds it, is valid UTF-8, ends with the note, and before the note nothing
// is left open, by an independent reading of the text (open fences, details).
func TestCutEveryLimit(t *testing.T) {
	golden, err := os.ReadFile("../report/testdata/golden/te80-failures.github.md")
	if err != nil {
		t.Fatal(err)
	}
	hostile := "## ✗ sgpu-queue\n\n<details><summary>log of `a`</summary>\n\n````text\n```\n</details>\n<details>\nünïcödé 𝛼𝛼𝛼\n````\n\n" +
		"<details><summary>inner</summary>\n\n```text\nx ≥ y\n```\n\n</details>\n\n</details>\n\n| a | `<details>` |\n|---|---|\n~~~\n```\n~~~\nend\n"
	for name, md := range map[string]string{"hostile": strings.Repeat(hostile, 4), "report": string(golden)} {
		step := max(1, len(md)/3000)
		for limit := len(note); limit < len(md); limit += step {
			got := Cut(md, limit, note)
			if len(got) > limit || !utf8.ValidString(got) || !strings.HasSuffix(got, note) {
				t.Fatalf("%s, limit %d: %d bytes, valid %v, ends with the note %v", name, limit, len(got), utf8.ValidString(got), strings.HasSuffix(got, note))
			}
			if open := unclosed(strings.TrimSuffix(got, note)); open != "" {
				t.Fatalf("%s, limit %d: %s open before the note:\n%s", name, limit, open, got[max(0, len(got)-300):])
			}
		}
	}
}

// unclosed reads md line by line, simply: a line of three or more backticks or
// tildes (nothing but an info string after) opens a block that a line of at least
// as many of the same closes; outside blocks, <details> and </details> are counted
// outside backtick pairs. It names what is left open.
func unclosed(md string) string {
	fence, depth := "", 0
	for _, l := range strings.Split(md, "\n") {
		run := len(l) - len(strings.TrimLeft(l, "`~"))
		switch {
		case fence != "" && run >= len(fence) && l[0] == fence[0] && strings.Trim(l, string(fence[0])) == "":
			fence = ""
		case fence != "":
		case run >= 3 && (l[0] == '~' || !strings.Contains(l[run:], "`")):
			fence = l[:run]
		default:
			parts := strings.Split(l, "`")
			for i := 0; i < len(parts); i += 2 { // outside code spans (even parts)
				depth += strings.Count(parts[i], "<details") - strings.Count(parts[i], "</details>")
			}
		}
	}
	switch {
	case fence != "":
		return "a code fence " + fence
	case depth != 0:
		return "a <details>"
	}
	return ""
}
