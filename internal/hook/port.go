package hook

import (
	"fmt"
	"strconv"
	"strings"
)

// MasterPort is torchrun's variable for a --master-port not given: each item gets its own (docs/hooks.md "Ports").
const MasterPort = "PET_MASTER_PORT"

// PortBaseVar is TE's variable for the first port; DefaultPortBase its default.
const (
	PortBaseVar     = "TE_CI_PORT_BASE"
	DefaultPortBase = 29600
)

// PortBase is the items' port base: given, else fromEnv ($TE_CI_PORT_BASE), else DefaultPortBase;
// the error names its source (option as the user's face spells it).
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

// ParsePortBase reads a port base; the error does not name the source, which the caller knows.
func ParsePortBase(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("want a port number from 1 to 65535, the first of the items' %s ports (default %d)", MasterPort, DefaultPortBase)
	}
	return n, nil
}

// Ports gives each GPU the port of an item it is first of: base + id as TE's run_queue.sh, or base + position for
// non-numeric ids. Items at once never share a GPU, so never a port. Past 65535 is an error naming option.
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
