package gpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// capture reads a real captured tool output from testdata/ (see testdata/SOURCES.md).
func capture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// summary is what the tests compare of a device listing.
type summary struct {
	IDs   []string
	Names []string // distinct, in order
	Archs []string // distinct, in order
}

func summarize(devs []Device) summary {
	var s summary
	var names, archs []string
	for _, d := range devs {
		s.IDs = append(s.IDs, d.ID)
		if d.Name != "" {
			names = append(names, d.Name)
		}
		if d.Arch != "" {
			archs = append(archs, d.Arch)
		}
	}
	s.Names, s.Archs = uniq(names), uniq(archs)
	return s
}

func seq(n int) []string { return countIDs(n) }

func TestParseRocminfo(t *testing.T) {
	tests := []struct {
		file   string
		agents int
		want   summary
	}{
		{"rocminfo-mi300x-4gpu.txt", 6, summary{seq(4), []string{"AMD Instinct MI300X"}, []string{"gfx942"}}},
		{"rocminfo-mi300x-8gpu.txt", 10, summary{seq(8), []string{"AMD Instinct MI300X"}, []string{"gfx942"}}},
		// The CPU agents are named "AMD Instinct MI300A Accelerator": only GPU agents count.
		{"rocminfo-mi300a-4apu.txt", 8, summary{seq(4), []string{"AMD Instinct MI300A"}, []string{"gfx942"}}},
		{"rocminfo-mi300a-4apu-nogpu.txt", 4, summary{}},
		{"rocminfo-mi210-2gpu.txt", 4, summary{seq(2), []string{"AMD Instinct MI210"}, []string{"gfx90a"}}},
		{"rocminfo-mi250x-1gcd-slurm.txt", 5, summary{seq(1), []string{"AMD Instinct MI250X"}, []string{"gfx90a"}}},
		{"rocminfo-error-kfd-einval-mi300x-container.txt", 0, summary{}},
		{"rocminfo-error-rock-not-loaded-rocm35.txt", 0, summary{}},
		{"rocminfo-error-wsl-rocm702.txt", 0, summary{}},
		// Other tools' outputs are not rocminfo listings.
		{"rocm-smi-mi300x-8gpu.txt", 0, summary{}},
		{"nvidia-smi-L-h100-8gpu.txt", 0, summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			agents := ParseRocminfo(capture(t, tt.file))
			if len(agents) != tt.agents {
				t.Errorf("agents = %d, want %d", len(agents), tt.agents)
			}
			if diff := cmp.Diff(tt.want, summarize(RocminfoGPUs(agents))); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRocminfoFields(t *testing.T) {
	agents := ParseRocminfo(capture(t, "rocminfo-mi300x-4gpu.txt"))
	want := Agent{Name: "gfx942", MarketingName: "AMD Instinct MI300X", DeviceType: "GPU", UUID: "GPU-8d1457e2c20f59d2", ISA: "gfx942"}
	if agents[2] != want {
		t.Errorf("agent 3 = %+v, want %+v", agents[2], want)
	}
	cpu := agents[0]
	if cpu.DeviceType != "CPU" || cpu.Name != "AMD EPYC 9474F 48-Core Processor" || cpu.UUID != "CPU-XX" {
		t.Errorf("agent 1 = %+v", cpu)
	}
	// The UUIDs match rocm-smi's Unique IDs on the same host.
	smi := ROCmSMIDevices(ParseROCmSMIFields(capture(t, "rocm-smi-a-mi300x-4gpu.txt")))
	if smi[0].UUID != "0x8d1457e2c20f59d2" {
		t.Errorf("rocm-smi -a unique id = %q", smi[0].UUID)
	}
}

func TestParseAMDSMI(t *testing.T) {
	tests := []struct {
		file  string
		parse func(string) []Device
		want  summary
	}{
		{"amd-smi-list-mi210-2gpu.txt", ParseAMDSMI, summary{IDs: seq(2)}},
		{"amd-smi-list-instinct-2gpu-redacted.txt", ParseAMDSMI, summary{IDs: seq(2)}},
		// The AI NIC is not a GPU.
		{"amd-smi-list-mi210-ainic.txt", ParseAMDSMI, summary{IDs: seq(1)}},
		{"amd-smi-error-nogpu-rocm624.txt", ParseAMDSMI, summary{}},
		{"amd-smi-version-error-nodriver-wsl-rocm702.txt", ParseAMDSMI, summary{}},
		{"amd-smi-static-asic-mi308x-1gpu.txt", ParseAMDSMI, summary{seq(1), []string{"MI308X"}, []string{"gfx942"}}},
		{"amd-smi-static-mi350x-partial.txt", ParseAMDSMI, summary{seq(1), []string{"AMD Instinct MI350X"}, []string{"gfx950"}}},
		{"rocm-smi-showproductname-mi210-2gpu.txt", ParseAMDSMI, summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summarize(tt.parse(capture(t, tt.file)))); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
		})
	}
	list := ParseAMDSMI(capture(t, "amd-smi-list-mi210-2gpu.txt"))
	if list[1].UUID != "95ff740f-0000-1000-80a1-ca7691e7c391" {
		t.Errorf("UUID = %q", list[1].UUID)
	}
	if red := ParseAMDSMI(capture(t, "amd-smi-list-instinct-2gpu-redacted.txt")); red[0].UUID != "" {
		t.Errorf("redacted UUID = %q, want empty", red[0].UUID)
	}
}

func TestParseROCmSMITable(t *testing.T) {
	tests := []struct {
		file string
		want summary
	}{
		{"rocm-smi-mi300x-4gpu.txt", summary{IDs: seq(4), Names: []string{"AMD Instinct MI300X"}}},
		{"rocm-smi-mi300x-8gpu.txt", summary{IDs: seq(8)}},
		// DPX: 8 MI300X as 16 logical GPUs, each a HIP device.
		{"rocm-smi-mi300x-8gpu-dpx.txt", summary{IDs: seq(16)}},
		{"rocm-smi-mi300a-tpx.txt", summary{IDs: seq(3)}},
		{"rocm-smi-mi210-2gpu.txt", summary{IDs: seq(2)}},
		{"rocm-smi-nogpu-rocm624.txt", summary{}},
		{"rocm-smi-error-no-drm-rocm35.txt", summary{}},
		{"rocm-smi-showid-mi210-3gpu.txt", summary{}},
		{"rocminfo-mi300x-4gpu.txt", summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summarize(ParseROCmSMITable(capture(t, tt.file)))); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseROCmSMIFields(t *testing.T) {
	tests := []struct {
		file string
		want summary
	}{
		{"rocm-smi-showproductname-mi210-2gpu.txt", summary{seq(2), []string{"Instinct MI210"}, []string{"gfx90a"}}},
		{"rocm-smi-showid-mi210-3gpu.txt", summary{IDs: seq(3), Names: []string{"Instinct MI210"}}},
		{"rocm-smi-showid-mi300a-tpx.txt", summary{IDs: seq(3), Names: []string{"AMD Instinct MI300A"}}},
		{"rocm-smi-showid-mi300x-8gpu-dpx.txt", summary{IDs: seq(16), Names: []string{"AMD Instinct MI300X"}}},
		{"rocm-smi-a-mi300x-4gpu.txt", summary{IDs: seq(4), Names: []string{"AMD Instinct MI300X OAM"}}},
		{"rocm-smi-mi300x-8gpu.txt", summary{IDs: []string{}}},
		{"rocm-smi-nogpu-rocm624.txt", summary{IDs: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := summarize(ROCmSMIDevices(ParseROCmSMIFields(capture(t, tt.file))))
			if got.IDs == nil {
				got.IDs = []string{}
			}
			if tt.want.IDs == nil {
				tt.want.IDs = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
	// Partitions 1 and 2 of a TPX MI300A report N/A ids: they read as empty.
	g := ParseROCmSMIFields(capture(t, "rocm-smi-showid-mi300a-tpx.txt"))
	if g[1].Fields["Device ID"] != "" || g[0].Fields["Device ID"] != "0x74a0" || g[2].Fields["GUID"] != "43505" {
		t.Errorf("fields = %v / %v / %v", g[0].Fields, g[1].Fields, g[2].Fields)
	}
}

func TestParseNvidiaSMIList(t *testing.T) {
	h100 := summary{IDs: seq(8), Names: []string{"NVIDIA H100 80GB HBM3"}}
	tests := []struct {
		file string
		want summary
	}{
		{"nvidia-smi-L-h100-8gpu.txt", h100},
		{"nvidia-smi-L-titanv-rtx5880-2gpu.txt", summary{IDs: seq(2), Names: []string{"NVIDIA TITAN V", "NVIDIA RTX 5880 Ada Generation"}}},
		// GPU 0 is in MIG mode: its four MIG devices replace it, by UUID.
		{"nvidia-smi-L-a100-4gpu-mig.txt", summary{
			IDs: []string{
				"MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "MIG-a45882f0-9215-5733-a0c1-49286ab31cb5",
				"MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe", "MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b",
				"1", "2", "3"},
			Names: []string{"NVIDIA A100-SXM4-80GB MIG 1g.20gb", "NVIDIA A100-SXM4-80GB"}}},
		{"nvidia-smi-error-nodevices.txt", summary{}},
		{"nvidia-smi-error-nodriver.txt", summary{}},
		{"nvidia-smi-error-nodriver-modprobe.txt", summary{}},
		{"nvidia-smi-error-nvml-mismatch.txt", summary{}},
		{"rocminfo-mi300x-4gpu.txt", summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summarize(ParseNvidiaSMIList(capture(t, tt.file)))); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
		})
	}
	mig7 := ParseNvidiaSMIList(capture(t, "nvidia-smi-L-a100-1gpu-mig7.txt"))
	if len(mig7) != 7 || mig7[6].ID != "MIG-1aae4990-b962-574e-8375-119d6d9b9687" {
		t.Errorf("mig7 = %+v", mig7)
	}
	if h := ParseNvidiaSMIList(capture(t, "nvidia-smi-L-h100-8gpu.txt")); h[7].UUID != "GPU-c674bee4-9599-7385-18a5-ee64430a859a" {
		t.Errorf("UUID = %q", h[7].UUID)
	}
}

func TestParseNvidiaSMIQuery(t *testing.T) {
	tests := []struct {
		file   string
		fields []string
		want   summary
	}{
		{"nvidia-smi-query-name-cc-h100-8gpu.txt", []string{"name", "compute_cap"},
			summary{seq(8), []string{"NVIDIA H100 80GB HBM3"}, []string{"sm_90"}}},
		// A mixed host: two archs, in index order.
		{"nvidia-smi-query-cc-mode-driver-name-index-2gpu.txt", []string{"compute_cap", "compute_mode", "driver_version", "name", "index"},
			summary{seq(2), []string{"NVIDIA TITAN V", "NVIDIA RTX 5880 Ada Generation"}, []string{"sm_70", "sm_89"}}},
		{"nvidia-smi-query-name-deviceid-noheader-h100nvl-1gpu.txt", []string{"name", "pci.device_id"},
			summary{IDs: seq(1), Names: []string{"NVIDIA H100 NVL"}}},
		// Wrong field list: the header does not match, no row has the right width.
		{"nvidia-smi-query-name-cc-h100-8gpu.txt", []string{"compute_cap"}, summary{}},
		{"nvidia-smi-error-nodriver.txt", []string{"name", "compute_cap"}, summary{}},
		{"nvidia-smi-error-nvml-mismatch.txt", []string{"name", "compute_cap"}, summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strings.Join(tt.fields, ","), func(t *testing.T) {
			got := summarize(NvidiaQueryDevices(ParseNvidiaSMIQuery(capture(t, tt.file), tt.fields)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
	// The noheader form of the brief's command: one compute capability per line.
	rows := ParseNvidiaSMIQuery("9.0\n9.0\n", []string{"compute_cap"})
	if len(rows) != 2 || ComputeCapArch(rows[1]["compute_cap"]) != "sm_90" {
		t.Errorf("noheader rows = %v", rows)
	}
}

func TestComputeCapArch(t *testing.T) {
	for in, want := range map[string]string{
		"9.0": "sm_90", "8.9": "sm_89", "7.0": "sm_70", "10.0": "sm_100", "12.0": "sm_120", " 8.0 ": "sm_80",
		"[N/A]": "", "": "", "9": "", "9.0.1": "", "x.y": "", "123.0": "", "-1.0": "",
	} {
		if got := ComputeCapArch(in); got != want {
			t.Errorf("ComputeCapArch(%q) = %q, want %q", in, got, want)
		}
	}
}
