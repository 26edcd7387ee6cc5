package hook

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// filterTags are tags a careless or hostile suite could print, each with siblings
// that a pattern taken as written (or split on white space) would also select.
var filterTags = []struct {
	tag      string
	siblings []string
}{
	{"test_numerics.ck.amax+triton", []string{"test_numerics.ck.amax+tritonx"}},
	{"mxfp4..ck", []string{"mxfp4.ck"}},
	{"odd *tag", []string{"odd xtag", "odd", "*tag", "odd *tagx", "odd  *tag"}},
	{"odd xtag", []string{"odd *tag"}},
	{"a?b", []string{"axb", "a", "b"}},
	{"[x]", []string{"x", "[x"}},
	{"a[bc]d", []string{"abd", "acd"}},
	{"[!a]", []string{"b", "!"}},
	{"[:space:]", []string{"s", " "}},
	{`a\b`, []string{"ab", `a\\b`}},
	{`a\*`, []string{`a\x`, "a*", `a\`}},
	{`a\`, []string{"a", `a\\`}},
	{"tab\there", []string{"tabxhere", "tab", "here", "tab\t\there"}},
	{"a+(b)", []string{"ab", "abb", "a"}},
	{"x@(y|z)", []string{"xy", "xz"}},
	{"!(neg)", []string{"pos", "x"}},
	{"x*(y)", []string{"x", "xyy"}},
	{"f(x)", []string{"fx"}},
	{"../evil tag/x", []string{"../evil", "tag/x"}},
	{"*", []string{"x", "**"}},
	{"?", []string{"x"}},
	{"[", []string{"x"}},
	{"]", []string{"x"}},
	{"-x", []string{"x"}},
	{"$HOME", []string{os.Getenv("HOME")}},
	{"'q' \"dq\"", []string{"q dq"}},
	{"~root", []string{"/root"}},
	{"a|b", []string{"a", "b"}},
	{"a\x01b", []string{"ab"}},
	{"ü *x", []string{"ü yx"}},
}

// TestFilterPattern pins the escaping of each special byte.
func TestFilterPattern(t *testing.T) {
	tests := []struct{ tag, want string }{
		{"test_numerics.ck.amax+triton", "test_numerics.ck.amax+triton"},
		{"mxfp4..ck", "mxfp4..ck"},
		{"f(x)", "f(x)"},
		{"odd *tag", "odd[[:space:]][*]tag"},
		{"a?b[c", "a[?]b[[]c"},
		{`a\b`, `a[\\]b`},
		{"tab\there", "tab[[:space:]]here"},
		{"a+(b)", "a+[(]b)"},
		{"x@(y|z)!(w)", "x@[(]y|z)![(]w)"},
		{"(", "("},
	}
	for _, tt := range tests {
		if got := FilterPattern(tt.tag); got != tt.want {
			t.Errorf("FilterPattern(%q) = %q, want %q", tt.tag, got, tt.want)
		}
	}
	n := Default()
	if got, _ := n.ItemEnv(nil, "1", SingleGPU, "odd *tag", false).Get("TEST_FILTER"); got != "odd[[:space:]][*]tag" {
		t.Errorf("ItemEnv dispatches %q", got)
	}
	item, _ := n.ItemEnv(nil, "1", SingleGPU, "a?b", false).Get("TEST_FILTER")
	for _, census := range []bool{false, true} {
		if got, _ := n.VerifyEnv(nil, "1", SingleGPU, "a?b", census).Get("TEST_FILTER"); got != item {
			t.Errorf("VerifyEnv (census %v) filters with %q, an item with %q", census, got, item)
		}
	}
}

// shellMatcher is one way a suite script matches its tags against the filter.
type shellMatcher struct {
	shell []string // argv of the shell, the script appended
	name  string
	code  string // sets r=y when "$t" is selected by the filter "$p"
}

var shellMatchers = []shellMatcher{
	// TransformerEngine's check_test_filter: split the filter, then case each part.
	{[]string{"sh", "-c"}, "sh for/case", `for f in $p; do case "$t" in $f) r=y;; esac; done`},
	{[]string{"sh", "-c"}, "sh case", `case "$t" in $p) r=y;; esac`},
	{[]string{"bash", "-c"}, "bash for/case", `for f in $p; do case "$t" in $f) r=y;; esac; done`},
	{[]string{"bash", "-c"}, "bash [[ == ]]", `[[ $t == $p ]] && r=y`},
	{[]string{"bash", "-O", "extglob", "-c"}, "bash extglob case", `case $t in $p) r=y;; esac`},
	{[]string{"busybox", "sh", "-c"}, "busybox sh for/case", `for f in $p; do case "$t" in $f) r=y;; esac; done`},
}

// shellVerdicts runs one shell process for all pairs: pair i is T<i> (the string)
// and P<i> (the filter), and the answer is one y or n per pair.
func shellVerdicts(t *testing.T, m shellMatcher, locale string, pairs [][2]string) string {
	t.Helper()
	script := `i=0
