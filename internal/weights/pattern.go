package weights

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// KeyPattern is a glob over weight keys (docs/outcomes.md): path.Match, except that '*' and '?' also match '/',
// which a tag may hold, so "torch/*" is every item of suite torch.
type KeyPattern struct {
	text string
	re   *regexp.Regexp
}

// ParseKeyPattern reads a pattern; path.ErrBadPattern when path.Match refuses it or it is not UTF-8.
func ParseKeyPattern(p string) (KeyPattern, error) {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	for rest := p; rest != ""; {
		var err error
		switch rest[0] {
		case '*':
			b.WriteString(`.*`)
			rest = rest[1:]
		case '?':
			b.WriteString(`.`)
			rest = rest[1:]
		case '[':
			rest, err = class(&b, rest[1:])
		default:
			var r rune
			r, rest, err = escaped(rest)
			b.WriteString(literal(r))
		}
		if err != nil {
			return KeyPattern{}, err
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return KeyPattern{}, fmt.Errorf("%w: %v", path.ErrBadPattern, err)
	}
	return KeyPattern{text: p, re: re}, nil
}

// Match reports whether key matches the pattern.
func (k KeyPattern) Match(key string) bool { return k.re != nil && k.re.MatchString(key) }

func (k KeyPattern) String() string { return k.text }

// class writes the regexp of a character class as path.Match reads one (a reversed range matches nothing),
// and returns what follows.
func class(b *strings.Builder, rest string) (string, error) {
	negated := strings.HasPrefix(rest, "^")
	if negated {
		rest = rest[1:]
	}
	var ranges strings.Builder
	for n := 0; ; n++ {
		if strings.HasPrefix(rest, "]") && n > 0 {
			rest = rest[1:]
			break
		}
		lo, r, err := classChar(rest)
		if err != nil {
			return "", err
		}
		hi := lo
		if strings.HasPrefix(r, "-") {
			if hi, r, err = classChar(r[1:]); err != nil {
				return "", err
			}
		}
		rest = r
		if lo <= hi {
			ranges.WriteString(literal(lo) + "-" + literal(hi))
		}
	}
	switch {
	case ranges.Len() > 0 && negated:
		b.WriteString("[^" + ranges.String() + "]")
	case ranges.Len() > 0:
		b.WriteString("[" + ranges.String() + "]")
	case negated: // no range: every char
		b.WriteString(`[\x{0}-\x{10ffff}]`)
	default: // no char
		b.WriteString(`[^\x{0}-\x{10ffff}]`)
	}
	return rest, nil
}

// classChar is path.Match's getEsc: a class member, '-' and ']' only escaped.
func classChar(s string) (rune, string, error) {
	if s == "" || s[0] == '-' || s[0] == ']' {
		return 0, "", path.ErrBadPattern
	}
	return escaped(s)
}

// escaped reads one char of a pattern, a '\' escaping the next.
func escaped(s string) (rune, string, error) {
	if s[0] == '\\' {
		s = s[1:]
		if s == "" {
			return 0, "", path.ErrBadPattern
		}
	}
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n == 1 {
		// A regexp reads such a byte as U+FFFD, so it could not match byte for byte as path.Match does.
		return 0, "", fmt.Errorf("%w: not valid UTF-8", path.ErrBadPattern)
	}
	return r, s[n:], nil
}

// literal is r as a regexp matches it, in or out of a class.
func literal(r rune) string { return fmt.Sprintf(`\x{%x}`, r) }
