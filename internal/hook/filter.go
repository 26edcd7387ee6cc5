package hook

import "strings"

// FilterPattern is the filter value that selects exactly the call line of tag
// (docs/hooks.md#the-filter-a-tag-as-an-exact-pattern; docs/choices.md).
//
// Suites match their tags against the filter as a shell pattern taken from an
// unquoted expansion: `case "$tag" in $TEST_FILTER)`, `[[ $tag == $TEST_FILTER ]]`
// (bash), or TransformerEngine's `for f in $TEST_FILTER; do case "$tag" in $f)`, which
// also splits the filter on white space. So every byte that is special there is put
// in a bracket expression of its own, which both bash and POSIX sh (dash, busybox)
// read as that one character:
//
//	bytes * ? [ \          [*] [?] [[] [\\]
//	space, tab, newline    [[:space:]]   (no white space is left for the split)
//	( after + @ !          [(]           (bash's extended patterns, always on in [[ ]])
//
// A tag without such bytes is returned unchanged. The one inexactness: a white-space
// byte of the tag also matches any other white-space character in its place (a
// bracket with a literal space would be split apart again).
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
