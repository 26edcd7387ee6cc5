package dockerexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
	"github.com/rocm/sgpu-queue/internal/executor"
)

// Real /proc text (testdata/self: docker-cgroup1.* captured in a busybox container of
// Docker 20.10 on cgroup v1; host.* this test machine's own) and the shapes other
// engines write, with the id each gives.
func TestFindSelf(t *testing.T) {
	const id = "d66d8849ba78de29e6c49dc232c9c4bc7498c776172e11942549a2dfcd7be4c2"
	const other = "8181b9420e66b44b53f99896ef71cc79c66f454aae7afddaa9db2b7326b74ed1"
	file := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", "self", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	v2Mountinfo := "714 713 0:52 / / rw,relatime - overlay overlay rw\n" +
		"723 713 259:1 /var/lib/docker/containers/" + other + "/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/root rw\n" +
		"724 713 259:1 /var/lib/docker/containers/" + other + "/hostname /etc/hostname rw,relatime - ext4 /dev/root rw\n"
	podman := "601 600 0:50 /containers/storage/overlay-containers/" + other + "/userdata/hostname /etc/hostname rw - tmpfs tmpfs rw\n"
	spaces := "1 0 0:1 /srv/my\\040docker/containers/" + other + "/hosts /etc/hosts rw - ext4 /dev/sda rw\n"
	decoy := "1 0 0:1 /home/u/containers/" + other + "/x /work rw - ext4 /dev/sda rw\n"
	cases := []struct {
		name, mountinfo, cgroup, hostname string
		want                              SelfSource
	}{
		{"docker, cgroup v1", file("docker-cgroup1.mountinfo"), file("docker-cgroup1.cgroup"), "runner-host", SelfSource{id, SelfFromMountinfo}},
		{"docker, cgroup v1, no mountinfo", "", file("docker-cgroup1.cgroup"), "runner-host", SelfSource{id, SelfFromCgroup}},
		{"docker, cgroup v2 namespace", v2Mountinfo, "0::/\n", "runner-host", SelfSource{other, SelfFromMountinfo}},
		{"podman", podman, "0::/\n", "x", SelfSource{other, SelfFromMountinfo}},
		{"a data root with a space", spaces, "", "x", SelfSource{other, SelfFromMountinfo}},
		{"systemd cgroup driver", "", "0::/system.slice/docker-" + other + ".scope\n", "x", SelfSource{other, SelfFromCgroup}},
		{"podman cgroup", "", "0::/machine.slice/libpod-" + other + ".scope/container\n", "x", SelfSource{other, SelfFromCgroup}},
		{"kubernetes cgroup", "", "12:memory:/kubepods/burstable/pod1234/" + other + "\n", "x", SelfSource{other, SelfFromCgroup}},
		{"a containers/<id> path elsewhere is no proof", decoy, "0::/\n", "dc5f02cdf715", SelfSource{"dc5f02cdf715", SelfFromHostname}},
		{"on the host", file("host.mountinfo"), file("host.cgroup"), "vm", SelfSource{"vm", SelfFromHostname}},
		{"garbage", "\x00\n::::\n", "x:y\n1:2:3:4\n", "h", SelfSource{"h", SelfFromHostname}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				text := map[string]string{SelfFromMountinfo: c.mountinfo, SelfFromCgroup: c.cgroup}[p]
				if text == "" {
					return nil, errors.New("no such file")
				}
				return []byte(text), nil
			}
			if got := FindSelf(read, c.hostname); got != c.want {
				t.Errorf("FindSelf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func FuzzFindSelf(f *testing.F) {
	f.Add("161 143 254:0 /var/lib/docker/containers/"+strings.Repeat("a", 64)+"/hostname /etc/hostname rw - ext4 /dev/vda rw", "0::/")
	f.Fuzz(func(t *testing.T, mountinfo, cgroup string) {
		s := FindSelf(func(p string) ([]byte, error) {
			if p == SelfFromMountinfo {
				return []byte(mountinfo), nil
			}
			return []byte(cgroup), nil
		}, "h")
		if s.How != SelfFromHostname && len(s.ID) != 64 {
			t.Errorf("id %q from %s is not a full container id", s.ID, s.How)
		}
	})
}

// In a real container whose hostname is not its id (as under nektos/act, or
// docker run --hostname), FindSelf reads the container's own /proc text to its full
// id, and discovery then finds the container's mounts.
func TestFindSelfInAContainer(t *testing.T) {
	cli := engine(t)
	ctx := context.Background()
	name, info := startSleeper(t, cli, container.Config{Hostname: "runner-host"}, container.HostConfig{Binds: []string{t.TempDir() + ":/github/workspace"}})
	e := newExec(t, cli, Options{Container: name})
	read := func(p string) ([]byte, error) {
		r := run(t, e, executor.Command{Path: "cat", Args: []string{p}})
		if r.runErr != nil || r.res.ExitCode != 0 {
			return nil, fmt.Errorf("cat %s: %v %+v %s", p, r.runErr, r.res, r.err)
		}
		return []byte(r.out), nil
	}
	self := FindSelf(read, "runner-host")
	if self.ID != info.ID || self.How == SelfFromHostname {
		t.Fatalf("FindSelf = %+v, want %s from /proc", self, info.ID)
	}
	m, err := DiscoverMapper(ctx, cli, self.ID, startTarget(t, cli, nil, true), "", "")
	if err != nil || m.onHost || len(m.self) == 0 {
		t.Fatalf("DiscoverMapper from %s: onHost=%v mounts=%v err=%v", self.ID, m != nil && m.onHost, m, err)
	}
}

// A container on the runner's job network (github_network_<id>, which the runner
// makes for a job container or services) is told from one on the default bridge.
func TestJobNetwork(t *testing.T) {
	cli := engine(t)
	ctx := context.Background()
	network := "github_network_" + strings.TrimPrefix(uniqueName(t), "sgpu-test-")
	if _, err := cli.NetworkCreate(ctx, network, client.NetworkCreateOptions{Driver: "bridge"}); err != nil {
		t.Skipf("cannot create a network on this engine: %v", err)
	}
	t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), network, client.NetworkRemoveOptions{}) })
	name, info := startSleeper(t, cli, container.Config{}, container.HostConfig{NetworkMode: container.NetworkMode(network)})
	plain := startTarget(t, cli, nil, true)
	cases := []struct{ self, want string }{
		{info.ID, network},
		{info.ID[:12], network},
		{plain, ""},
		{"no-such-container-" + name, ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := JobNetwork(ctx, cli, c.self); got != c.want {
			t.Errorf("JobNetwork(%q) = %q, want %q", c.self, got, c.want)
		}
	}
}

// startSleeper starts a fixture container that sleeps, with cfg's hostname and
// hostCfg (which dockertest.Start does not set), removed when the test ends.
func startSleeper(t *testing.T, cli *client.Client, cfg container.Config, hostCfg container.HostConfig) (string, container.InspectResponse) {
	t.Helper()
	ctx := context.Background()
	name := uniqueName(t)
	cfg.Image, cfg.Cmd = dockertest.Image, []string{"sleep", "3600"}
	if _, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: &cfg, HostConfig: &hostCfg}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ContainerRemove(context.Background(), name, client.ContainerRemoveOptions{Force: true})
	})
	if _, err := cli.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name, info.Container
}
