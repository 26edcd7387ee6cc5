package hook

import (
	"fmt"
	"strconv"
	"strings"
)

// MasterPort is the variable torchrun reads for a --master-port its launch does not
// give: every item gets one of its own (docs/hooks.md "Ports").
const MasterPort = "PET_MASTER_PORT"

// PortBaseVar is TE's variable for the first port; DefaultPortBase its default.
const (
	PortBaseVar     = "TE_CI_PORT_BASE"
	DefaultPortBase = 29600
)

// PortBase is the base of the items' ports: given (the port-base option, named
// option as the user's face names it: --port-base, input port-base), else fromEnv
// ($TE_CI_PORT_BASE), else DefaultPortBase. The error names where the bad one came
// from.
func PortBase(given, option, fromEnv string) (int, error) {
	s, from := strings.TrimSpace(given), option
	if s == "" {
		s, from = strings.TrimSpace(fromEnv), PortBaseVar
	}
	if s == "" {
		return DefaultPortBase, nil
	}
	n, err := ParsePortBase(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", from, s, err)
	}
	return n, nil
}

// ParsePortBase reads a port base; the error says what is wanted, without naming
// where it came from (settings checks the option with it, with every other input).
func ParsePortBase(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("want a port number from 1 to 65535, the first of the items' %s ports (default %d)", MasterPort, DefaultPortBase)
	}
	return n, nil
}

// Ports gives each GPU of the pool (by id) the port of an item whose first GPU it
// is: base + the id, as TE's run_queue.sh, when every id is a whole number; else
// base + its position in the pool (MIG UUIDs), so no two GPUs share one. Items
// running at once never share a GPU, so they never share a port. An error when the
// highest port is past 65535, naming option (the port-base option as the user's
// face names it) as the fix.
func Ports(base int, ids []string, option string) (map[string]int, error) {
	offset := make([]int, len(ids))
	for i, id := range ids {
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 || strconv.Itoa(n) != id {
			for j := range offset {
				offset[j] = j
			}
			break
		}
		offset[i] = n
	}
	ports := make(map[string]int, len(ids))
	for i, id := range ids {
		p := base + offset[i]
		if p > 65535 {
			return nil, fmt.Errorf("%s %d + GPU %s is port %d, past 65535: give a lower %s (or %s)", MasterPort, base, id, p, option, PortBaseVar)
		}
		ports[id] = p
	}
	return ports, nil
}

// FirstGPU is the first id of a multi-GPU item's ids joined by ",".
func FirstGPU(gpus string) string {
	first, _, _ := strings.Cut(gpus, ",")
	return first
}
