package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/optname"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string // substring; "" = no error
	}{
		{in: "4", want: Spec{Count: 4}},
		{in: " 8 ", want: Spec{Count: 8}},
		{in: "0,1,2,3", want: Spec{IDs: []string{"0", "1", "2", "3"}}},
		{in: "3,1", want: Spec{IDs: []string{"3", "1"}}},
		{in: "0, 1 ,2", want: Spec{IDs: []string{"0", "1", "2"}}},
		{in: "3,", want: Spec{IDs: []string{"3"}}},
		{in: "01,2", want: Spec{IDs: []string{"1", "2"}}},
		{in: "GPU-8d1457e2c20f59d2", want: Spec{IDs: []string{"GPU-8d1457e2c20f59d2"}}},
		{in: "MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a,1", want: Spec{IDs: []string{"MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "1"}}},
		{in: "MIG-GPU-513536b6-7d19-9063-b049-1e69664bb298/1/0", want: Spec{IDs: []string{"MIG-GPU-513536b6-7d19-9063-b049-1e69664bb298/1/0"}}},
		{in: "1024", want: Spec{Count: 1024}},
		{in: "0", wantErr: "--gpus 0: a count must be at least 1"},
		{in: "0,,1", wantErr: "empty id between commas"},
		{in: "x", wantErr: `"x" is not a GPU id`},
		{in: "-1", wantErr: `"-1" is not a GPU id`},
		{in: "0,0", wantErr: "names GPU 0 twice"},
		{in: "0,00", wantErr: "names GPU 0 twice"},
		{in: ",", wantErr: "names no GPU"},
		{in: " ", wantErr: "names no GPU"},
		{in: "1025", wantErr: "more than 1024 GPUs"},
		{in: "99999999999999999999", wantErr: "more than 1024 GPUs"},
		{in: "0,99999999999", wantErr: "is not a GPU index"},
		{in: "0;1", wantErr: `"0;1" is not a GPU id`},
		{in: "GPU-../../etc", wantErr: "is not a GPU id"},
		{in: "0,1\n2", wantErr: `"1\n2" is not a GPU id`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpecAs(optname.CLI, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBadPool) {
					t.Fatalf("err = %v, want ErrBadPool containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); err != nil || diff != "" {
				t.Errorf("err %v, -want +got:\n%s", err, diff)
			}
		})
	}
}

func TestParseIDsNamesTheVariable(t *testing.T) {
	_, err := ParseIDs("HIP_VISIBLE_DEVICES", ",")
	want := `HIP_VISIBLE_DEVICES="," names no GPU: list GPU ids like 0,1,2,3 or unset it`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	_, err = ParseIDs("--gpus", "0,0")
	want = `--gpus "0,0" names GPU 0 twice: list each GPU once`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestMaskLen(t *testing.T) {
	for in, want := range map[string]int{"": -1, " ": -1, "0": 1, "2,3": 2, "0,GPU-8d1457e2c20f59d2": 2, "1,,2": 2} {
		n, ok := maskLen(in)
		if !ok {
			n = -1
		}
		if n != want {
			t.Errorf("maskLen(%q) = %d, want %d", in, n, want)
		}
	}
}
