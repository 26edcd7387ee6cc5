package rerun

import (
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
)

// Code names the code a run tests, for the state's key (docs/reruns.md#keys):
// githubSHA when set (GITHUB_SHA: the action, a workflow), else git's HEAD in root,
// plus "+" and a digest of the tracked files' uncommitted changes when there are
// any (untracked files do not count; the paths of exclude, relative to root, the
// state the tool itself writes there, neither). Outside a git checkout it is ""
// and nil: no code key. An error is a checkout where git could not say (no git,
// a repository git refuses).
func Code(ctx context.Context, root, githubSHA string, exclude []string) (string, error) {
	if sha := strings.TrimSpace(githubSHA); sha != "" {
		return sha, nil
	}
	if !inCheckout(root) {
		return "", nil
	}
	head, err := git(ctx, root, nil, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	args := []string{"diff", "HEAD", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
		"--src-prefix=a/", "--dst-prefix=b/", "--", ":/"}
	for _, p := range exclude {
		args = append(args, ":(exclude)"+filepath.ToSlash(p))
	}
	h := sha256.New()
	n := &counter{w: h}
	if _, err := git(ctx, root, n, args...); err != nil {
		return "", err
	}
	code := strings.TrimSpace(head)
	if n.n > 0 {
		code += "+" + hex.EncodeToString(h.Sum(nil))[:16]
	}
	return code, nil
}

// inCheckout reports whether root is in a git checkout: it or a directory above it
// holds .git (a directory, or a worktree's file).
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

// git runs git in dir; its output goes to out when given, else is returned.
func git(ctx context.Context, dir string, out io.Writer, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var buf, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("git is not installed: %w", err)
		}
		return "", fmt.Errorf("git %s in %s: %w: %s", args[0], dir, err, msg)
	}
	return buf.String(), nil
}

// counter counts what it passes on.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}
