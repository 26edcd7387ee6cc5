// Package dockertest gives tests a real Docker Engine API and throwaway busybox fixture containers;
// without an engine, tests skip loudly.
package dockertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Image is the fixture image the engine script imports (sh, sleep, cat, kill, ps...).
const Image = "localhost/busybox:fixture"

// Engine connects to the engine of the environment, or skips the test loudly.
func Engine(t testing.TB) *client.Client {
	t.Helper()
	const how = "point DOCKER_HOST at a running Docker Engine API with the image " + Image +
		" (docker pull busybox:1.36 && docker tag busybox:1.36 " + Image + ", as .github/workflows/ci.yml does)"
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Skipf("DOCKER ENGINE UNAVAILABLE: %v; %s", err, how)
	}
	t.Cleanup(func() { _ = cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		t.Skipf("DOCKER ENGINE UNAVAILABLE: %v; %s", err, how)
	}
	if _, err := cli.ImageInspect(ctx, Image); err != nil {
		t.Skipf("DOCKER ENGINE UNAVAILABLE: no image %s (%v); %s", Image, err, how)
	}
	return cli
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// UniqueName is a container name no other test (or run) uses.
func UniqueName(t testing.TB) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	n := strings.ToLower(unsafeName.ReplaceAllString(t.Name(), "-"))
	if len(n) > 40 {
		n = n[:40]
	}
	return "sgpu-test-" + n + "-" + hex.EncodeToString(b)
}

// Start creates a sleeping fixture container, removed when the test ends; start=false leaves it stopped.
func Start(t testing.TB, cli *client.Client, binds, env []string, start bool) string {
	t.Helper()
	return StartConfig(t, cli, &container.Config{Env: env}, &container.HostConfig{Binds: binds}, start)
}

// StartConfig is Start with the container's whole configuration.
func StartConfig(t testing.TB, cli *client.Client, cfg *container.Config, host *container.HostConfig, start bool) string {
	t.Helper()
	ctx := context.Background()
	name := UniqueName(t)
	c := *cfg
	if c.Image == "" {
		c.Image = Image
	}
	if len(c.Cmd) == 0 {
		c.Cmd = []string{"sleep", "3600"}
	}
	_, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: &c, HostConfig: host})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			t.Errorf("remove %s: %v", name, err)
		}
	})
	if start {
		if _, err := cli.ContainerStart(ctx, name, client.ContainerStartOptions{}); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
	}
	return name
}
