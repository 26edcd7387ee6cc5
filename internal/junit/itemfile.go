package junit

import (
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
)

// ItemFile is the file, relative to its suite's JUnit directory
// (<prefix><label>/), that the JUnit XML of the item tagged tag is in; ok is false
// when this run cannot know one (an opaque item, whose files the script names; a
// list item whose tag leads outside the directory). Everything that looks for an
// item's XML (the no-run and .partial evidence of phase 4, the merge) asks here.
//
// named says who names the file. A list suite's script writes
// <prefix><tag><suffix> itself (the hook contract), so the name is that path,
// cleaned. An adapter item (named) is given its file by sgpu-queue: <tag><suffix>
// when the tag is a plain relative path (tests/a/test_x.py gives
// tests/a/test_x.py.xml, in a folder of its own), else a flat name made by
// logdir.SafeTag (a '~' and a hash, which no plain tag holds, so no two items share
// a file): a ctest name with a backslash (CMake turns it into '/' in
// --output-junit), a pytest node id with '::' or '?' (which artifact uploads refuse),
// ".." or control characters. docs/adapters.md, "JUnit files".
func ItemFile(tag, suffix string, named bool) (string, bool) {
	if tag == "" {
		return "", false
	}
	if suffix == "" {
		suffix = DefaultSuffix
	}
	if !named {
		name := tag + suffix
		if strings.IndexByte(name, 0) >= 0 || !filepath.IsLocal(name) {
			return "", false
		}
		return filepath.ToSlash(filepath.Clean(name)), true
	}
	if plainTag(tag, suffix) {
		return tag + suffix, true
	}
	return logdir.SafeTag(tag) + suffix, true
}

// Bounds on a plain tag used as a path: a component leaves room for the suffix and a
// .partial sidecar within the 255 bytes of a file name, and the whole for the prefix
// within PATH_MAX.
const (
	maxPlainComponent = 200
	maxPlainTag       = 1024
)

// plainTag reports whether an adapter item's tag can name its JUnit file as it is: a
// relative path of non-empty components other than "." and "..", of letters, digits,
// space and ".+-=_,@[]()" only (none of the characters actions/upload-artifact
// refuses: " : < > | * ? CR LF; no backslash, no '~'), whose folders do not end like
// a file of another item (tag "a" writes a.xml, so tag "a.xml/b" may not need a
// folder a.xml; nor one like its .partial sidecar).
func plainTag(tag, suffix string) bool {
	if len(tag) > maxPlainTag {
		return false
	}
	parts := strings.Split(tag, "/")
	for i, c := range parts {
		if c == "" || c == "." || c == ".." || len(c) > maxPlainComponent {
			return false
		}
		if i < len(parts)-1 && (strings.HasSuffix(c, suffix) || strings.HasSuffix(c, ".partial")) {
			return false
		}
		for i := 0; i < len(c); i++ {
			b := c[i]
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte(" .+-=_,@[]()", b) >= 0) {
				return false
			}
		}
	}
	return true
}
