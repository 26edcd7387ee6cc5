package gpu

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/rocm/sgpu-queue/internal/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/executor"
)

var update = flag.Bool("update", false, "rewrite testdata/detect.golden")

// fake names a fake vendor tool (testdata/fakes/<tool>) and the variables that feed it
// real captures (file names under testdata/) or exit codes.
type fake struct {
	tool string
	vars map[string]string // FAKE_* variable → capture file name, or a value for *_RC / *_COLS
}

func rocminfo(file string) fake { return fake{"rocminfo", map[string]string{"FAKE_ROCMINFO": file}} }

func rocminfoRC(file, rc string) fake {
	return fake{"rocminfo", map[string]string{"FAKE_ROCMINFO": file, "FAKE_ROCMINFO_RC": rc}}
}

// scenario is one Detect call through the real executor.Local, with the fakes on PATH
// and every other vendor tool absent.
type scenario struct {
	name  string
	fakes []fake
	env   []string // the items' environment besides PATH and the FAKE_* variables
	opts  Options  // Explicit, Arch, PinVar

	wantIDs    []string
	wantSource string
	wantVendor Vendor
	wantArch   string
	wantFrom   string // ArchSource
	wantPin    string
	wantErr    error  // ErrNoGPU or ErrBadPool
	wantMsg    string // substring of the error
	wantRan    []string
}

