package action

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tarOf packs entries (name → body; a body "->x" is a symlink to x) as the cache
// entry of a re-run state would hold them.
func tarOf(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range entries {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			h = &tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// The state packs the failed lists, their records and tests files and nothing else (a user's file
// beside them, a symlink), and unpacks to the same files.
func TestRerunStateRoundTrip(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ci-rerun")
	files := map[string]string{
		"sgpu/failed.gfx942.l3.tsv":         "torch\ttests.test_b\ncore\t\n",
		"sgpu/state.gfx942.l3.json":         "{\"version\": 1}\n",
		"mgpu/failed.gfx950.l1.tsv":         "",
		"sgpu/tests/torch.tests.test_b.txt": "tests/test_b.py::t2[a b]\n",
		"sgpu/tests/torch.a..b.txt":         "x\n",
	}
	for name, body := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(src, "sgpu", "notes.md"), []byte("a user's file"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(src, "sgpu", "tests", "evil.txt"))
	data, n, err := packRerun(src)
	if err != nil || n != len(files) {
		t.Fatalf("packed %d file(s) (err %v), want %d", n, err, len(files))
	}
	dst := filepath.Join(t.TempDir(), "ci-rerun")
	if got, err := unpackRerun(data, dst); err != nil || got != len(files) {
		t.Fatalf("unpacked %d (err %v)", got, err)
	}
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name))); err != nil || string(b) != body {
			t.Errorf("%s: %q (err %v), want %q", name, b, err, body)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "sgpu", "tests", "evil.txt")); err == nil {
		t.Error("a symlink travelled with the state")
	}
	if data, n, err := packRerun(filepath.Join(t.TempDir(), "none")); err != nil || n != 0 || len(data) == 0 {
		t.Errorf("no ci-rerun/: %d file(s), err %v; want none and no error", n, err)
	}
}

// A cache entry is outside input: one that would write anywhere but a state file
// under ci-rerun/ is refused whole, writing nothing.
func TestRerunStateHostileEntries(t *testing.T) {
	for _, name := range []string{"../failed.x.tsv", "../../etc/failed.x.tsv", "./sgpu/failed.x.tsv", "../tests/x.txt",
		"/sgpu/failed.x.tsv", "sgpu/run.sh", "sgpu/tests/../../x.txt", "sgpu/tests/sub/x.txt", "sgpu//failed.x.tsv"} {
		dst := filepath.Join(t.TempDir(), "ci-rerun")
		_, err := unpackRerun(tarOf(t, map[string]string{name: "x", "sgpu/failed.ok.tsv": "ok\t\n"}), dst)
		if err == nil || !strings.Contains(err.Error(), "is not a re-run state file") {
			t.Errorf("%q: err %v, want a refusal", name, err)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%q: a refused entry wrote %s", name, dst)
		}
	}
	if _, err := unpackRerun(tarOf(t, map[string]string{"sgpu/tests/x.txt": "->/etc/passwd"}), t.TempDir()); err == nil {
		t.Error("a symlink entry was taken")
	}
	if _, err := unpackRerun([]byte("not gzip"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a packed re-run state") {
		t.Errorf("garbage: err %v", err)
	}
}

// The restore never writes through a link a pull request committed into the
// workspace's ci-rerun/ (docs/reruns.md#links): ci-rerun itself, a queue folder, a
// tests folder or a file that is a symlink is refused, and what it aims at stays.
func TestRerunStateRestoreRefusesLinks(t *testing.T) {
	for _, at := range []string{"ci-rerun", "ci-rerun/sgpu", "ci-rerun/sgpu/tests", "ci-rerun/sgpu/failed.x.l1.tsv",
		"ci-rerun/sgpu/tests/torch.a.txt"} {
		t.Run(at, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			precious := filepath.Join(outside, "precious.txt")
			if err := os.WriteFile(precious, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(root, filepath.FromSlash(at))
			os.MkdirAll(filepath.Dir(link), 0o755)
			target := outside
			if strings.HasSuffix(at, ".tsv") || strings.HasSuffix(at, ".txt") {
				target = precious
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			data := tarOf(t, map[string]string{"sgpu/failed.x.l1.tsv": "torch\ta\n", "sgpu/tests/torch.a.txt": "t.py::a\n"})
			if _, err := unpackRerun(data, filepath.Join(root, "ci-rerun")); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
				t.Errorf("err %v, want a refusal of the link", err)
			}
			es, _ := os.ReadDir(outside)
			if b, _ := os.ReadFile(precious); len(es) != 1 || string(b) != "precious\n" {
				t.Errorf("written through the link: %d entries there, precious.txt %q", len(es), b)
			}
		})
	}
}
