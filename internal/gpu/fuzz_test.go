package gpu

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/optname"
)

// addCaptures seeds a fuzzer with every real capture in testdata/ (each parser also
// sees the other tools' outputs: a wrong tool on PATH is outside input too).
func addCaptures(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no captures in testdata: %v", err)
	}
	for _, file := range files {
		f.Add(capture(f, filepath.Base(file)))
	}
	f.Add("")
	f.Add("\x00\r\n\t")
}

var (
	fuzzArch = regexp.MustCompile(`^(gfx[0-9][0-9a-f]{1,4}|sm_[0-9]{2,4})$`)
	fuzzIdx  = regexp.MustCompile(`^[0-9]+$`)
)

// checkDevices holds for every parser's output: ids are indices or MIG UUIDs that can
// go into an environment variable, archs are well formed, names fit on one line.
func checkDevices(t *testing.T, devs []Device) {
	t.Helper()
	for _, d := range devs {
		if !fuzzIdx.MatchString(d.ID) && !(strings.HasPrefix(d.ID, "MIG-") && uuidID.MatchString(d.ID)) {
			t.Fatalf("bad id %q", d.ID)
		}
		if d.Arch != "" && !fuzzArch.MatchString(d.Arch) {
			t.Fatalf("bad arch %q", d.Arch)
		}
		if strings.ContainsAny(d.Name, "\n") || strings.ContainsAny(d.UUID, "\n") {
			t.Fatalf("multi-line name %q or uuid %q", d.Name, d.UUID)
		}
	}
}

func FuzzParseRocminfo(f *testing.F) {
	addCaptures(f)
	f.Fuzz(func(t *testing.T, s string) {
		agents := ParseRocminfo(s)
		devs := RocminfoGPUs(agents)
		if len(devs) > len(agents) {
			t.Fatalf("%d GPUs from %d agents", len(devs), len(agents))
		}
		checkDevices(t, devs)
		for i, d := range devs {
			if d.ID != countIDs(len(devs))[i] {
				t.Fatalf("GPU %d has id %q", i, d.ID)
			}
		}
	})
}

func FuzzParseAMDSMI(f *testing.F) {
	addCaptures(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkDevices(t, ParseAMDSMI(s))
	})
}

func FuzzParseROCmSMITable(f *testing.F) {
	addCaptures(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkDevices(t, ParseROCmSMITable(s))
	})
}

func FuzzParseROCmSMIFields(f *testing.F) {
	addCaptures(f)
	f.Fuzz(func(t *testing.T, s string) {
		gpus := ParseROCmSMIFields(s)
		seen := map[string]bool{}
		for _, g := range gpus {
			if seen[g.Index] {
				t.Fatalf("GPU[%s] twice", g.Index)
			}
			seen[g.Index] = true
		}
		checkDevices(t, ROCmSMIDevices(gpus))
	})
}

func FuzzParseNvidiaSMIList(f *testing.F) {
	addCaptures(f)
	f.Add("GPU 0: X (UUID: GPU-1)\n  MIG 1g.5gb Device 0: (UUID: MIG-GPU-1/1/0)\n")
	f.Fuzz(func(t *testing.T, s string) {
		checkDevices(t, ParseNvidiaSMIList(s))
	})
}

func FuzzParseNvidiaSMIQuery(f *testing.F) {
	addCaptures(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, fields := range [][]string{{"name", "compute_cap"}, {"compute_cap"}, {"compute_cap", "compute_mode", "driver_version", "name", "index"}} {
			rows := ParseNvidiaSMIQuery(s, fields)
			for _, r := range rows {
				if len(r) != len(fields) {
					t.Fatalf("row %v for fields %v", r, fields)
				}
			}
			devs := NvidiaQueryDevices(rows)
			for _, d := range devs {
				if d.Arch != "" && !fuzzArch.MatchString(d.Arch) {
					t.Fatalf("bad arch %q", d.Arch)
				}
			}
		}
	})
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"4", "0,1,2,3", "3,", "0,,1", "x", "-1", "0", "0,0", ",", "GPU-8d1457e2c20f59d2", "MIG-GPU-a/1/0", " 01 , 2 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpecAs(optname.CLI, s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if spec.IDs == nil {
			if spec.Count < 1 || spec.Count > MaxGPUs {
				t.Fatalf("count %d", spec.Count)
			}
			return
		}
		seen := map[string]bool{}
		for _, id := range spec.IDs {
			if seen[id] || (!fuzzIdx.MatchString(id) && !uuidID.MatchString(id)) || strings.ContainsAny(id, " \t\r\n,") {
				t.Fatalf("bad or repeated id %q in %q", id, s)
			}
			seen[id] = true
		}
	})
}

func FuzzComputeCapArch(f *testing.F) {
	for _, s := range []string{"9.0", "8.9", "10.0", "[N/A]", "", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a := ComputeCapArch(s); a != "" && !fuzzArch.MatchString(a) {
			t.Fatalf("ComputeCapArch(%q) = %q", s, a)
		}
	})
}
