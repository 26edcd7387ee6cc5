package gpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/optname"
)

// MaxGPUs bounds a pool, so a typo such as --gpus 40000 does not allocate a worker per "GPU".
const MaxGPUs = 1024

// uuidID is a device UUID as a visible-devices list takes it (GPU-… or MIG-…, legacy MIG with slashes).
var uuidID = regexp.MustCompile(`^(GPU|MIG)-[0-9A-Za-z][0-9A-Za-z_.-]*(/[0-9]+/[0-9]+)?$`)

// Spec is a parsed --gpus value: either a list of ids or a count.
type Spec struct {
	IDs   []string // the ids, when a list was given
	Count int      // the count, when a count was given (then IDs is nil)
}

// ParseSpecAs parses a gpus value, its errors naming the option as face f does: "4" is a count; a list has a comma
// ("3,") or is a UUID.
func ParseSpecAs(f optname.Face, s string) (Spec, error) {
	t := strings.TrimSpace(s)
	gpus := f.Name("gpus")
	if t != "" && !strings.Contains(t, ",") && isDigits(t) {
		n, err := strconv.Atoi(t)
		switch {
		case err != nil || n > MaxGPUs:
			return Spec{}, badf("%s %s: more than %d GPUs is not a machine this tool can drive; give a count up to %d or a list of ids",
				gpus, t, MaxGPUs, MaxGPUs)
		case n == 0:
			return Spec{}, badf("%s %s: a count must be at least 1 (to use GPU 0 alone, write %s with a trailing comma)",
				gpus, t, f.Set("gpus", "0,"))
		}
		return Spec{Count: n}, nil
	}
	ids, err := parseIDs(fmt.Sprintf("%s %q", gpus, s), "list GPU ids like 0,1,2,3", s)
	if err != nil {
		return Spec{}, err
	}
	return Spec{IDs: ids}, nil
}

// ParseIDs parses a visible-devices list of logical indices or GPU-/MIG- UUIDs, indices made canonical ("01" is "1").
// what names the source in errors.
func ParseIDs(what, s string) ([]string, error) {
	show := fmt.Sprintf("%s=%q", what, s)
	if strings.HasPrefix(what, "-") {
		show = fmt.Sprintf("%s %q", what, s)
	}
	fix := "list GPU ids like 0,1,2,3"
	if !strings.HasPrefix(what, "-") {
		fix += " or unset it"
	}
	return parseIDs(show, fix, s)
}

// parseIDs is ParseIDs with the source shown as show and the fix given.
func parseIDs(show, fix, s string) ([]string, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(t, ",")
	if strings.TrimSpace(t) == "" {
		return nil, badf("%s names no GPU: %s", show, fix)
	}
	parts := strings.Split(t, ",")
	if len(parts) > MaxGPUs {
		return nil, badf("%s names %d GPUs, more than the %d this tool can drive: list fewer", show, len(parts), MaxGPUs)
	}
	ids := make([]string, 0, len(parts))
	seen := make(map[string]bool, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		var id string
		switch {
		case p == "":
			return nil, badf("%s has an empty id between commas: %s", show, fix)
		case isDigits(p):
			n, err := strconv.Atoi(p)
			if err != nil || n >= 1<<20 {
				return nil, badf("%s: %q is not a GPU index: %s", show, p, fix)
			}
			id = strconv.Itoa(n)
		case uuidID.MatchString(p) && len(p) <= 128:
			id = p
		default:
			return nil, badf("%s: %q is not a GPU id (an index such as 0, or a GPU-/MIG- UUID): %s", show, p, fix)
		}
		if seen[id] {
			return nil, badf("%s names GPU %s twice: list each GPU once", show, id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// countIDs is 0..n-1 as ids.
func countIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return ids
}

// maskLen is at most how many devices a ROCR_VISIBLE_DEVICES value leaves visible; false when unset or empty.
func maskLen(v string) (n int, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) != "" {
			n++
		}
	}
	return n, true
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// archName is what --arch may be: it keys weight-table file names and cache keys.
var archName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`)
