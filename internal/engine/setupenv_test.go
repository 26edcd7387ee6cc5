package engine

import (
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/hook"
)

// A --setup-env variable that sgpu-queue sets for every setup is refused, the
// visible-devices variable set with a vendor's pin included; one it sets for items
// only (the port) is the setup's to have.
func TestSetupEnvProblems(t *testing.T) {
	hip := hook.Default()
	hip.Pin = "HIP_VISIBLE_DEVICES"
	for _, tt := range []struct {
		names hook.Names
		env   string
		want  string // "" = accepted
	}{
		{hook.Default(), "TE_CI_SKIP_CK_JIT=1", ""},
		{hook.Default(), "TEST_FILTER=x", "TEST_FILTER: sgpu-queue sets TEST_FILTER for every setup (the hook variable filter); give another name"},
		{hook.Default(), "CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES: sgpu-queue sets CUDA_VISIBLE_DEVICES for every setup (the hook variable pin)"},
		{hip, "CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES: sgpu-queue sets CUDA_VISIBLE_DEVICES for every setup (to its GPUs, with the pin " +
			"HIP_VISIBLE_DEVICES); give another name"},
		{hook.Default(), "PET_MASTER_PORT=1", ""},
	} {
		errs := SetupEnvProblems(tt.names, []string{tt.env})
		switch {
		case tt.want == "" && len(errs) != 0:
			t.Errorf("%s: %v, want it accepted", tt.env, errs)
		case tt.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.env, errs, tt.want)
		}
	}
}
