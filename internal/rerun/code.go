package rerun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Code names the code a run tests, for the state's key (docs/reruns.md#keys):
// githubSHA, else HEAD plus a digest of uncommitted tracked changes outside
// exclude; "" outside a git checkout.
func Code(ctx context.Context, root, githubSHA string, exclude []string) (string, error) {
	if sha := strings.TrimSpace(githubSHA); sha != "" {
		return sha, nil
	}
	if !inCheckout(root) {
		return "", nil
	}
	out, err := git(ctx, root, "rev-parse", "--show-toplevel", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	top, head, _ := strings.Cut(strings.TrimSpace(out), "\n")
	// Which paths differ, not how: git's diff of a large file costs seconds and
	// memory; hashing it reads it once.
	args := []string{"-c", "diff.relative=false", "diff", "HEAD", "--raw", "-z", "--no-abbrev", "--no-renames",
		"--ignore-submodules=untracked", "--", ":/"}
	for _, p := range exclude {
		args = append(args, ":(exclude)"+filepath.ToSlash(p))
	}
	raw, err := git(ctx, root, args...)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := hashChanges(h, top, raw)
	if err != nil {
		return "", fmt.Errorf("the uncommitted changes in %s: %w", top, err)
	}
	if n > 0 {
		head += "+" + hex.EncodeToString(h.Sum(nil))[:16]
	}
	return head, nil
}

// hashChanges writes each `git diff --raw -z` entry's path, status, mode and
// current content to h, so the same changes digest the same, staged or not.
func hashChanges(h io.Writer, top, raw string) (int, error) {
	fields := strings.Split(strings.TrimSuffix(raw, "\x00"), "\x00")
	if len(fields) == 1 && fields[0] == "" {
		return 0, nil
	}
	if len(fields)%2 != 0 {
		return 0, fmt.Errorf("git diff --raw gave %d fields, not pairs", len(fields))
	}
	for i := 0; i < len(fields); i += 2 {
		// ":<old mode> <new mode> <old sha> <new sha> <status>", then the path.
		meta, path := strings.Fields(fields[i]), fields[i+1]
		if len(meta) != 5 {
			return 0, fmt.Errorf("git diff --raw gave %q", fields[i])
		}
		mode, sha, status := meta[1], meta[3], meta[4]
		fmt.Fprintf(h, "%s\x00%s %s\x00", path, status, mode)
		full := filepath.Join(top, filepath.FromSlash(path))
		switch {
		case status == "D":
		case mode == "160000": // a submodule: the commit it is at
			io.WriteString(h, sha)
		case mode == "120000":
			target, err := os.Readlink(full)
			if err != nil {
				return 0, err
			}
			io.WriteString(h, target)
		default:
			sum, err := safefs.SHA256(full)
			if err != nil {
				return 0, err
			}
			io.WriteString(h, sum)
		}
		io.WriteString(h, "\x00")
	}
	return len(fields) / 2, nil
}

// inCheckout reports whether root or a directory above it holds .git (a worktree's
// is a file).
func inCheckout(root string) bool {
	for d := filepath.Clean(root); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("git is not installed: %w", err)
		}
		return "", fmt.Errorf("git %s in %s: %w: %s", subcommand(args), dir, err, msg)
	}
	return out.String(), nil
}

// subcommand is the git command args run, past its "-c name=value" options.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		return args[i]
	}
	return ""
}
