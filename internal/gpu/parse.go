package gpu

import (
	"regexp"
	"strconv"
	"strings"
)

// Device is one GPU, partition or MIG device as a vendor tool lists it. The parsers never fail: they return
// what they recognise.
type Device struct {
	// ID is the tool's index, or a MIG device's UUID, the only way to pin one (ParseNvidiaSMIList).
	ID   string
	Name string // marketing name; "" when the tool does not say
	Arch string // gfx942, sm_90, ...; "" when the tool does not say
	UUID string // "" when the tool does not say
}

// gfxArch matches an AMD GPU target name as rocminfo, amd-smi and rocm-smi print it.
var gfxArch = regexp.MustCompile(`^gfx[0-9][0-9a-f]{1,4}$`)

// isaArch finds the target inside an ISA name such as amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-.
var isaArch = regexp.MustCompile(`amdgcn-amd-amdhsa--(gfx[0-9][0-9a-f]{1,4})\b`)

// lines splits text into lines without their line ends (CRLF tolerated).
func lines(text string) []string {
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, "\r")
	}
	return ls
}

// cleanValue trims a value and maps the tools' "unknown" spellings to "".
func cleanValue(v string) string {
	v = strings.TrimSpace(v)
	switch strings.ToUpper(v) {
	case "N/A", "[N/A]", "NONE", "UNKNOWN", "<REDACTED>":
		return ""
	}
	return v
}

// --- rocminfo -----------------------------------------------------------------------

// Agent is one HSA agent of rocminfo's listing (CPU, GPU, or another kind).
type Agent struct {
	Name          string // "gfx942" for a GPU, the CPU model for a CPU
	MarketingName string
	DeviceType    string // "GPU", "CPU", ...
	UUID          string
	ISA           string // the target found in the agent's ISA names, when any
}

var agentHeader = regexp.MustCompile(`^\s*Agent\s+[0-9]+\s*$`)

// ParseRocminfo returns rocminfo's agents; only a field's first occurrence counts, as nested sections reuse "Name:".
func ParseRocminfo(text string) []Agent {
	var agents []Agent
	var cur *Agent
	seen := map[string]bool{}
	for _, l := range lines(text) {
		if agentHeader.MatchString(l) {
			agents = append(agents, Agent{})
			cur = &agents[len(agents)-1]
			seen = map[string]bool{}
			continue
		}
		if cur == nil {
			continue
		}
		if m := isaArch.FindStringSubmatch(l); m != nil && cur.ISA == "" {
			cur.ISA = m[1]
		}
		key, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || seen[key] {
			continue
		}
		val = cleanValue(val)
		switch key {
		case "Name":
			cur.Name = val
		case "Marketing Name":
			cur.MarketingName = val
		case "Device Type":
			cur.DeviceType = val
		case "Uuid":
			cur.UUID = val
		default:
			continue
		}
		seen[key] = true
	}
	return agents
}

// RocminfoGPUs keeps the GPU agents; their positions are HIP's logical ids (after any ROCR_VISIBLE_DEVICES mask).
// An MI300A's CPU agents carry its name and are not GPUs.
func RocminfoGPUs(agents []Agent) []Device {
	var out []Device
	for _, a := range agents {
		if !strings.EqualFold(a.DeviceType, "GPU") {
			continue
		}
		d := Device{ID: strconv.Itoa(len(out)), Name: a.MarketingName, UUID: a.UUID}
		switch {
		case gfxArch.MatchString(a.Name):
			d.Arch = a.Name
		case a.ISA != "":
			d.Arch = a.ISA
		}
		out = append(out, d)
	}
	return out
}

// --- amd-smi ------------------------------------------------------------------------

// amdSMIEntry is one "KIND: N" block of amd-smi's output, its nested lines flattened (first occurrence wins).
type amdSMIEntry struct {
	Kind   string // "GPU", "AI_NIC", "CPU", ...
	Index  string
	Fields map[string]string
}

