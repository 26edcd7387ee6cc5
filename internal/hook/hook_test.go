package hook

import (
	"sort"
	"strings"
	"testing"
)

func sorted(e Env) string {
	s := append([]string(nil), e...)
	sort.Strings(s)
	return strings.Join(s, " ")
}

func TestEnvBuilders(t *testing.T) {
	n := Default()
	// An outer environment that still has switches set must not leak them into items.
	base := Env{"PATH=/bin", "TEST_FILTER=stale", "TE_CI_LIST_ITEMS=1", "TEST_LEVEL=7"}
	tests := []struct {
		name string
		got  Env
		want string
	}{
		{"queue listing", n.ListEnv(base, "3", SingleGPU, false), "PATH=/bin TEST_LEVEL=3 TEST_MGPU= TEST_SGPU=1 TE_CI_LIST_ITEMS=1"},
		{"census listing", n.ListEnv(base, "3", SingleGPU, true), "PATH=/bin TEST_LEVEL=3 TEST_MGPU= TEST_SGPU=1 TE_CI_LIST_ITEMS=1 TE_CI_SKIP_CHECK_SUPPORTED=1"},
		{"setup", n.SetupEnv(base, "1", SingleGPU), "PATH=/bin TEST_LEVEL=1 TEST_MGPU= TEST_SGPU=1 TE_CI_SETUP_ONLY=1"},
		{"list item", n.ItemEnv(base, "1", SingleGPU, "a b/../c", false), "PATH=/bin TEST_FILTER=a[[:space:]]b/../c TEST_LEVEL=1 TEST_MGPU= TEST_SGPU=1 TE_CI_SKIP_SETUP=1"},
		{"opaque item", n.ItemEnv(base, "1", SingleGPU, "", true), "PATH=/bin TEST_LEVEL=1 TEST_MGPU= TEST_SGPU=1"},
		// A multi-GPU suite: the other switch everywhere, whatever the outer
		// environment set (TE's mGPU step exports TEST_MGPU=1 TEST_SGPU=0).
		{"mgpu queue listing", n.ListEnv(append(base, "TEST_SGPU=0", "TEST_MGPU=1"), "3", MultiGPU, false), "PATH=/bin TEST_LEVEL=3 TEST_MGPU=1 TEST_SGPU= TE_CI_LIST_ITEMS=1"},
		{"mgpu census listing", n.ListEnv(base, "3", MultiGPU, true), "PATH=/bin TEST_LEVEL=3 TEST_MGPU=1 TEST_SGPU= TE_CI_LIST_ITEMS=1 TE_CI_SKIP_CHECK_SUPPORTED=1"},
		{"mgpu setup", n.SetupEnv(base, "1", MultiGPU), "PATH=/bin TEST_LEVEL=1 TEST_MGPU=1 TEST_SGPU= TE_CI_SETUP_ONLY=1"},
		{"mgpu list item", n.ItemEnv(base, "1", MultiGPU, "d", false), "PATH=/bin TEST_FILTER=d TEST_LEVEL=1 TEST_MGPU=1 TEST_SGPU= TE_CI_SKIP_SETUP=1"},
		{"mgpu opaque item", n.ItemEnv(base, "1", MultiGPU, "", true), "PATH=/bin TEST_LEVEL=1 TEST_MGPU=1 TEST_SGPU="},
		{"mgpu verify", n.VerifyEnv(base, "1", MultiGPU, "d", true), "PATH=/bin TEST_FILTER=d TEST_LEVEL=1 TEST_MGPU=1 TEST_SGPU= TE_CI_LIST_ITEMS=1 TE_CI_SKIP_CHECK_SUPPORTED=1"},
		{"adapter command", n.AdapterEnv(base, "2"), "PATH=/bin TEST_LEVEL=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sorted(tt.got); got != tt.want {
				t.Errorf("env = %s\nwant  %s", got, tt.want)
			}
		})
	}
}

func TestEnvGetWith(t *testing.T) {
	e := Env{"A=1", "B=x=y", "A=2"}
	if v, ok := e.Get("A"); !ok || v != "2" {
		t.Errorf("Get(A) = %q,%v", v, ok)
	}
	if v, _ := e.Get("B"); v != "x=y" {
		t.Errorf("Get(B) = %q", v)
	}
	if _, ok := e.Get("C"); ok {
		t.Error("Get(C) found")
	}
	got := e.With("A=3", "B", "D=")
	if sorted(got) != "A=3 D=" {
		t.Errorf("With = %v", got)
	}
	if len(e) != 3 {
		t.Error("With changed its receiver")
	}
}

