package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscapes(t *testing.T) {
	tests := []struct {
		in                        string
		cell, plain, mermaid, xml string
	}{
		{"test_numerics.ck", "`test_numerics.ck`", `test\_numerics\.ck`, "test_numerics.ck", "test_numerics.ck"},
		{"", "`\"\"`", "", "item", ""},
		{"a|b", "`a\\|b`", `a\|b`, "a_b", "a|b"},
		{"back`tick", "``back`tick``", "back\\`tick", "back_tick", "back`tick"},
		{"`lead", "`` `lead ``", "\\`lead", "_lead", "`lead"},
		{"two``in", "```two``in```", "two\\`\\`in", "two__in", "two``in"},
		{`<script>alert("x")</script>`, "`<script>alert(\"x\")</script>`", `&lt;script&gt;alert\(\"x\"\)&lt;/script&gt;`, "_script_alert__x___/script_", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"},
		{"line1\nline2", "`\"line1\\nline2\"`", "line1 line2", "line1_line2", `&quot;line1\nline2&quot;`},
		{"sp ace", "`\"sp ace\"`", "sp ace", "sp_ace", "sp ace"},
		{"\x1b[31m", "`\"\\x1b[31m\"`", "\uFFFD\\[31m", "__31m", `&quot;\x1b[31m&quot;`},
		{"a&b'c", "`a&b'c`", "a&amp;b\\'c", "a_b_c", "a&amp;b&apos;c"},
		{"title :crit, 0, 1", "`\"title :crit, 0, 1\"`", `title \:crit, 0, 1`, "item_title__crit__0__1", "title :crit, 0, 1"},
		{"Section", "`Section`", "Section", "item_Section", "Section"},
		{"bad\xffutf8", "`bad\uFFFDutf8`", "bad\uFFFDutf8", "bad_utf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := cell(tt.in); got != tt.cell {
				t.Errorf("cell = %q, want %q", got, tt.cell)
			}
			if got := plain(tt.in); got != tt.plain {
				t.Errorf("plain = %q, want %q", got, tt.plain)
			}
			if got := mermaidName(tt.in, 48); got != tt.mermaid {
				t.Errorf("mermaidName = %q, want %q", got, tt.mermaid)
			}
			if got := xmlText(tt.in, 200); got != tt.xml {
				t.Errorf("xmlText = %q, want %q", got, tt.xml)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"ééééé", 4, "ééé…"},
		{"", 1, ""},
	}
	for _, tt := range tests {
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

var mermaidSafe = regexp.MustCompile(`^[A-Za-z0-9._+=/-]+$`)

// FuzzEscapes checks, for any string, the promise of each escaper: a table cell is one
// code span with its pipes escaped and no line break; prose holds no HTML or control
// characters; a Mermaid name only safe characters; SVG text is well-formed XML.
func FuzzEscapes(f *testing.F) {
	for _, s := range hostileTags {
		f.Add(s)
	}
	f.Add("``")
	f.Add("a`")
	f.Add("\\|")
	f.Fuzz(func(t *testing.T, s string) {
		c := cell(s)
		if strings.ContainsAny(c, "\n\r") || strings.ContainsFunc(c, unicode.IsControl) {
			t.Errorf("cell(%q) = %q: a line break or control character", s, c)
		}
		if n := cellPipes("|" + c + "|"); n != 2 {
			t.Errorf("cell(%q) = %q: %d delimiting pipes", s, c, n)
		}
		if !utf8.ValidString(c) {
			t.Errorf("cell(%q) is not UTF-8", s)
		}
		if rest := stripCode(strings.ReplaceAll(c, `\|`, "|")); len(rest) != 0 {
			t.Errorf("cell(%q) = %q is not one code span: %q is left", s, c, rest)
		}
		p := plain(s)
		if strings.ContainsAny(p, "<>\n\r\t") || strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
			t.Errorf("plain(%q) = %q", s, p)
		}
		if m := mermaidName(s, 48); !mermaidSafe.MatchString(m) || len(m) > 48+len("item_") {
			t.Errorf("mermaidName(%q) = %q", s, m)
		}
		x := xmlText(s, 200)
		d := xml.NewDecoder(strings.NewReader("<t a=\"" + x + "\">" + x + "</t>"))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("xmlText(%q) = %q: %v", s, x, err)
			}
		}
		if bytes.ContainsFunc([]byte(x), func(r rune) bool { return r < ' ' }) {
			t.Errorf("xmlText(%q) = %q holds a control character", s, x)
		}
	})
}
