package dockerexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// fixtures answers ContainerInspect from `docker inspect` output captured from a real
// engine (testdata/inspect/*.json: containers created with the runner's mounts for a
// container action, a job container, a hand-started test container, a named volume, a
// mount hidden under another). Like the engine, it finds a container by name or by a
// prefix of its id.
type fixtures []container.InspectResponse

func loadFixtures(t testing.TB) fixtures {
	t.Helper()
	files, err := filepath.Glob("testdata/inspect/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var fx fixtures
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []container.InspectResponse
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fx = append(fx, cs...)
	}
	return fx
}

func (fx fixtures) ContainerInspect(_ context.Context, id string, _ client.ContainerInspectOptions) (client.ContainerInspectResult, error) {
	for _, c := range fx {
		if c.Name == "/"+id || (len(id) >= 12 && strings.HasPrefix(c.ID, id)) {
			return client.ContainerInspectResult{Container: c}, nil
		}
	}
	return client.ContainerInspectResult{}, cerrdefs.ErrNotFound.WithMessage("No such container: " + id)
}

func TestMapper(t *testing.T) {
	fx := loadFixtures(t)
	const (
		actionHost = "d1cf45ed715b" // the action container's HOSTNAME: its short id
		volAction  = "764dcad321a5"
		hostRepo   = "/home/runner/work/TransformerEngine/TransformerEngine"
	)
	type pathCase struct{ local, want, err string }
	tests := []struct {
		name              string
		self, target      string
		repoRoot, workdir string
		paths             []pathCase
	}{
		{
			name: "action into job container", self: actionHost, target: "fx-job",
			paths: []pathCase{
				{local: "/github/workspace", want: "/__w/TransformerEngine/TransformerEngine"},
				{local: "/github/workspace/ci-logs/te/item-3/", want: "/__w/TransformerEngine/TransformerEngine/ci-logs/te/item-3"},
				{local: "/github/runner_temp/x.xml", want: "/__w/_temp/x.xml"},
				{local: "/github/home/.cache/pip", want: "/github/home/.cache/pip"},
				{local: "/github/workspace/../runner_temp/y", want: "/__w/_temp/y"},
				{local: "/var/run/docker.sock", want: "/var/run/docker.sock"},
				{local: "/tmp/x", err: "/tmp/x is on no mount shared with container fx-job: it is not on a mount of this container; bind-mount"},
				{local: "ci-logs/x", err: `path "ci-logs/x" is not absolute`},
			},
		},
		{
			name: "action into hand-started container", self: actionHost, target: "fx-te",
			paths: []pathCase{
				{local: "/github/workspace/test-results/pytorch/", want: "/workspace/test-results/pytorch"},
				{local: "/github/runner_temp/x", err: "no mount of fx-te holds host path /home/runner/work/_temp/x"},
				{local: "/github/workflow/event.json", err: "--container-workdir (input container-workdir)"},
			},
		},
		{
			name: "explicit container workdir wins for the repository", self: actionHost, target: "fx-te",
			repoRoot: "/github/workspace", workdir: "/src/te/",
			paths: []pathCase{
				{local: "/github/workspace", want: "/src/te"},
				{local: "/github/workspace/ci-logs/a", want: "/src/te/ci-logs/a"},
				{local: "/github/workspace2/a", err: "it is not on a mount of this container"},
				{local: "/github/runner_temp/x", err: "no mount of fx-te holds host path"},
			},
		},
		{
			name: "on the host (no HOSTNAME)", self: "", target: "fx-te",
			paths: []pathCase{
				{local: hostRepo + "/ci/run_item.sh", want: "/workspace/ci/run_item.sh"},
				{local: "/data/models/llama", want: "/models/llama"},
				{local: "/data/modelsX", err: "no mount of fx-te holds host path /data/modelsX"},
				{local: "/", err: "no mount of fx-te holds host path /"},
			},
		},
		{
			name: "on the host (HOSTNAME names no container)", self: "runner-vm-7", target: "fx-te",
			paths: []pathCase{
				{local: hostRepo, want: "/workspace"},
				{local: "/github/workspace/x", err: `(this process was taken to run on the host: the Docker engine knows no container "runner-vm-7")`},
			},
		},
		{
			name: "HOSTNAME names another container", self: "fx-te", target: "fx-te",
			paths: []pathCase{
				{local: hostRepo + "/a", want: "/workspace/a"},
				{local: "/workspace/a", err: "has another hostname"},
			},
		},
		{
			name: "named volume in both", self: volAction, target: "fx-vol-target",
			paths: []pathCase{
				{local: "/github/workspace/logs/x", want: "/data/logs/x"},
				{local: "/var/run/docker.sock", err: "no mount of fx-vol-target holds host path /var/run/docker.sock"},
			},
		},
		{
			name: "a mount in the target hides part of the workspace", self: "", target: "fx-shadow",
			paths: []pathCase{
				{local: hostRepo + "/src/a.py", want: "/workspace/src/a.py"},
				{local: hostRepo + "/build/x.o", err: "its place /workspace/build/x.o is covered by the mount of /srv/build-cache there"},
				{local: "/srv/build-cache/x.o", want: "/workspace/build/x.o"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DiscoverMapper(context.Background(), fx, tt.self, tt.target, tt.repoRoot, tt.workdir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.paths {
				got, err := m.ToTarget(p.local)
				switch {
				case p.err != "" && (err == nil || !strings.Contains(err.Error(), p.err)):
					t.Errorf("ToTarget(%q) = %q, %v; want error with %q", p.local, got, err, p.err)
				case p.err == "" && (err != nil || got != p.want):
					t.Errorf("ToTarget(%q) = %q, %v; want %q", p.local, got, err, p.want)
				case err != nil && strings.Contains(err.Error(), "\n"):
					t.Errorf("ToTarget(%q): error not one line: %q", p.local, err)
				}
			}
		})
	}
}

func TestDiscoverMapperErrors(t *testing.T) {
	fx := loadFixtures(t)
	tests := []struct {
		name, self, target, repoRoot, workdir, err string
	}{
		{name: "missing target", target: "fx-gone", err: "container fx-gone does not exist: start it before sgpu-queue"},
		{name: "no target", target: "", err: "no container given"},
		{name: "relative workdir", target: "fx-te", repoRoot: "/github/workspace", workdir: "src", err: `container workdir "src" and repository root "/github/workspace" must both be absolute paths`},
		{name: "workdir without repository root", target: "fx-te", workdir: "/src", err: "must both be absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DiscoverMapper(context.Background(), fx, tt.self, tt.target, tt.repoRoot, tt.workdir)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("DiscoverMapper: %v, want %q", err, tt.err)
			}
		})
	}
}