var amdSMITop = regexp.MustCompile(`^([A-Z][A-Z0-9_]*):\s*([0-9]+)\s*$`)

func parseAMDSMI(text string) []amdSMIEntry {
	var out []amdSMIEntry
	for _, l := range lines(text) {
		if m := amdSMITop.FindStringSubmatch(l); m != nil {
			out = append(out, amdSMIEntry{Kind: m[1], Index: m[2], Fields: map[string]string{}})
			continue
		}
		if len(out) == 0 || l == "" || (l[0] != ' ' && l[0] != '\t') {
			continue
		}
		key, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		key = strings.ToUpper(strings.TrimSpace(key))
		if _, dup := out[len(out)-1].Fields[key]; !dup {
			out[len(out)-1].Fields[key] = cleanValue(val)
		}
	}
	return out
}

// ParseAMDSMI returns the GPUs of `amd-smi list` (without name or arch) or `amd-smi static --asic` (with them).
func ParseAMDSMI(text string) []Device {
	var out []Device
	for _, e := range parseAMDSMI(text) {
		if e.Kind != "GPU" {
			continue
		}
		d := Device{ID: e.Index, Name: e.Fields["MARKET_NAME"], UUID: e.Fields["UUID"]}
		if a := strings.ToLower(e.Fields["TARGET_GRAPHICS_VERSION"]); gfxArch.MatchString(a) {
			d.Arch = a
		}
		out = append(out, d)
	}
	return out
}

// --- rocm-smi -----------------------------------------------------------------------

// ROCmSMIGPU is one GPU of rocm-smi's "GPU[N] : Key: value" lines.
type ROCmSMIGPU struct {
	Index  string
	Fields map[string]string // keys as printed ("Card Series", "GFX Version", ...)
}

var rocmSMIField = regexp.MustCompile(`^GPU\[([0-9]+)\]\s*:\s*(.*)$`)

