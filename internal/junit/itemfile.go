package junit

import (
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/rerun"
)

// ItemFile is the item's JUnit file relative to its suite's JUnit dir (docs/adapters.md, "JUnit files"); false when
// this run cannot know it. named: sgpu-queue names it, <tag><suffix> for a plain tag, else a logdir.SafeTag name;
// otherwise the list script writes <prefix><tag><suffix> itself.
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

// Bounds on a plain tag as a path: room for the suffix and .partial within NAME_MAX, and the prefix within PATH_MAX.
const (
	maxPlainComponent = 200
	maxPlainTag       = 1024
)

// plainTag reports whether a tag can name its file as is: a relative path of characters upload-artifact accepts,
// no '~', and no folder that another item's file or sidecar would need.
func plainTag(tag, suffix string) bool {
	if len(tag) > maxPlainTag {
		return false
	}
	parts := strings.Split(tag, "/")
	for i, c := range parts {
		if c == "" || c == "." || c == ".." || len(c) > maxPlainComponent {
			return false
		}
		if i < len(parts)-1 && (strings.HasSuffix(c, suffix) || strings.HasSuffix(c, rerun.PartialSuffix)) {
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
