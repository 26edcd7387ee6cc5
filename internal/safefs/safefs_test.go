package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree makes root/ with an outside file and directory a link may aim at, and
// returns root and the outside directory.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "repo"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "precious.txt"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustFIFO(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// untouched fails when the outside directory holds anything but precious.txt as
// tree made it.
func untouched(t *testing.T, outside string) {
	t.Helper()
	es, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "precious.txt" {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("outside holds %v, want only precious.txt", names)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "precious.txt")); string(data) != "precious\n" {
		t.Errorf("precious.txt now holds %q", data)
	}
}

// refusal checks err is an *Error naming path as kind.
func refusal(t *testing.T, err error, path, kind string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a *safefs.Error", err, err)
	}
	if e.Path != path || e.Kind != kind {
		t.Errorf("refused %s as %q, want %s as %q", e.Path, e.Kind, path, kind)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, path+" is "+kind) || strings.Contains(msg, "\n") {
		t.Errorf("message %q: want one line starting with the path and what it is", msg)
	}
}

func TestWriteFileRefusesLinks(t *testing.T) {
	const link, fifo = "a symbolic link", "a named pipe (FIFO)"
	cases := []struct {
		name    string
		prepare func(t *testing.T, root, outside string)
		at      string // the path refused, relative to root
		kind    string
	}{
		{"file is a link to an outside file", func(t *testing.T, root, outside string) {
			mustSymlink(t, filepath.Join(outside, "precious.txt"), filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv"))
		}, "ci-rerun/sgpu/failed.x.l1.tsv", link},
		{"file is a relative link out", func(t *testing.T, root, outside string) {
			mustSymlink(t, "../../../outside/precious.txt", filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv"))
		}, "ci-rerun/sgpu/failed.x.l1.tsv", link},
		{"file is a dangling link", func(t *testing.T, root, outside string) {
			mustSymlink(t, filepath.Join(outside, "new.txt"), filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv"))
		}, "ci-rerun/sgpu/failed.x.l1.tsv", link},
		{"a directory on the way is a link", func(t *testing.T, root, outside string) {
			mustSymlink(t, outside, filepath.Join(root, "ci-rerun/sgpu"))
		}, "ci-rerun/sgpu", link},
		{"the top directory is a link", func(t *testing.T, root, outside string) {
			mustSymlink(t, outside, filepath.Join(root, "ci-rerun"))
		}, "ci-rerun", link},
		{"file is a FIFO", func(t *testing.T, root, outside string) {
			mustFIFO(t, filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv"))
		}, "ci-rerun/sgpu/failed.x.l1.tsv", fifo},
		{"file is a directory", func(t *testing.T, root, outside string) {
			os.MkdirAll(filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv"), 0o755)
		}, "ci-rerun/sgpu/failed.x.l1.tsv", "a directory"},
		{"a directory on the way is a file", func(t *testing.T, root, outside string) {
			os.MkdirAll(filepath.Join(root, "ci-rerun"), 0o755)
			os.WriteFile(filepath.Join(root, "ci-rerun/sgpu"), nil, 0o644)
		}, "ci-rerun/sgpu", "a regular file"},
	}
	for _, c := range cases {
		for _, op := range []string{"WriteFile", "OpenFile"} {
			t.Run(c.name+"/"+op, func(t *testing.T) {
				root, outside := tree(t)
				c.prepare(t, root, outside)
				path := filepath.Join(root, "ci-rerun/sgpu/failed.x.l1.tsv")
				var err error
				done := make(chan struct{})
				go func() {
					defer close(done)
					if op == "WriteFile" {
						err = WriteFile(root, path, []byte("torch\tx\n"), 0o644)
						return
					}
					var f *os.File
					if f, err = OpenFile(root, path, os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
						f.Close()
					}
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("blocked: a FIFO must be refused, not opened")
				}
				refusal(t, err, filepath.Join(root, c.at), c.kind)
				untouched(t, outside)
				if c.kind == link {
					if _, lerr := os.Lstat(filepath.Join(root, c.at)); lerr != nil {
						t.Errorf("the link itself was removed: %v", lerr)
					}
				}
			})
		}
	}
}

func TestWriteFileMakesAndReplaces(t *testing.T) {
	root, _ := tree(t)
	path := filepath.Join(root, "ci-rerun/sgpu/tests/torch.a.txt")
	if err := WriteFile(root, path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(root, path, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "two\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("file holds %q mode %v, want %q and the old mode 0600", data, fi.Mode().Perm(), "two\n")
	}
}

func TestRootItselfMayBeALink(t *testing.T) {
	// A workspace on another disk: the root (and above) is the user's choice.
	root, outside := tree(t)
	linked := filepath.Join(filepath.Dir(root), "linked-repo")
	mustSymlink(t, root, linked)
	if err := WriteFile(linked, filepath.Join(linked, "ci-rerun/sgpu/x.tsv"), []byte("x\n"), 0o644); err != nil {
		t.Fatalf("a root that is a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "ci-rerun/sgpu/x.tsv")); err != nil {
		t.Error(err)
	}
	untouched(t, outside)
}

func TestPathOutsideRootChecksItsOwnDir(t *testing.T) {
	root, outside := tree(t)
	// A log dir the user named outside the repo: that directory is trusted, what
	// is below it is not.
	logs := filepath.Join(filepath.Dir(root), "logs")
	mustSymlink(t, outside, filepath.Join(logs, "items"))
	err := WriteFile(root, filepath.Join(logs, "items", "x.log"), []byte("x"), 0o644)
	refusal(t, err, filepath.Join(logs, "items"), "a symbolic link")
	untouched(t, outside)
}

func TestRemove(t *testing.T) {
	root, outside := tree(t)
	link := filepath.Join(root, "t.txt")
	mustSymlink(t, filepath.Join(outside, "precious.txt"), link)
	refusal(t, Remove(root, link), link, "a symbolic link")
	untouched(t, outside)
	plain := filepath.Join(root, "p.txt")
	os.WriteFile(plain, []byte("x"), 0o644)
	if err := Remove(root, plain); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(plain); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plain file not removed: %v", err)
	}
	if err := Remove(root, plain); err != nil {
		t.Errorf("a missing file: %v", err)
	}
}

// Rename moves a regular file to a free name or over a regular file, and refuses
// (leaving both) a link or FIFO at either end or a linked folder on the way.
func TestRename(t *testing.T) {
	const link, fifo = "a symbolic link", "a named pipe (FIFO)"
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, root, outside string)
		at      string // the path refused, relative to root; "" = moved
		kind    string
	}{
		{"to a free name", func(*testing.T, string, string) {}, "", ""},
		{"over a regular file", func(t *testing.T, root, _ string) { os.WriteFile(filepath.Join(root, "d", "b"), nil, 0o644) }, "", ""},
		{"to a link", func(t *testing.T, root, outside string) {
			mustSymlink(t, filepath.Join(outside, "precious.txt"), filepath.Join(root, "d", "b"))
		}, "d/b", link},
		{"to a FIFO", func(t *testing.T, root, _ string) { mustFIFO(t, filepath.Join(root, "d", "b")) }, "d/b", fifo},
		{"from a link", func(t *testing.T, root, outside string) {
			os.Remove(filepath.Join(root, "d", "a"))
			mustSymlink(t, filepath.Join(outside, "precious.txt"), filepath.Join(root, "d", "a"))
		}, "d/a", link},
		{"in a linked folder", func(t *testing.T, root, outside string) {
			os.RemoveAll(filepath.Join(root, "d"))
			mustSymlink(t, outside, filepath.Join(root, "d"))
		}, "d", link},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := tree(t)
			from, to := filepath.Join(root, "d", "a"), filepath.Join(root, "d", "b")
			os.MkdirAll(filepath.Dir(from), 0o755)
			os.WriteFile(from, []byte("moved\n"), 0o644)
			tc.prepare(t, root, outside)
			err := Rename(root, from, to)
			if tc.at != "" {
				refusal(t, err, filepath.Join(root, tc.at), tc.kind)
				untouched(t, outside)
				return
			}
			if data, _ := os.ReadFile(to); err != nil || string(data) != "moved\n" {
				t.Errorf("Rename = %v; %s holds %q", err, to, data)
			}
		})
	}
	root, _ := tree(t)
	if err := Rename(root, filepath.Join(root, "none"), filepath.Join(root, "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReadFile(t *testing.T) {
	root, outside := tree(t)
	fifo := filepath.Join(root, "ci-weights/test_weights.fake.l1.txt")
	mustFIFO(t, fifo)
	done := make(chan error)
	go func() { _, err := ReadFile(fifo); done <- err }()
	select {
	case err := <-done:
		var e *Error
		if !errors.As(err, &e) || !e.Read || e.Kind != "a named pipe (FIFO)" {
			t.Fatalf("FIFO read: %v, want a read refusal", err)
		}
		if !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("message %q", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
	// A link to a regular file is read through: a user's config may be one.
	link := filepath.Join(root, "conf")
	mustSymlink(t, filepath.Join(outside, "precious.txt"), link)
	if data, err := ReadFile(link); err != nil || string(data) != "precious\n" {
		t.Errorf("read through a link: %q, %v", data, err)
	}
	if _, err := ReadFile(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadFile(root); err == nil {
		t.Error("a directory was read as a file")
	}
}

// The trusted root of a path is the repo root when the path is under it, else the
// path itself, which the user named.
func TestTrustedRoot(t *testing.T) {
	for _, tc := range []struct{ repo, dir, want string }{
		{"/w/repo", "/w/repo/test-results/logs", "/w/repo"},
		{"/w/repo", "/w/repo", "/w/repo"},
		{"/w/repo", "/w/repo2/logs", "/w/repo2/logs"}, // a sibling whose name starts alike
		{"/w/repo", "/scratch/logs", "/scratch/logs"},
		{"/w/repo", "/w/repo/../elsewhere", "/w/repo/../elsewhere"},
		{"/w/repo", "/w/repo/..cache/logs", "/w/repo"}, // under it, though its name starts with ".."
		{"", "/scratch/logs", "/scratch/logs"},
	} {
		if got := TrustedRoot(tc.repo, tc.dir); got != tc.want {
			t.Errorf("TrustedRoot(%q, %q) = %q, want %q", tc.repo, tc.dir, got, tc.want)
		}
	}
}

// A refusal says its path relative to a base it is under, and a file where a
// directory belongs unwraps to ENOTDIR (a path that cannot be made), a link there
// does not.
func TestErrorRelAndUnwrap(t *testing.T) {
	root, outside := tree(t)
	file := filepath.Join(root, "test-results")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := MkdirAll(root, filepath.Join(file, "logs"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, syscall.ENOTDIR) || !e.WantDir {
		t.Fatalf("MkdirAll under a file = %v, want a refusal that unwraps to ENOTDIR", err)
	}
	if got := e.Rel(root).Error(); !strings.HasPrefix(got, "test-results is a regular file: ") {
		t.Errorf("Rel = %q", got)
	}
	if got := e.Rel(outside).Path; got != file {
		t.Errorf("Rel to a base it is not under = %q, want %q", got, file)
	}
	os.Remove(file)
	mustSymlink(t, outside, file)
	err = CheckDir(root, filepath.Join(file, "logs"))
	if !errors.As(err, &e) || errors.Is(err, syscall.ENOTDIR) || e.Target != outside {
		t.Errorf("CheckDir through a link = %v, want a link refusal naming its target", err)
	}
	if want := "is a symbolic link to " + outside + ": sgpu-queue never writes through a link"; !strings.HasPrefix(e.Reason(), want) {
		t.Errorf("Reason = %q, want it to start %q", e.Reason(), want)
	}
	untouched(t, outside)
}

// MkdirAll of the root itself makes it (a log dir outside the repo is its own
// root).
func TestMkdirAllRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "logs")
	if err := MkdirAll(root, root); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Errorf("root not made: %v", err)
	}
}
