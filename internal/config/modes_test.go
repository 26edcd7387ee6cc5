package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/golden"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		mode Mode
		want Options
	}{
		{"list", List, Options{}},
		{"opaque", Opaque, Options{}},
		{"list,gpus=2", List, Options{GPUs: 2}},
		{"list,gpus=all", List, Options{AllGPUs: true}},
		{"pytest", Pytest, Options{}},
		{"pytest,split=test,python=.venv/bin/python", Pytest, Options{Split: SplitTest, Python: ".venv/bin/python"}},
		{"pytest,split=file", Pytest, Options{Split: SplitFile}},
		{"ctest,split=base,gpus=1", CTest, Options{Split: SplitBase, GPUs: 1}},
		{"ctest,setup=cmake -GNinja -S tests/cpp -B tests/cpp/build && cmake --build tests/cpp/build,env=NVTE_USE_HIPBLASLT=1,env=EMPTY=",
			CTest, Options{Setup: "cmake -GNinja -S tests/cpp -B tests/cpp/build && cmake --build tests/cpp/build", Env: []string{"NVTE_USE_HIPBLASLT=1", "EMPTY="}}},
		{"ctest,env=A=x=y", CTest, Options{Env: []string{"A=x=y"}}},
		{"cmd,setup=make,gpus=1024", Cmd, Options{Setup: "make", GPUs: 1024}},
		{"opaque,env=A=1", Opaque, Options{Env: []string{"A=1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			mode, got, err := ParseMode(tt.in)
			if err != nil {
				t.Fatalf("ParseMode(%q): %v", tt.in, err)
			}
			if mode != tt.mode {
				t.Errorf("ParseMode(%q) mode %q, want %q", tt.in, mode, tt.mode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseMode(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The messages for bad mode fields are pinned in testdata/modes.golden
// (go test -run TestParseModeErrors -update rewrites it).
func TestParseModeErrors(t *testing.T) {
	bad := []string{
		"parallel", "", "LIST", ",gpus=2", "list,", "list,,gpus=2",
		"list,gpus=0", "list,gpus=-1", "list,gpus=02", "list,gpus=1.5", "list,gpus=1025", "list,gpus=", "list,gpus", "list,gpus=2,gpus=3",
		"list,split=test", "pytest,split=base", "ctest,split=file", "pytest,split=",
		"ctest,python=python3", "opaque,setup=make", "list,setup=make",
		"ctest,env=NAME", "ctest,env==1", "ctest,env=1A=x", "ctest,env=A-B=1", "ctest,env=A=1,B=2",
		"ctest,timeout=30", "ctest,Gpus=2", "pytest,python",
	}
	var b strings.Builder
	for _, in := range bad {
		_, got, err := ParseMode(in)
		if err == nil {
			t.Errorf("ParseMode(%q) = %+v, want an error", in, got)
			continue
		}
		fmt.Fprintf(&b, "%s\n\t%v\n", in, err)
	}
	golden.Check(t, "testdata/modes.golden", []byte(b.String()), *update)
}

// A mode field read from a shell-quoted config word: the two parsers together.
func TestModeFromQuotedLine(t *testing.T) {
	fields, err := SplitFields(`core-gemm core_gemm.log "ctest,split=base,env=NVTE_USE_ROCBLAS=1" --test-dir tests/cpp/build -R OperatorTest/GEMMTestSuite -E 'Test(.*XTN|.*XNT)'`)
	if err != nil {
		t.Fatal(err)
	}
	mode, m, err := ParseMode(fields[2])
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Split: SplitBase, Env: []string{"NVTE_USE_ROCBLAS=1"}}
	if mode != CTest {
		t.Errorf("mode %q", mode)
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("mode (-want +got):\n%s", diff)
	}
	if got := fields[len(fields)-1]; got != "Test(.*XTN|.*XNT)" {
		t.Errorf("last arg = %q", got)
	}
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"list", "list,gpus=2", "ctest,split=base,env=A=1,setup=make -C x", "pytest,python=.venv/bin/python,split=test", "cmd,,", "x,=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, field string) {
		mode, m, err := ParseMode(field)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseMode(%q): a one-line message wanted, got %q", field, err)
			}
			return
		}
		name, _, _ := strings.Cut(field, ",")
		if string(mode) != name || !slices.Contains(allModes, mode) {
			t.Fatalf("ParseMode(%q) mode = %q", field, mode)
		}
		if m.GPUs < 0 || m.GPUs > MaxGPUs || m.AllGPUs && m.GPUs != 0 {
			t.Fatalf("ParseMode(%q): gpus %d all=%v", field, m.GPUs, m.AllGPUs)
		}
		for _, e := range m.Env {
			if !strings.Contains(e, "=") || strings.Contains(e, ",") {
				t.Fatalf("ParseMode(%q): env %q", field, e)
			}
		}
	})
}