var scenarios = []scenario{
	// --- detection, AMD ---
	{name: "rocminfo MI300X x4", fakes: []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(4), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible,
		wantRan: []string{"rocminfo"}},
	{name: "rocminfo MI300X x8", fakes: []fake{rocminfo("rocminfo-mi300x-8gpu.txt")},
		wantIDs: seq(8), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "rocminfo MI300A APU: CPU agents named MI300A do not count", fakes: []fake{rocminfo("rocminfo-mi300a-4apu.txt")},
		wantIDs: seq(4), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "rocminfo MI210 x2", fakes: []fake{rocminfo("rocminfo-mi210-2gpu.txt")},
		wantIDs: seq(2), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx90a", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "rocminfo MI250X one GCD under a Slurm binding", fakes: []fake{rocminfo("rocminfo-mi250x-1gcd-slurm.txt")},
		env:     []string{"ROCR_VISIBLE_DEVICES=5"},
		wantIDs: seq(1), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx90a", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "rocminfo error falls through to amd-smi, arch from rocm-smi",
		fakes: []fake{
			rocminfoRC("rocminfo-error-kfd-einval-mi300x-container.txt", "1"),
			{"amd-smi", map[string]string{"FAKE_AMDSMI_LIST": "amd-smi-list-mi210-2gpu.txt"}},
			{"rocm-smi", map[string]string{"FAKE_ROCMSMI": "rocm-smi-mi210-2gpu.txt", "FAKE_ROCMSMI_PRODUCTNAME": "rocm-smi-showproductname-mi210-2gpu.txt"}},
		},
		wantIDs: seq(2), wantSource: "amd-smi", wantVendor: AMD, wantArch: "gfx90a", wantFrom: "rocm-smi", wantPin: HIPVisible,
		wantRan: []string{"rocminfo", "amd-smi list", "amd-smi static --asic", "rocm-smi --showproductname"}},
	{name: "rocminfo without GPU agent and amd-smi error fall through to rocm-smi DPX",
		fakes: []fake{
			rocminfo("rocminfo-mi300a-4apu-nogpu.txt"),
			{"amd-smi", map[string]string{"FAKE_AMDSMI_LIST": "amd-smi-error-nogpu-rocm624.txt", "FAKE_AMDSMI_RC": "255"}},
			{"rocm-smi", map[string]string{"FAKE_ROCMSMI": "rocm-smi-mi300x-8gpu-dpx.txt"}},
		},
		wantIDs: seq(16), wantSource: "rocm-smi", wantVendor: AMD, wantPin: HIPVisible},
	{name: "amd-smi ignores the ROCR mask: capped at its length",
		env:     []string{"ROCR_VISIBLE_DEVICES=1"},
		fakes:   []fake{{"amd-smi", map[string]string{"FAKE_AMDSMI_LIST": "amd-smi-list-mi210-2gpu.txt", "FAKE_AMDSMI_STATIC": "amd-smi-static-asic-mi308x-1gpu.txt"}}},
		wantIDs: seq(1), wantSource: "amd-smi", wantVendor: AMD, wantArch: "gfx942", wantFrom: "amd-smi", wantPin: HIPVisible},
	{name: "rocm-smi DPX under a ROCR mask of 4",
		env:     []string{"ROCR_VISIBLE_DEVICES=0,1,2,3"},
		fakes:   []fake{{"rocm-smi", map[string]string{"FAKE_ROCMSMI": "rocm-smi-mi300x-8gpu-dpx.txt"}}},
		wantIDs: seq(4), wantSource: "rocm-smi", wantVendor: AMD, wantPin: HIPVisible},
	{name: "rocm-smi older table with names",
		fakes:   []fake{{"rocm-smi", map[string]string{"FAKE_ROCMSMI": "rocm-smi-mi300x-4gpu.txt"}}},
		wantIDs: seq(4), wantSource: "rocm-smi", wantVendor: AMD, wantPin: HIPVisible},

	// --- detection, NVIDIA ---
	{name: "nvidia-smi H100 x8",
		fakes: []fake{
			rocminfoRC("rocminfo-error-rock-not-loaded-rocm35.txt", "1"),
			{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-L-h100-8gpu.txt", "FAKE_NVSMI_QUERY": "nvidia-smi-query-name-cc-h100-8gpu.txt"}},
		},
		wantIDs: seq(8), wantSource: "nvidia-smi", wantVendor: NVIDIA, wantArch: "sm_90", wantFrom: "nvidia-smi", wantPin: CUDAVisible,
		wantRan: []string{"rocminfo", "nvidia-smi -L", "nvidia-smi --query-gpu=name,compute_cap --format=csv"}},
	{name: "nvidia-smi A100 with MIG: MIG devices by UUID",
		fakes: []fake{{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-L-a100-4gpu-mig.txt"}}},
		wantIDs: []string{"MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "MIG-a45882f0-9215-5733-a0c1-49286ab31cb5",
			"MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe", "MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b", "1", "2", "3"},
		wantSource: "nvidia-smi", wantVendor: NVIDIA, wantPin: CUDAVisible},
	{name: "nvidia-smi mixed TITAN V and RTX 5880: first arch, warned",
		fakes: []fake{{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-L-titanv-rtx5880-2gpu.txt",
			"FAKE_NVSMI_QUERY": "nvidia-smi-query-cc-mode-driver-name-index-2gpu.txt", "FAKE_NVSMI_QUERY_COLS": "4,1"}}},
		wantIDs: seq(2), wantSource: "nvidia-smi", wantVendor: NVIDIA, wantArch: "sm_70", wantFrom: "nvidia-smi", wantPin: CUDAVisible},

	// --- precedence ---
	{name: "--gpus list beats the variables and detection",
		env:     []string{"HIP_VISIBLE_DEVICES=0,1,2,3"},
		opts:    Options{Explicit: "3,1"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: []string{"3", "1"}, wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "--gpus count without a variable",
		opts:    Options{Explicit: "2"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(2), wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "--gpus count takes the first N of HIP_VISIBLE_DEVICES",
		env:     []string{"HIP_VISIBLE_DEVICES=2,3,5", "ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"},
		opts:    Options{Explicit: "2"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-8gpu.txt")},
		wantIDs: []string{"2", "3"}, wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "--gpus count takes the first N of CUDA_VISIBLE_DEVICES",
		env:     []string{"CUDA_VISIBLE_DEVICES=6,7,4"},
		opts:    Options{Explicit: "3"},
		fakes:   []fake{{"nvidia-smi", map[string]string{"FAKE_NVSMI_QUERY": "nvidia-smi-query-name-cc-h100-8gpu.txt"}}},
		wantIDs: []string{"6", "7", "4"}, wantSource: "--gpus", wantVendor: NVIDIA, wantArch: "sm_90", wantFrom: "nvidia-smi", wantPin: CUDAVisible},
	{name: "HIP_VISIBLE_DEVICES beats detection; ids stay logical inside ROCR",
		env:     []string{"HIP_VISIBLE_DEVICES=1,0", "ROCR_VISIBLE_DEVICES=4,5"},
		fakes:   []fake{rocminfo("rocminfo-mi210-2gpu.txt")},
		wantIDs: []string{"1", "0"}, wantSource: HIPVisible, wantVendor: AMD, wantArch: "gfx90a", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "HIP_VISIBLE_DEVICES beats CUDA_VISIBLE_DEVICES when they agree",
		env:     []string{"HIP_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=0, 1"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(2), wantSource: HIPVisible, wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "CUDA_VISIBLE_DEVICES on NVIDIA",
		env: []string{"CUDA_VISIBLE_DEVICES=4,5,6,7"},
		fakes: []fake{{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-L-h100-8gpu.txt",
			"FAKE_NVSMI_QUERY": "nvidia-smi-query-name-cc-h100-8gpu.txt"}}},
		wantIDs: []string{"4", "5", "6", "7"}, wantSource: CUDAVisible, wantVendor: NVIDIA, wantArch: "sm_90", wantFrom: "nvidia-smi", wantPin: CUDAVisible,
		wantRan: []string{"nvidia-smi --query-gpu=name,compute_cap --format=csv"}},
	{name: "CUDA_VISIBLE_DEVICES on AMD pins with HIP (HIP prefers it)",
		env:     []string{"CUDA_VISIBLE_DEVICES=1"},
		fakes:   []fake{rocminfo("rocminfo-mi210-2gpu.txt")},
		wantIDs: []string{"1"}, wantSource: CUDAVisible, wantVendor: AMD, wantArch: "gfx90a", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "empty HIP_VISIBLE_DEVICES is unset",
		env:     []string{"HIP_VISIBLE_DEVICES="},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(4), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},

	// --- arch ---
	{name: "--arch wins and no tool runs for it",
		opts:    Options{Explicit: "0,1", Arch: "gfx950"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(2), wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx950", wantFrom: "--arch", wantPin: HIPVisible,
		wantRan: []string{}},
	{name: "--arch overrides a detected arch, warned",
		opts:    Options{Arch: "gfx950"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(4), wantSource: "rocminfo", wantVendor: AMD, wantArch: "gfx950", wantFrom: "--arch", wantPin: HIPVisible},
	{name: "arch from amd-smi static: MI350X",
		opts:    Options{Explicit: "8"},
		fakes:   []fake{{"amd-smi", map[string]string{"FAKE_AMDSMI_STATIC": "amd-smi-static-mi350x-partial.txt"}}},
		wantIDs: seq(8), wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx950", wantFrom: "amd-smi", wantPin: HIPVisible},
	{name: "no tool: --gpus with arch unknown, no error",
		opts:    Options{Explicit: "4"},
		wantIDs: seq(4), wantSource: "--gpus", wantVendor: Unknown, wantPin: HIPVisible,
		wantRan: []string{}},
	{name: "no tool: CUDA_VISIBLE_DEVICES pins with itself",
		env:     []string{"CUDA_VISIBLE_DEVICES=0,1"},
		wantIDs: seq(2), wantSource: CUDAVisible, wantVendor: Unknown, wantPin: CUDAVisible},
	{name: "no tool: --arch sm_90 says NVIDIA",
		opts:    Options{Explicit: "2", Arch: "sm_90"},
		wantIDs: seq(2), wantSource: "--gpus", wantVendor: NVIDIA, wantArch: "sm_90", wantFrom: "--arch", wantPin: CUDAVisible},
	{name: "configured pin variable",
		opts:    Options{PinVar: "ROCR_VISIBLE_DEVICES"},
		env:     []string{"HIP_VISIBLE_DEVICES=0,1"},
		fakes:   []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(2), wantSource: HIPVisible, wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: "ROCR_VISIBLE_DEVICES"},

	// --- errors ---
	{name: "all tools absent", wantErr: ErrNoGPU, wantMsg: "rocminfo: not found; amd-smi: not found; rocm-smi: not found; nvidia-smi: not found"},
	{name: "every tool says no GPU",
		env: []string{"ROCR_VISIBLE_DEVICES=7"},
		fakes: []fake{
			rocminfoRC("rocminfo-error-kfd-einval-mi300x-container.txt", "1"),
			{"amd-smi", map[string]string{"FAKE_AMDSMI_LIST": "amd-smi-version-error-nodriver-wsl-rocm702.txt"}},
			{"rocm-smi", map[string]string{"FAKE_ROCMSMI": "rocm-smi-nogpu-rocm624.txt"}},
			{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-error-nodriver-modprobe.txt", "FAKE_NVSMI_RC": "9"}},
		},
		wantErr: ErrNoGPU, wantMsg: "rocminfo: Unable to open /dev/kfd read-write: Invalid argument (exit 1)"},
	{name: "rocminfo with only CPU agents", fakes: []fake{rocminfo("rocminfo-mi300a-4apu-nogpu.txt")},
		wantErr: ErrNoGPU, wantMsg: "rocminfo: lists no GPU agent;"},
	{name: "nvidia-smi with no devices",
		fakes:   []fake{{"nvidia-smi", map[string]string{"FAKE_NVSMI_L": "nvidia-smi-error-nodevices.txt", "FAKE_NVSMI_RC": "6"}}},
		wantErr: ErrNoGPU, wantMsg: "nvidia-smi: No devices were found (exit 6)"},
	{name: "malformed --gpus", opts: Options{Explicit: "0,,1"}, wantErr: ErrBadPool, wantMsg: "empty id between commas"},
	{name: "--gpus 0", opts: Options{Explicit: "0"}, wantErr: ErrBadPool, wantMsg: "a count must be at least 1"},
	{name: "HIP_VISIBLE_DEVICES=,", env: []string{"HIP_VISIBLE_DEVICES=,"}, wantErr: ErrBadPool,
		wantMsg: `HIP_VISIBLE_DEVICES="," names no GPU`},
	{name: "duplicate ids in CUDA_VISIBLE_DEVICES", env: []string{"CUDA_VISIBLE_DEVICES=0,0"}, wantErr: ErrBadPool,
		wantMsg: "names GPU 0 twice"},
	{name: "malformed HIP_VISIBLE_DEVICES under a --gpus list: warned",
		env: []string{"HIP_VISIBLE_DEVICES=-1"}, opts: Options{Explicit: "0,1"}, fakes: []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(2), wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "malformed HIP_VISIBLE_DEVICES under a --gpus count", env: []string{"HIP_VISIBLE_DEVICES=-1"}, opts: Options{Explicit: "2"},
		wantErr: ErrBadPool, wantMsg: `HIP_VISIBLE_DEVICES="-1": "-1" is not a GPU id`},
	{name: "count larger than the visible list", env: []string{"HIP_VISIBLE_DEVICES=0,1"}, opts: Options{Explicit: "4"},
		wantErr: ErrBadPool, wantMsg: "--gpus 4: HIP_VISIBLE_DEVICES=0,1 lists only 2 GPUs"},
	{name: "HIP and CUDA disagree", env: []string{"HIP_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=2,3"},
		wantErr: ErrBadPool, wantMsg: "name different GPUs"},
	{name: "HIP and CUDA disagree, --gpus count cannot choose", env: []string{"HIP_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=2,3"},
		opts: Options{Explicit: "1"}, wantErr: ErrBadPool, wantMsg: "give --gpus a list of ids"},
	{name: "HIP and CUDA disagree, --gpus list decides", env: []string{"HIP_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=2,3"},
		opts: Options{Explicit: "0,1,2,3"}, fakes: []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantIDs: seq(4), wantSource: "--gpus", wantVendor: AMD, wantArch: "gfx942", wantFrom: "rocminfo", wantPin: HIPVisible},
	{name: "id beyond the ROCR mask", env: []string{"HIP_VISIBLE_DEVICES=0,2", "ROCR_VISIBLE_DEVICES=4,5"},
		wantErr: ErrBadPool, wantMsg: "GPU 2 is beyond the 2 GPUs that ROCR_VISIBLE_DEVICES=4,5 leaves visible"},
	{name: "count beyond the ROCR mask", env: []string{"ROCR_VISIBLE_DEVICES=4,5"}, opts: Options{Explicit: "4"},
		wantErr: ErrBadPool, wantMsg: "--gpus 4: GPU 2 is beyond"},
	{name: "id beyond what rocminfo lists", opts: Options{Explicit: "0,5,"}, fakes: []fake{rocminfo("rocminfo-mi300x-4gpu.txt")},
		wantErr: ErrBadPool, wantMsg: "GPU 5 does not exist where the items run: rocminfo lists 4 GPUs"},
	{name: "bad --arch", opts: Options{Explicit: "1", Arch: "../gfx942"}, wantErr: ErrBadPool, wantMsg: `--arch "../gfx942"`},
	{name: "bad pin variable", opts: Options{Explicit: "1", PinVar: "HIP VISIBLE"}, wantErr: ErrBadPool, wantMsg: "not an environment variable name"},
}

func TestDetect(t *testing.T) {
	fakes, err := filepath.Abs(filepath.Join("testdata", "fakes"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			p, ran, err := runScenario(t, fakes, sc)
			out.WriteString(goldenEntry(sc.name, p, err))
			if sc.wantErr != nil {
				if !errors.Is(err, sc.wantErr) || !strings.Contains(err.Error(), sc.wantMsg) {
					t.Fatalf("err = %v, want %v containing %q", err, sc.wantErr, sc.wantMsg)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			got := []any{p.IDs, p.Source, p.Vendor, p.Arch, p.ArchSource, p.PinVar}
			want := []any{sc.wantIDs, sc.wantSource, sc.wantVendor, sc.wantArch, sc.wantFrom, sc.wantPin}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("IDs, Source, Vendor, Arch, ArchSource, PinVar (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sc.wantRan, ran); sc.wantRan != nil && diff != "" {
				t.Errorf("tools ran (-want +got):\n%s", diff)
			}
		})
	}
	golden.Check(t, filepath.Join("testdata", "detect.golden"), []byte(out.String()), *update)
}

// runScenario puts the scenario's fakes in a fresh directory at the head of the tools'
// PATH (executor.Local looks a tool up on the PATH of the environment it runs in), and
// gives the tools the FAKE_* variables and the system directories for cat and awk. The
// process PATH is that directory alone, so nothing else can be found either way.
func runScenario(t *testing.T, fakes string, sc scenario) (Pool, []string, error) {
	t.Helper()
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "ran.log")
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "FAKE_LOG=" + log}
	for _, f := range sc.fakes {
		if err := os.Symlink(filepath.Join(fakes, f.tool), filepath.Join(bin, f.tool)); err != nil {
			t.Fatal(err)
		}
		for k, v := range f.vars {
			if !strings.HasSuffix(k, "_RC") && !strings.HasSuffix(k, "_COLS") {
				abs, err := filepath.Abs(filepath.Join("testdata", v))
				if err != nil {
					t.Fatal(err)
				}
				v = abs
			}
			env = append(env, k+"="+v)
		}
	}
	t.Setenv("PATH", bin)
	o := sc.opts
	o.Env = append(env, sc.env...)
	o.Exec = executor.Local{}
	p, err := Detect(context.Background(), o)
	ran := []string{}
	if b, rerr := os.ReadFile(log); rerr == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			ran = append(ran, strings.TrimSpace(l))
		}
	}
	return p, ran, err
}

func goldenEntry(name string, p Pool, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s\n", name)
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "%s\n", p.Describe())
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, r := range p.Tried {
		fmt.Fprintf(&b, "tried: %s\n", r)
	}
	return b.String()
}

// TestFakebinRocminfo runs the reusable fake in testdata/fakebin, through a symlink as
// another package's test would, and checks it replays the MI300X capture.
func TestFakebinRocminfo(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("testdata", "fakebin", "rocminfo"))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(src, filepath.Join(bin, "rocminfo")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	p, err := Detect(context.Background(), Options{Env: []string{"PATH=" + bin + ":/usr/bin:/bin"}, Exec: executor.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	want := "4 GPUs [0 1 2 3] from rocminfo (AMD Instinct MI300X), arch gfx942 from rocminfo, pinned with HIP_VISIBLE_DEVICES"
	if got := p.Describe(); got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

// writeTool puts a small script named name in dir (for behaviours no capture shows:
// a hang, a shell that cannot find the tool).
func writeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestDetectToolEdgeCases(t *testing.T) {
	bin := t.TempDir()
	// A hung driver: rocminfo never returns. The per-tool timeout ends it and
	// detection goes on to the next tool.
	writeTool(t, bin, "rocminfo", "exec sleep 60")
	// A container shell's "command not found" is exit 127: the tool is absent.
	writeTool(t, bin, "amd-smi", "echo 'sh: amd-smi: not found' >&2; exit 127")
	fakes, _ := filepath.Abs(filepath.Join("testdata", "fakes"))
	if err := os.Symlink(filepath.Join(fakes, "rocm-smi"), filepath.Join(bin, "rocm-smi")); err != nil {
		t.Fatal(err)
	}
	table, _ := filepath.Abs(filepath.Join("testdata", "rocm-smi-mi300x-8gpu.txt"))
	t.Setenv("PATH", bin)
	p, err := Detect(context.Background(), Options{
		Env:         []string{"PATH=" + bin + ":/usr/bin:/bin", "FAKE_ROCMSMI=" + table},
		Exec:        executor.Local{Grace: 100 * time.Millisecond},
		ToolTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTried := []string{
		"rocminfo: timed out after 300ms",
		"amd-smi list: not found",
		"rocm-smi: 8 GPUs",
		"amd-smi static --asic: not found",
		"rocm-smi --showproductname: shows no GPU (exit 2)",
	}
	if diff := cmp.Diff(wantTried, p.Tried); diff != "" || p.Source != "rocm-smi" || len(p.IDs) != 8 {
		t.Errorf("Source %q, IDs %v, Tried (-want +got):\n%s", p.Source, p.IDs, diff)
	}
}

func TestDetectCancelled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Detect(ctx, Options{Exec: executor.Local{}})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoGPU) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDetectNeedsExecutor(t *testing.T) {
	if _, err := Detect(context.Background(), Options{Explicit: "2"}); err == nil {
		t.Error("Detect without an executor succeeded")
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		p    Pool
		want string
	}{
		{Pool{IDs: []string{"0", "1", "2", "3"}, Source: "rocminfo", Arch: "gfx942", ArchSource: "rocminfo", PinVar: HIPVisible,
			Names: []string{"AMD Instinct MI300X", "AMD Instinct MI300X"}},
			"4 GPUs [0 1 2 3] from rocminfo (AMD Instinct MI300X), arch gfx942 from rocminfo, pinned with HIP_VISIBLE_DEVICES"},
		{Pool{IDs: []string{"3"}, Source: "--gpus", PinVar: CUDAVisible},
			"1 GPU [3] from --gpus, arch unknown, pinned with CUDA_VISIBLE_DEVICES"},
		{Pool{IDs: []string{"2", "3"}, Source: "--gpus", Detail: "2 of HIP_VISIBLE_DEVICES=2,3,5", Arch: "gfx950", ArchSource: "--arch", PinVar: HIPVisible,
			Names: []string{"bad\x1b[31m\nname"}},
			"2 GPUs [2 3] from --gpus 2 of HIP_VISIBLE_DEVICES=2,3,5 (bad name), arch gfx950 from --arch, pinned with HIP_VISIBLE_DEVICES"},
	}
	for _, tt := range tests {
		if got := tt.p.Describe(); got != tt.want {
			t.Errorf("Describe() = %q, want %q", got, tt.want)
		}
	}
}