while [ "$i" -lt "$N" ]; do
	eval "t=\$T$i p=\$P$i"
	r=n
	` + m.code + `
	printf %s "$r"
	i=$((i+1))
done`
	cmd := exec.Command(m.shell[0], append(m.shell[1:], script)...)
	cmd.Dir = t.TempDir() // an empty directory: the unquoted for globs against it
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=" + locale, fmt.Sprintf("N=%d", len(pairs))}
	for i, p := range pairs {
		cmd.Env = append(cmd.Env, fmt.Sprintf("T%d=%s", i, p[0]), fmt.Sprintf("P%d=%s", i, p[1]))
	}
	out, err := cmd.Output()
	if err != nil || len(out) != len(pairs) {
		t.Fatalf("%s: %v, %d answers for %d pairs: %q", m.name, err, len(out), len(pairs), out)
	}
	return string(out)
}

// TestFilterPatternInRealShells checks every escaped tag against itself, its
// siblings and every other tag, in the ways real suites match (dash as sh, bash,
// busybox where installed), in the C and a UTF-8 locale; and the Go matcher that
// the fuzz target uses against them.
func TestFilterPatternInRealShells(t *testing.T) {
	var pairs [][2]string
	var want []bool
	for _, a := range filterTags {
		p := FilterPattern(a.tag)
		others := append([]string{a.tag}, a.siblings...)
		for _, b := range filterTags {
			others = append(others, b.tag)
		}
		for _, s := range others {
			pairs = append(pairs, [2]string{s, p})
			want = append(want, s == a.tag || spaceEquivalent(a.tag, s))
		}
	}
	for i, pr := range pairs {
		got, err := shellMatch(pr[1], pr[0])
		if err != nil || got != want[i] {
			t.Errorf("Go matcher: %q against filter %q = %v, %v; want %v", pr[0], pr[1], got, err, want[i])
		}
	}
	for _, m := range shellMatchers {
		if _, err := exec.LookPath(m.shell[0]); err != nil {
			if m.shell[0] == "busybox" {
				t.Logf("busybox not installed: %s not checked", m.name)
				continue
			}
			t.Fatalf("%s: %v", m.name, err)
		}
		for _, locale := range []string{"C", "C.UTF-8"} {
			got := shellVerdicts(t, m, locale, pairs)
			for i, pr := range pairs {
				if (got[i] == 'y') != want[i] {
					t.Errorf("%s (LC_ALL=%s): %q against filter %q (tag %q) selected=%c, want %v", m.name, locale, pr[0], pr[1], pr[0], got[i], want[i])
				}
			}
		}
	}
}

// The control: without the escaping, real shells get these wrong, so the table
// above tests something.
func TestUnescapedTagsMisselect(t *testing.T) {
	pairs := [][2]string{{"odd xtag", "odd *tag"}, {"odd *tag", "odd *tag"}, {`a\b`, `a\b`}, {"ab", "a+(b)"}}
	// for/case: "odd *tag" splits into "odd" and "*tag", which selects "odd xtag";
	// backslash escapes the b; bash's [[ ]] reads +(b) as "one or more b".
	if got := shellVerdicts(t, shellMatchers[0], "C", pairs[:3]); got != "yyn" {
		t.Errorf("sh for/case unescaped = %s, want yyn", got)
	}
	if got := shellVerdicts(t, shellMatchers[3], "C", pairs[3:]); got != "y" {
		t.Errorf("bash [[ ]] unescaped = %s, want y", got)
	}
}

func FuzzFilterPattern(f *testing.F) {
	for _, a := range filterTags {
		for _, s := range a.siblings {
			f.Add(a.tag, s)
		}
	}
	f.Add("a b", "a\tb")
	f.Add(`\`, `\\`)
	f.Fuzz(func(t *testing.T, tag, other string) {
		if len(tag) > 256 || len(other) > 256 {
			t.Skip("tags are short; the matcher is quadratic")
		}
		p := FilterPattern(tag)
		if !strings.ContainsAny(tag, "*?[\\ \t\n(") && p != tag {
			t.Fatalf("plain tag %q changed to %q", tag, p)
		}
		if strings.ContainsAny(p, " \t\n") {
			t.Fatalf("filter %q of %q holds white space: an unquoted for splits it", p, tag)
		}
		if ok, err := shellMatch(p, tag); !ok || err != nil {
			t.Fatalf("filter %q does not select its own tag %q (%v)", p, tag, err)
		}
		for _, s := range mutations(tag, other) {
			if s == tag || spaceEquivalent(tag, s) {
				continue
			}
			if ok, err := shellMatch(p, s); ok || err != nil {
				t.Fatalf("filter %q of tag %q also selects %q (%v)", p, tag, s, err)
			}
		}
	})
}

// mutations are strings near tag: each byte dropped, replaced or doubled, bytes
// added at either end, and other itself.
func mutations(tag, other string) []string {
	out := []string{other, "", tag + "x", "x" + tag, tag + tag, FilterPattern(tag)}
	for i := 0; i < len(tag) && i < 64; i++ {
		out = append(out, tag[:i]+tag[i+1:], tag[:i]+"x"+tag[i+1:], tag[:i]+" "+tag[i+1:], tag[:i+1]+tag[i:])
	}
	return out
}

// cSpace is [[:space:]] in the C locale.
const cSpace = " \t\n\v\f\r"

// spaceEquivalent reports whether s differs from tag only where tag has a white-space
// byte that FilterPattern turned into [[:space:]] and s has another white-space byte:
// the documented inexactness.
func spaceEquivalent(tag, s string) bool {
	if len(tag) != len(s) || tag == s {
		return false
	}
	for i := 0; i < len(tag); i++ {
		if tag[i] != s[i] && !(strings.IndexByte(" \t\n", tag[i]) >= 0 && strings.IndexByte(cSpace, s[i]) >= 0) {
			return false
		}
	}
	return true
}

var errExtglob = errors.New("bash extended pattern")

// shellMatch reports whether s matches p read as a shell pattern from an unquoted
// expansion, byte by byte in the C locale, as dash and bash do: * ? [...] with ! or ^,
// ranges and [:class:], and backslash escapes. Bash's extended patterns (+( @( !( *( ?()
// are an error: a filter must not contain one.
func shellMatch(p, s string) (bool, error) {
	toks, err := patternTokens(p)
	if err != nil {
		return false, err
	}
	// can[j]: the tokens so far can match s[:j].
	can := make([]bool, len(s)+1)
	can[0] = true
	for _, tk := range toks {
		next := make([]bool, len(s)+1)
		for j := 0; j <= len(s); j++ {
			if !can[j] {
				continue
			}
			if tk.star {
				for k := j; k <= len(s); k++ {
					next[k] = true
				}
				break
			}
			if j < len(s) && tk.set[s[j]] {
				next[j+1] = true
			}
		}
		can = next
	}
	return can[len(s)], nil
}

// token is one element of a pattern: a star or a set of bytes matching one byte.
type token struct {
	star bool
	set  [256]bool
}

func patternTokens(p string) ([]token, error) {
	var toks []token
	one := func(c byte) token { var t token; t.set[c] = true; return t }
	for i := 0; i < len(p); i++ {
		c := p[i]
		if strings.IndexByte("+@!*?", c) >= 0 && i+1 < len(p) && p[i+1] == '(' {
			return nil, errExtglob
		}
		switch c {
		case '\\':
			if i+1 < len(p) {
				i++
			}
			toks = append(toks, one(p[i]))
		case '*':
			toks = append(toks, token{star: true})
		case '?':
			var t token
			for b := range t.set {
				t.set[b] = true
			}
			toks = append(toks, t)
		case '[':
			t, n, ok := bracket(p[i:])
			if !ok {
				toks = append(toks, one('['))
				continue
			}
			toks = append(toks, t)
			i += n - 1
		default:
			toks = append(toks, one(c))
		}
	}
	return toks, nil
}

// bracket reads the bracket expression at the start of p and returns its set and
// length; ok is false when it is not closed (the [ is then a literal).
func bracket(p string) (t token, n int, ok bool) {
	i := 1
	neg := i < len(p) && (p[i] == '!' || p[i] == '^')
	if neg {
		i++
	}
	first := true
	for i < len(p) {
		c := p[i]
		switch {
		case c == ']' && !first:
			if neg {
				for b := range t.set {
					t.set[b] = !t.set[b]
				}
			}
			return t, i + 1, true
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			end := strings.Index(p[i+2:], ":]")
			if end < 0 {
				t.set['['] = true
				i++
				continue
			}
			class := p[i+2 : i+2+end]
			for b := 0; b < 256; b++ {
				if inClass(class, byte(b)) {
					t.set[b] = true
				}
			}
			i += end + 4
		default:
			if c == '\\' && i+1 < len(p) {
				i++
				c = p[i]
			}
			lo := c
			i++
			if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
				hi := p[i+1]
				if hi == '\\' && i+2 < len(p) {
					hi = p[i+2]
					i++
				}
				for b := int(lo); b <= int(hi); b++ {
					t.set[b] = true
				}
				i += 2
			} else {
				t.set[lo] = true
			}
		}
		first = false
	}
	return token{}, 0, false
}

func inClass(class string, b byte) bool {
	switch class {
	case "space":
		return strings.IndexByte(cSpace, b) >= 0
	case "blank":
		return b == ' ' || b == '\t'
	case "digit":
		return b >= '0' && b <= '9'
	case "upper":
		return b >= 'A' && b <= 'Z'
	case "lower":
		return b >= 'a' && b <= 'z'
	case "alpha":
		return inClass("upper", b) || inClass("lower", b)
	case "alnum":
		return inClass("alpha", b) || inClass("digit", b)
	case "xdigit":
		return inClass("digit", b) || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
	case "cntrl":
		return b < 32 || b == 127
	case "print":
		return b >= 32 && b < 127
	case "graph":
		return b > 32 && b < 127
	case "punct":
		return inClass("graph", b) && !inClass("alnum", b)
	}
	return false
}
