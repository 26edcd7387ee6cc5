package hook

import "strings"

// FilterPattern is the filter that selects exactly the call line of tag
// (docs/hooks.md#the-filter-a-tag-as-an-exact-pattern; docs/choices.md): suites match it as an unquoted shell pattern,
// so each special byte goes in a bracket expression of its own, which bash and POSIX sh both read as that character.
// A white-space byte also matches other white space, as a literal space in a bracket would be split again.
func FilterPattern(tag string) string {
	if !strings.ContainsAny(tag, "*?[\\ \t\n(") {
		return tag
	}
	var b strings.Builder
	b.Grow(len(tag) + 8)
	for i := 0; i < len(tag); i++ {
		switch c := tag[i]; c {
		case '*', '?', '[':
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(']')
		case '\\':
			b.WriteString(`[\\]`)
		case ' ', '\t', '\n':
			b.WriteString("[[:space:]]")
		case '(':
			if i > 0 && strings.IndexByte("+@!", tag[i-1]) >= 0 {
				b.WriteString("[(]")
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
