package weights

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// A key pattern is path.Match's glob, but '*' and '?' cross '/' (a tag may hold
// one): "*" is every item, "torch/*" every item of suite torch.
func TestKeyPattern(t *testing.T) {
	for _, tt := range []struct {
		pattern, key string
		want         bool
	}{
		{"*", "torch/test_a.py", true},
		{"*", "torch/tests/a/test_x.py", true},
		{"*", "core", true},
		{"torch/*", "torch/tests/a/test_x.py", true},
		{"torch/*", "jax/test_a", false},
		{"torch/*", "torch", false},
		{"torch/bench*", "torch/benchmark", true},
		{"torch/benchmark", "torch/benchmark", true},
		{"torch/benchmark", "torch/benchmark2", false},
		{"*/benchmark", "torch/benchmark", true},
		{"t?rch/a", "torch/a", true},
		{"torch?a", "torch/a", true},
		{"torch/[ab]", "torch/b", true},
		{"torch/[^ab]", "torch/b", false},
		{"torch/[a-c]x", "torch/bx", true},
		{`torch/\*`, "torch/*", true},
		{`torch/\*`, "torch/a", false},
		{"torch/a.b", "torch/aXb", false}, // '.' is no regexp here
		{"é*", "é/ü", true},
		{"torch/[b-a]", "torch/a", false}, // a range the wrong way round matches nothing
		{"torch/[^b-a]", "torch/a", true},
	} {
		p, err := ParseKeyPattern(tt.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		if got := p.Match(tt.key); got != tt.want {
			t.Errorf("%q ~ %q = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "[]", "[a", `a\`, "[-a]", "[a-]", "a\xff"} {
		if _, err := ParseKeyPattern(bad); !errors.Is(err, path.ErrBadPattern) {
			t.Errorf("%q: %v, want path.ErrBadPattern", bad, err)
		}
	}
}

// Where no '/' is involved, a key pattern is path.Match exactly: the same
// patterns accepted (but those that are not valid UTF-8, all refused), the same
// keys matched.
func FuzzKeyPatternIsPathMatch(f *testing.F) {
	for _, s := range [][2]string{{"a*", "abc"}, {"[a-c]x", "bx"}, {"[^a]", "b"}, {`\*`, "*"}, {"a?c", "abc"}, {"[]", ""}, {"[a-]", "a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if strings.Contains(pattern, "/") || strings.Contains(key, "/") {
			return
		}
		if !utf8.ValidString(pattern) {
			if _, err := ParseKeyPattern(pattern); !errors.Is(err, path.ErrBadPattern) {
				t.Fatalf("%q: %v, want path.ErrBadPattern", pattern, err)
			}
			return
		}
		want, werr := path.Match(pattern, key)
		_, verr := path.Match(pattern, "")
		p, err := ParseKeyPattern(pattern)
		if (err != nil) != (verr != nil) {
			t.Fatalf("%q: ParseKeyPattern %v, path.Match %v", pattern, err, verr)
		}
		if err != nil || werr != nil {
			return
		}
		if got := p.Match(key); got != want {
			t.Fatalf("%q ~ %q = %v, path.Match says %v", pattern, key, got, want)
		}
	})
}
