package textfmt

import (
	"strings"
	"testing"
)

func TestPrefixer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"nothing", nil, ""},
		{"one line", []string{"a\n"}, "> a\n"},
		{"split writes", []string{"a", "b\nc", "\n"}, "> ab\n> c\n"},
		{"no newline at the end", []string{"a\nb"}, "> a\n> b\n"},
		{"empty lines", []string{"\n\n"}, "> \n> \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			p := &Prefixer{W: &b, Prefix: "> "}
			for _, w := range tc.writes {
				if n, err := p.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			p.Flush()
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}
