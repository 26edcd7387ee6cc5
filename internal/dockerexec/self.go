package dockerexec

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/moby/moby/client"
)

// How this process's own container was found (SelfSource.How).
const (
	SelfFromMountinfo = "/proc/self/mountinfo"
	SelfFromCgroup    = "/proc/self/cgroup"
	SelfFromHostname  = "HOSTNAME"
)

// SelfSource is this process's container as found, and where from.
type SelfSource struct {
	ID  string // a full container id, or a name/short id from HOSTNAME; "" = not found
	How string // SelfFromMountinfo, SelfFromCgroup, SelfFromHostname
}

// containerDir is the engine's per-container dir in a mount source (Docker's and podman's).
var containerDir = regexp.MustCompile(`(?:^|/)(?:overlay-)?containers/([0-9a-f]{64})/`)

// cgroupID is a container id ending a cgroup path (docker, systemd, libpod, containerd, kubepods).
var cgroupID = regexp.MustCompile(`(?:^|[/-])([0-9a-f]{64})(?:\.scope)?(?:/container)?$`)

// FindSelf finds this process's container without trusting HOSTNAME, which act and --hostname change: from the
// engine's mounts of /etc/hostname and friends in mountinfo (right even in a private cgroup namespace), then cgroup
// paths, then hostname. read reads a /proc file.
func FindSelf(read func(string) ([]byte, error), hostname string) SelfSource {
	if data, err := read(SelfFromMountinfo); err == nil {
		if id := idFromMountinfo(string(data)); id != "" {
			return SelfSource{ID: id, How: SelfFromMountinfo}
		}
	}
	if data, err := read(SelfFromCgroup); err == nil {
		if id := idFromCgroup(string(data)); id != "" {
			return SelfSource{ID: id, How: SelfFromCgroup}
		}
	}
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	return SelfSource{ID: hostname, How: SelfFromHostname}
}

// idFromMountinfo reads the mount root of the engine's files mounted at /etc/hostname, /etc/hosts or /etc/resolv.conf.
func idFromMountinfo(text string) string {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || (f[4] != "/etc/hostname" && f[4] != "/etc/hosts" && f[4] != "/etc/resolv.conf") {
			continue
		}
		if m := containerDir.FindStringSubmatch(f[3]); m != nil {
			return m[1]
		}
	}
	return ""
}

// idFromCgroup reads the id at the end of a cgroup path ("hierarchy:controllers:path").
func idFromCgroup(text string) string {
	for _, l := range strings.Split(text, "\n") {
		parts := strings.SplitN(strings.TrimSpace(l), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if m := cgroupID.FindStringSubmatch(parts[2]); m != nil {
			return m[1]
		}
	}
	return ""
}

// jobNetworkPrefix begins the network the Actions runner makes for a job's containers.
const jobNetworkPrefix = "github_network_"

// JobNetwork is the runner's job network self is on; "" when none or unknown, as it only decides a message.
func JobNetwork(ctx context.Context, cli Inspector, self string) string {
	if self == "" {
		return ""
	}
	r, err := cli.ContainerInspect(ctx, self, client.ContainerInspectOptions{})
	if err != nil || r.Container.NetworkSettings == nil || !isSelf(r.Container, self) {
		return ""
	}
	var names []string
	for name := range r.Container.NetworkSettings.Networks {
		if strings.HasPrefix(name, jobNetworkPrefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}