func TestNilMapperIsIdentity(t *testing.T) {
	var m *Mapper
	for _, p := range []string{"/a/b", "rel", ""} {
		if got, err := m.ToTarget(p); got != p || err != nil {
			t.Errorf("nil ToTarget(%q) = %q, %v", p, got, err)
		}
	}
}

// Whatever path it is given, a mapper answers a path inside one of the target's
// mounts, or an error; it never panics.
func FuzzToTarget(f *testing.F) {
	fx := loadFixtures(f)
	var ms []*Mapper
	for _, c := range []struct{ self, target, root, wd string }{
		{"d1cf45ed715b", "fx-job", "", ""},
		{"d1cf45ed715b", "fx-te", "/github/workspace", "/src/te"},
		{"", "fx-shadow", "", ""},
		{"764dcad321a5", "fx-vol-target", "", ""},
	} {
		m, err := DiscoverMapper(context.Background(), fx, c.self, c.target, c.root, c.wd)
		if err != nil {
			f.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, s := range []string{"/github/workspace/a", "/github/workspace/../../x", "//github//workspace/./b/", "/home/runner/work/TransformerEngine/TransformerEngine/build/x", "/", "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, local string) {
		for i, m := range ms {
			got, err := m.ToTarget(local)
			if err != nil {
				if strings.Contains(err.Error(), "\n") && !strings.Contains(local, "\n") {
					t.Errorf("mapper %d: error not one line: %q", i, err)
				}
				continue
			}
			if got != filepath.Clean(got) || !filepath.IsAbs(got) {
				t.Errorf("mapper %d: ToTarget(%q) = %q: not a clean absolute path", i, local, got)
			}
			if m.targetRoot != "" {
				if _, ok := under(got, m.targetRoot); ok {
					continue
				}
			}
			if deepest(m.targetMnts, got) == nil {
				t.Errorf("mapper %d: ToTarget(%q) = %q: on no mount of the target", i, local, got)
			}
		}
	})
}

func ExampleMapper_ToTarget() {
	// This process runs on the host; the target has the host's checkout at /workspace.
	m := &Mapper{target: "te", onHost: true, targetMnts: []Mount{{Type: "bind", Source: "/home/ci/te", Destination: "/workspace"}}}
	p, err := m.ToTarget("/home/ci/te/test-results/")
	fmt.Println(p, err)
	// Output: /workspace/test-results <nil>
}