// ParseROCmSMIFields returns the GPUs those lines name, in order, each with its fields (first occurrence wins).
func ParseROCmSMIFields(text string) []ROCmSMIGPU {
	var out []ROCmSMIGPU
	pos := map[string]int{}
	for _, l := range lines(text) {
		m := rocmSMIField.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		i, ok := pos[m[1]]
		if !ok {
			i = len(out)
			pos[m[1]] = i
			out = append(out, ROCmSMIGPU{Index: m[1], Fields: map[string]string{}})
		}
		key, val, ok := strings.Cut(m[2], ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if _, dup := out[i].Fields[key]; !dup && key != "" {
			out[i].Fields[key] = cleanValue(val)
		}
	}
	return out
}

// ROCmSMIDevices turns rocm-smi's fields into Devices; the arch is "GFX Version" (ROCm 6.x).
func ROCmSMIDevices(gpus []ROCmSMIGPU) []Device {
	out := make([]Device, 0, len(gpus))
	for _, g := range gpus {
		d := Device{ID: g.Index, UUID: g.Fields["Unique ID"]}
		for _, k := range []string{"Card Series", "Card series", "Device Name", "Marketing Name"} {
			if v := g.Fields[k]; v != "" {
				d.Name = v
				break
			}
		}
		if a := strings.ToLower(g.Fields["GFX Version"]); gfxArch.MatchString(a) {
			d.Arch = a
		}
		out = append(out, d)
	}
	return out
}

var leadingInt = regexp.MustCompile(`^([0-9]+)\s`)

// ParseROCmSMITable returns the GPUs of rocm-smi's "Concise Info" table, in both layouts.
func ParseROCmSMITable(text string) []Device {
	var out []Device
	header, named := false, false
	for _, l := range lines(text) {
		t := strings.TrimSpace(l)
		if strings.Contains(t, "End of ROCm SMI Log") {
			break
		}
		if !header {
			// The column header starts with "Device" (ROCm 5.x and later) or "GPU" (older).
			if f := strings.Fields(t); len(f) > 1 && l[0] != ' ' && (f[0] == "Device" || f[0] == "GPU") {
				header = true
			}
			continue
		}
		if strings.Contains(l, "Name (20 chars)") {
			named = true
			continue
		}
		if m := leadingInt.FindStringSubmatch(l); m != nil {
			out = append(out, Device{ID: m[1]})
			continue
		}
		if named && len(out) > 0 && out[len(out)-1].Name == "" && t != "" &&
			(l[0] == ' ' || l[0] == '\t') && !strings.HasPrefix(t, "=") {
			out[len(out)-1].Name = cleanValue(t)
		}
	}
	return out
}

// --- nvidia-smi ---------------------------------------------------------------------

var (
	nvGPULine = regexp.MustCompile(`^GPU ([0-9]+): (.*?)(?:\s*\(UUID: ([^)]*)\))?\s*$`)
	nvMIGLine = regexp.MustCompile(`^\s+MIG (\S+)\s+Device\s+([0-9]+): \(UUID: (MIG-[^)\s]+)\)\s*$`)
)

// ParseNvidiaSMIList returns the pinnable devices of `nvidia-smi -L`: a GPU by index, a MIG-mode GPU as its MIG
// devices by UUID, as its index would reach only one of them. A MIG GPU with no MIG device is left out.
func ParseNvidiaSMIList(text string) []Device {
	type gpu struct {
		dev  Device
		migs []Device
	}
	var gpus []gpu
	for _, l := range lines(text) {
		if m := nvGPULine.FindStringSubmatch(l); m != nil {
			gpus = append(gpus, gpu{dev: Device{ID: m[1], Name: strings.TrimSpace(m[2]), UUID: m[3]}})
			continue
		}
		if m := nvMIGLine.FindStringSubmatch(l); m != nil && len(gpus) > 0 && uuidID.MatchString(m[3]) {
			g := &gpus[len(gpus)-1]
			g.migs = append(g.migs, Device{ID: m[3], UUID: m[3], Name: strings.TrimSpace(g.dev.Name + " MIG " + m[1])})
		}
	}
	var out []Device
	for _, g := range gpus {
		if len(g.migs) > 0 {
			out = append(out, g.migs...)
			continue
		}
		out = append(out, g.dev)
	}
	return out
}

// ParseNvidiaSMIQuery parses `nvidia-smi --query-gpu=<fields> --format=csv` into a map per GPU, skipping headers
// and lines without one value per field.
func ParseNvidiaSMIQuery(text string, fields []string) []map[string]string {
	var out []map[string]string
	first := true
	for _, l := range lines(text) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		wasFirst := first
		first = false
		vals := strings.Split(l, ",")
		if len(vals) != len(fields) {
			continue
		}
		row := make(map[string]string, len(fields))
		header := true
		for j, v := range vals {
			v = strings.TrimSpace(v)
			if h, _, _ := strings.Cut(v, " ["); !strings.EqualFold(h, fields[j]) {
				header = false
			}
			row[fields[j]] = cleanValue(v)
		}
		if header && wasFirst {
			continue
		}
		out = append(out, row)
	}
	return out
}

var computeCap = regexp.MustCompile(`^([0-9]{1,2})\.([0-9]{1,2})$`)

// ComputeCapArch turns a compute capability ("9.0") into the table's arch ("sm_90"); "" when it is not one.
func ComputeCapArch(cc string) string {
	m := computeCap.FindStringSubmatch(strings.TrimSpace(cc))
	if m == nil {
		return ""
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return "sm_" + strconv.Itoa(major) + strconv.Itoa(minor)
}

// NvidiaQueryDevices turns --query-gpu rows with name and compute_cap into Devices in index order.
func NvidiaQueryDevices(rows []map[string]string) []Device {
	out := make([]Device, 0, len(rows))
	for i, r := range rows {
		id := r["index"]
		if id == "" {
			id = strconv.Itoa(i)
		}
		out = append(out, Device{ID: id, Name: r["name"], Arch: ComputeCapArch(r["compute_cap"]), UUID: r["uuid"]})
	}
	return out
}
