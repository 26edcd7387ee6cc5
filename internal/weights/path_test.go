package weights

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	if got, want := DefaultPath("/repo", "gfx942", "3"), "/repo/ci-weights/test_weights.gfx942.l3.txt"; got != want {
		t.Errorf("DefaultPath = %q, want %q", got, want)
	}
	for _, ok := range []string{"1", "99", "l2"} {
		if err := CheckLevel(ok); err != nil {
			t.Errorf("CheckLevel(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../1", "1/2", "a b", ".", "..", `1\2`, "1\n"} {
		if err := CheckLevel(bad); err == nil {
			t.Errorf("CheckLevel(%q): no error", bad)
		}
	}
}

func TestArchesAt(t *testing.T) {
	root := t.TempDir()
	if got, err := ArchesAt(root, "3"); err != nil || got != nil {
		t.Fatalf("no ci-weights: %q, %v", got, err)
	}
	dir := filepath.Join(root, "ci-weights")
	for _, name := range []string{"test_weights.gfx950.l3.txt", "test_weights.gfx942.l3.txt", "test_weights.gfx942.l1.txt",
		"test_weights..l3.txt", "test_weights.sm_90.l33.txt", "other.gfx90a.l3.txt", "test_weights.gfx90a.l3.txt.bak"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "test_weights.dir.l3.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ArchesAt(root, "3")
	if err != nil || !slices.Equal(got, []string{"gfx942", "gfx950"}) {
		t.Errorf("ArchesAt = %q, %v; want gfx942 and gfx950", got, err)
	}
}
