package logdir

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/record"
)

// docs/files.md's table of queue/run.json names exactly Meta's top-level fields, so a
// field added to the record is documented and a documented one exists.
func TestRunJSONFieldsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/files.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
			in = l == "## `queue/run.json`"
		case in && strings.HasPrefix(l, "| `"):
			first := strings.Split(l, "|")[1]
			for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(first, -1) {
				documented = append(documented, m[1])
			}
		}
	}
	var fields []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(record.Meta{})) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			continue // an embedded group: encoding/json puts its fields at the top
		}
		fields = append(fields, name)
	}
	sort.Strings(documented)
	sort.Strings(fields)
	if diff := cmp.Diff(fields, documented); diff != "" {
		t.Errorf("run.json fields (-record.Meta +docs/files.md):\n%s", diff)
	}
}
