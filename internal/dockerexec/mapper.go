package dockerexec

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Inspector is the one Docker call path discovery needs; *client.Client has it.
type Inspector interface {
	ContainerInspect(ctx context.Context, id string, o client.ContainerInspectOptions) (client.ContainerInspectResult, error)
}

// Mount is one filesystem shared into a container, as `docker inspect` reports it.
type Mount struct {
	Type        string // bind, volume, tmpfs, ...
	Name        string // the volume's name (volumes only)
	Source      string // the host path behind it ("" for tmpfs)
	Destination string // where it appears inside the container
}

// Mapper translates this process's paths into the target container's, through the host's: by this container's mount
// holding the path, then the target's mount whose source holds it. A file outside every shared mount has no name
// there, and ToTarget fails rather than guess. A nil *Mapper is the identity.
type Mapper struct {
	target      string  // the target container, for messages
	onHost      bool    // this process's paths are host paths
	self        []Mount // this process's container's mounts (when !onHost)
	targetMnts  []Mount
	localRoot   string // explicit pair: localRoot here is targetRoot in the target
	targetRoot  string
	selfMissing string // why discovery found no self container ("" when it did or was not asked)
}

// ToTarget returns the path that names local inside the target container.
func (m *Mapper) ToTarget(local string) (string, error) {
	if m == nil {
		return local, nil
	}
	if !path.IsAbs(local) {
		return "", fmt.Errorf("path %q is not absolute: only absolute paths can be translated into container %s", local, m.target)
	}
	p := path.Clean(local)
	if m.localRoot != "" {
		if rel, ok := under(p, m.localRoot); ok {
			return path.Join(m.targetRoot, rel), nil
		}
	}
	host := p
	var from *Mount
	if !m.onHost {
		from = deepest(m.self, p)
		if from == nil {
			return "", m.unshared(local, "it is not on a mount of this container")
		}
		rel, _ := under(p, from.Destination)
		host = path.Join(from.Source, rel)
	}
	// Target mounts whose source (or volume) holds the host path, the most specific first.
	type cand struct {
		m   *Mount
		rel string
		n   int
	}
	var cs []cand
	for i := range m.targetMnts {
		t := &m.targetMnts[i]
		if from != nil && from.Type == "volume" && t.Type == "volume" && from.Name != "" && t.Name == from.Name {
			rel, _ := under(p, from.Destination)
			cs = append(cs, cand{t, rel, len(t.Source) + 1<<20})
			continue
		}
		if t.Source == "" || t.Type == "tmpfs" {
			continue
		}
		if rel, ok := under(host, t.Source); ok {
			cs = append(cs, cand{t, rel, len(t.Source)})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].n > cs[j].n })
	var hidden string
	for _, c := range cs {
		out := path.Join(c.m.Destination, c.rel)
		// A deeper mount in the target over the same path would show other files.
		if d := deepest(m.targetMnts, out); d != c.m {
			hidden = fmt.Sprintf("its place %s is covered by the mount of %s there", out, orName(d))
			continue
		}
		return out, nil
	}
	if hidden != "" {
		return "", m.unshared(local, hidden)
	}
	return "", m.unshared(local, "no mount of "+m.target+" holds host path "+host)
}

func (m *Mapper) unshared(local, why string) error {
	extra := ""
	if m.selfMissing != "" {
		extra = " (" + m.selfMissing + ")"
	}
	return fmt.Errorf("%s is on no mount shared with container %s: %s%s; bind-mount that directory into both containers, or give the "+
		"repository's path inside %s with --container-workdir (input container-workdir)",
		local, m.target, why, extra, m.target)
}

func orName(m *Mount) string {
	if m.Name != "" {
		return "volume " + m.Name
	}
	if m.Source != "" {
		return m.Source
	}
	return m.Type
}

// deepest is the mount that shows p: the one with the longest destination holding it.
func deepest(ms []Mount, p string) *Mount {
	var best *Mount
	for i := range ms {
		if _, ok := under(p, ms[i].Destination); ok {
			if best == nil || len(ms[i].Destination) > len(best.Destination) {
				best = &ms[i]
			}
		}
	}
	return best
}

// under reports whether p is root or inside it, and p relative to root.
func under(p, root string) (string, bool) {
	if root == "" || !path.IsAbs(root) {
		return "", false
	}
	root = path.Clean(root)
	switch {
	case p == root:
		return "", true
	case root == "/":
		return strings.TrimPrefix(p, "/"), true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root)+1:], true
	}
	return "", false
}

// mountsOf converts the inspect answer's mounts.
func mountsOf(mps []container.MountPoint) []Mount {
	out := make([]Mount, 0, len(mps))
	for _, mp := range mps {
		out = append(out, Mount{Type: string(mp.Type), Name: mp.Name, Source: mp.Source, Destination: mp.Destination})
	}
	return out
}

// DiscoverMapper builds the Mapper from the mounts of self (empty or unknown: this process is on the host) and of
// the target. A non-empty containerWorkdir is repoRoot in the target, and wins for paths under it.
func DiscoverMapper(ctx context.Context, cli Inspector, self, target, repoRoot, containerWorkdir string) (*Mapper, error) {
	t, err := inspectTarget(ctx, cli, target)
	if err != nil {
		return nil, err
	}
	m := &Mapper{target: target, targetMnts: mountsOf(t.Container.Mounts)}
	if containerWorkdir != "" {
		if !path.IsAbs(repoRoot) || !path.IsAbs(containerWorkdir) {
			return nil, fmt.Errorf("container workdir %q and repository root %q must both be absolute paths", containerWorkdir, repoRoot)
		}
		m.localRoot, m.targetRoot = path.Clean(repoRoot), path.Clean(containerWorkdir)
	}
	if self == "" {
		m.onHost = true
		return m, nil
	}
	s, err := cli.ContainerInspect(ctx, self, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		m.onHost = true
		m.selfMissing = fmt.Sprintf("this process was taken to run on the host: the Docker engine knows no container %q", self)
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("cannot inspect this process's own container %q to map paths: %w", self, err)
	}
	if !isSelf(s.Container, self) {
		// HOSTNAME named some other container: this process is not in it.
		m.onHost = true
		m.selfMissing = fmt.Sprintf("this process was taken to run on the host: container %q has another hostname", self)
		return m, nil
	}
	m.self = mountsOf(s.Container.Mounts)
	return m, nil
}

// isSelf tells whether the container HOSTNAME found is this one: its id starts with the name, or its hostname is it.
func isSelf(c container.InspectResponse, hostname string) bool {
	if strings.HasPrefix(c.ID, hostname) {
		return true
	}
	return c.Config != nil && c.Config.Hostname == hostname
}

// inspectTarget inspects the target container, with errors a user can act on.
func inspectTarget(ctx context.Context, cli Inspector, target string) (client.ContainerInspectResult, error) {
	if target == "" {
		return client.ContainerInspectResult{}, fmt.Errorf("no container given: name the running container to run commands in (--container / " +
			"input container)")
	}
	t, err := cli.ContainerInspect(ctx, target, client.ContainerInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		return t, fmt.Errorf("container %s does not exist: start it before sgpu-queue (docker ps lists the running ones): %w", target,
			ErrNotRunning)
	case client.IsErrConnectionFailed(err):
		return t, fmt.Errorf("cannot reach the Docker engine to find container %s: %w (set DOCKER_HOST or mount /var/run/docker.sock)", target,
			err)
	case err != nil:
		return t, fmt.Errorf("cannot inspect container %s: %w", target, err)
	}
	return t, nil
}
