// Command fakedocker is the docker command line of the act tests' job containers
// (e2e/docsact_test.go): run, exec and rm through /var/run/docker.sock. The test
// machine has no GPUs and reaches no registry, so `docker run` drops --device and
// --group-add and runs a missing image as $FAKEDOCKER_IMAGE; the host is named after
// the container, so a test can start a sibling, and core dumps are unlimited, as a
// Docker daemon's default is.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "fakedocker: usage: docker run|exec|rm ...")
		return 2
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		fmt.Fprintln(stderr, "fakedocker:", err)
		return 1
	}
	defer cli.Close()
	ctx := context.Background()
	switch args[0] {
	case "run":
		err = runContainer(ctx, cli, args[1:], stdout, stderr)
	case "exec":
		var code int
		code, err = execIn(ctx, cli, args[1:], stdout, stderr)
		if err == nil {
			return code
		}
	case "rm":
		err = remove(ctx, cli, args[1:], stdout)
	default:
		err = fmt.Errorf("docker %s: not a command this fake has", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "fakedocker:", err)
		return 1
	}
	return 0
}

// valued are the flags that take a value.
var valued = map[string]bool{
	"--name": true, "-v": true, "--volume": true, "-w": true, "--workdir": true, "-e": true, "--env": true, "--network": true,
	"--device": true, "--shm-size": true, "--group-add": true, "--pid": true, "--ulimit": true, "-u": true, "--user": true,
}

// flags splits args into flag/value pairs and what follows the last flag.
func flags(args []string) (pairs [][2]string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return pairs, args[i:]
		}
		if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			pairs = append(pairs, [2]string{name, value})
			continue
		}
		if valued[a] && i+1 < len(args) {
			pairs = append(pairs, [2]string{a, args[i+1]})
			i++
			continue
		}
		pairs = append(pairs, [2]string{a, ""})
	}
	return pairs, nil
}

func runContainer(ctx context.Context, cli *client.Client, args []string, stdout, stderr io.Writer) error {
	pairs, rest := flags(args)
	if len(rest) == 0 {
		return fmt.Errorf("docker run: no image")
	}
	cfg := &container.Config{Image: rest[0], Cmd: rest[1:], Labels: map[string]string{"sgpu-queue-e2e": "fakedocker"}}
	host := &container.HostConfig{Resources: container.Resources{Ulimits: []*container.Ulimit{{Name: "core", Soft: -1, Hard: -1}}}}
	name := ""
	for _, p := range pairs {
		switch p[0] {
		case "--name":
			name, cfg.Hostname = p[1], p[1]
		case "-v", "--volume":
			host.Binds = append(host.Binds, p[1])
		case "-w", "--workdir":
			cfg.WorkingDir = p[1]
		case "-e", "--env":
			cfg.Env = append(cfg.Env, p[1])
		case "--device", "--group-add":
			fmt.Fprintf(stderr, "fakedocker: no GPUs here: %s %s dropped\n", p[0], p[1])
		}
	}
	for _, v := range strings.Split(os.Getenv("FAKEDOCKER_PASS"), ",") {
		if val, ok := os.LookupEnv(v); ok && v != "" {
			cfg.Env = append(cfg.Env, v+"="+val)
		}
	}
	if _, err := cli.ImageInspect(ctx, cfg.Image); cerrdefs.IsNotFound(err) && os.Getenv("FAKEDOCKER_IMAGE") != "" {
		fmt.Fprintf(stderr, "fakedocker: image %s runs as %s\n", cfg.Image, os.Getenv("FAKEDOCKER_IMAGE"))
		cfg.Image = os.Getenv("FAKEDOCKER_IMAGE")
	}
	c, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: host})
	if err != nil {
		return err
	}
	if _, err := cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, c.ID)
	return nil
}

func execIn(ctx context.Context, cli *client.Client, args []string, stdout, stderr io.Writer) (int, error) {
	pairs, rest := flags(args)
	if len(rest) < 2 {
		return 0, fmt.Errorf("docker exec: want a container and a command")
	}
	opts := client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: rest[1:]}
	for _, p := range pairs {
		switch p[0] {
		case "-e", "--env":
			if _, _, ok := strings.Cut(p[1], "="); ok {
				opts.Env = append(opts.Env, p[1])
			} else if v, set := os.LookupEnv(p[1]); set {
				opts.Env = append(opts.Env, p[1]+"="+v)
			}
		case "-w", "--workdir":
			opts.WorkingDir = p[1]
		}
	}
	ex, err := cli.ExecCreate(ctx, rest[0], opts)
	if err != nil {
		return 0, err
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, err
	}
	defer att.Close()
	if _, err := stdcopy.StdCopy(stdout, stderr, att.Reader); err != nil {
		return 0, err
	}
	r, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	return r.ExitCode, err
}

func remove(ctx context.Context, cli *client.Client, args []string, stdout io.Writer) error {
	pairs, rest := flags(args)
	force := false
	for _, p := range pairs {
		force = force || p[0] == "-f" || p[0] == "--force"
	}
	for _, name := range rest {
		if _, err := cli.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: force}); err != nil {
			return err
		}
		fmt.Fprintln(stdout, name)
	}
	return nil
}