func TestRename(t *testing.T) {
	n := Default()
	if err := n.Set("filter=MY_FILTER"); err != nil {
		t.Fatal(err)
	}
	if err := n.Set("pin = CUDA_VISIBLE_DEVICES"); err != nil {
		t.Fatal(err)
	}
	if n.Filter != "MY_FILTER" || n.Pin != "CUDA_VISIBLE_DEVICES" {
		t.Errorf("%+v", n)
	}
	for _, bad := range []string{"nokey", "bogus=X", "filter=1X", "filter=A-B", "filter=",
		"pin=PATH", "filter=PATH", "pin=HOME", "level=SHELL", "filter=IFS", "pin=LD_PRELOAD", "junit-prefix=LD_LIBRARY_PATH",
		"sgpu=BASH_ENV", "mgpu=ENV", "filter=PYTHONPATH", "pin=LC_ALL", "skip-setup=BASH_FUNC_x%%", "item-marker=GLIBC_TUNABLES"} {
		if err := n.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
	if n.Filter != "MY_FILTER" || n.Pin != "CUDA_VISIBLE_DEVICES" {
		t.Errorf("a refused Set changed the names: %+v", n)
	}
	err := n.Set("pin=PATH")
	if want := `hook variable "pin=PATH": PATH is the command search path: an item's GPU id, tag or switch there would break the commands it runs; name a variable of the suite's own (e.g. MY_PIN)`; err == nil || err.Error() != want {
		t.Errorf("message %v, want %s", err, want)
	}
	// Look-alikes that are not the reserved variables are fine.
	for _, ok := range []string{"pin=ROCR_VISIBLE_DEVICES", "filter=MY_PATH", "level=PATHS", "filter=LDX"} {
		m := Default()
		if err := m.Set(ok); err != nil {
			t.Errorf("Set(%q): %v", ok, err)
		}
	}
	if got := n.ItemEnv(nil, "1", SingleGPU, "t", false); !strings.Contains(sorted(got), "MY_FILTER=t") {
		t.Errorf("renamed filter not used: %v", got)
	}
}

// Two of the contract's variables never share a name: the pin with the filter (an
// item would get its GPU id as its filter), a switch with another, a hook variable
// with a vendor's pin variable when none is set.
func TestClashes(t *testing.T) {
	pins := []string{"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}
	tests := []struct {
		name    string
		renames []string
		want    []string // Clash.Error() of each
	}{
		{"defaults", nil, nil},
		{"pin renamed apart", []string{"pin=MY_GPU"}, nil},
		{"pin as the filter", []string{"pin=TEST_FILTER"}, []string{"TEST_FILTER is both the filter and the pin variable"}},
		{"pin as the level", []string{"pin=TEST_LEVEL"}, []string{"TEST_LEVEL is both the level and the pin variable"}},
		{"filter as the listing switch", []string{"filter=TE_CI_LIST_ITEMS"}, []string{"TE_CI_LIST_ITEMS is both the filter and the list-items variable"}},
		{"filter as a vendor pin", []string{"filter=HIP_VISIBLE_DEVICES"}, []string{"HIP_VISIBLE_DEVICES is both the filter and the pin variable"}},
		{"item marker is no variable", []string{"item-marker=TEST_FILTER"}, nil},
		{"two clashes", []string{"sgpu=X", "mgpu=X", "level=X"}, []string{"X is both the level and the mgpu variable", "X is both the level and the sgpu variable"}},
		// The variables sgpu-queue sets that no option renames.
		{"pin as the port", []string{"pin=PET_MASTER_PORT"}, []string{"PET_MASTER_PORT is both the pin and the port variable"}},
		{"level as the port", []string{"level=PET_MASTER_PORT"}, []string{"PET_MASTER_PORT is both the level and the port variable"}},
		{"prefix as a cmd item's file", []string{"junit-prefix=SGPU_JUNIT_XML"}, []string{"SGPU_JUNIT_XML is both the junit-prefix and the junit-file variable"}},
		{"level as the other vendor's pin", []string{"pin=HIP_VISIBLE_DEVICES", "level=CUDA_VISIBLE_DEVICES"},
			[]string{"CUDA_VISIBLE_DEVICES is both the level and the also-pin variable"}},
		{"a pin of its own sets no vendor's", []string{"pin=MY_GPU", "level=CUDA_VISIBLE_DEVICES"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Default()
			for _, r := range tt.renames {
				if err := n.Set(r); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, c := range n.Clashes(pins...) {
				got = append(got, c.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("clashes %q, want %q", got, tt.want)
			}
		})
	}
}
