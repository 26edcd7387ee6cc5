package cache

// Load and Save: what a Store restores from and stores to the cache, and the local copy.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	actionscache "github.com/tonistiigi/go-actions-cache"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// Load restores the newest table under RestorePrefix, else ArchPrefix. It never fails: a failure is one warning,
// and then a non-empty Local table is used, as an older table orders better than none.
func (s *Store) Load(ctx context.Context) (*weights.Table, []string, error) {
	s.mu.Lock()
	s.matched, s.failed = "", false
	s.mu.Unlock()
	if !s.CanRestore() {
		lt, lwarns := s.local(ctx)
		return lt, lwarns, nil
	}

	t, key, warns, err := s.restore(ctx)
	if err == nil && t != nil {
		s.mu.Lock()
		s.matched = key
		s.mu.Unlock()
		return t, warns, nil
	}
	var msg string
	if err != nil {
		msg = "weights cache: restore of " + s.RestorePrefix() + "* failed: " + s.describe(ctx, err, s.timeout(DefaultRestoreTimeout))
		s.mu.Lock()
		s.failed = true
		s.mu.Unlock()
	}
	lt, lwarns := s.local(ctx)
	if msg != "" {
		if lt.Len() > 0 {
			msg += fmt.Sprintf("; using the local table %s", s.c.Local)
		} else {
			msg += "; starting from an empty table"
		}
		warns = append(warns, msg)
	}
	return lt, append(warns, lwarns...), nil
}

// local loads the Local table, if any; an empty one stands for none.
func (s *Store) local(ctx context.Context) (*weights.Table, []string) {
	if s.c.Local == nil {
		return weights.New(), nil
	}
	t, warns, err := s.c.Local.Load(ctx)
	if err != nil {
		return weights.New(), []string{oneLine(fmt.Sprintf("weights: local table %s unreadable: %v", s.c.Local, err), s.c.Token)}
	}
	if t == nil || t.Len() == 0 {
		return weights.New(), warns
	}
	return t, warns
}

// restore returns the restored table and its key; nil, nil is a miss.
func (s *Store) restore(ctx context.Context) (*weights.Table, string, []string, error) {
	prefix := s.RestorePrefix()
	if err := errors.Join(s.ready(prefix), checkKey(s.ArchPrefix())); err != nil {
		return nil, "", nil, err
	}
	key, data, err := s.loadEntry(ctx, prefix, s.ArchPrefix())
	if err != nil || key == "" {
		return nil, "", nil, err
	}
	t, warns, err := decodeBlob(data, key, s.c.MaxBytes)
	if err != nil {
		return nil, "", nil, err
	}
	return t, key, warns, nil
}

// loadEntry downloads, up to MaxBytes+1, the newest entry matching the first of keys that has one; "" is a miss.
func (s *Store) loadEntry(ctx context.Context, keys ...string) (string, []byte, error) {
	timeout := s.timeout(DefaultRestoreTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var e *actionscache.Entry
	var data []byte
	err := s.call(timeout, func(c *actionscache.Cache) error {
		var err error
		e, data = nil, nil
		if e, err = c.Load(ctx, keys...); err != nil || e == nil || e.Key == "" {
			return err
		}
		rac := e.Download(ctx)
		defer rac.Close()
		data, err = io.ReadAll(io.NewSectionReader(rac, 0, s.c.MaxBytes+1))
		if err != nil {
			return fmt.Errorf("download of entry %s: %w", e.Key, err)
		}
		return nil
	})
	if err != nil || e == nil || e.Key == "" {
		return "", nil, err
	}
	return e.Key, data, nil
}

// LoadBlob restores state other than the weight table (docs/reruns.md, docs/action.md) as loadEntry does;
// "" is a miss, a blob over MaxBytes an error. The error is one line, meant to be a warning.
func (s *Store) LoadBlob(ctx context.Context, prefix string, more ...string) (string, []byte, error) {
	if !s.CanRestore() {
		return "", nil, nil
	}
	if err := s.ready(prefix); err != nil {
		return "", nil, err
	}
	for _, m := range more {
		if err := checkKey(m); err != nil {
			return "", nil, err
		}
	}
	key, data, err := s.loadEntry(ctx, append([]string{prefix}, more...)...)
	if err != nil {
		return "", nil, errors.New(oneLine("cache: restore of "+prefix+"* failed: "+s.describe(ctx, err, s.timeout(DefaultRestoreTimeout)),
			s.c.Token))
	}
	if int64(len(data)) > s.c.MaxBytes {
		return "", nil, fmt.Errorf("cache: entry %s is over the %d-byte limit; not used", key, s.c.MaxBytes)
	}
	return key, data, nil
}

// SaveBlob stores data under key; a key already stored counts as saved. The error is one line, meant to be a warning.
func (s *Store) SaveBlob(ctx context.Context, key string, data []byte) error {
	if !s.CanSave() {
		return nil
	}
	err := s.ready(key)
	if err == nil {
		err = s.saveEntry(ctx, key, data)
	}
	if err != nil {
		return errors.New(oneLine("cache: save under "+key+" failed: "+s.describe(ctx, err, s.timeout(DefaultSaveTimeout)), s.c.Token))
	}
	return nil
}

// Save writes the table to Local and to the cache under RunKey; an existing key counts as saved.
// The error is one line, meant to be a warning.
func (s *Store) Save(ctx context.Context, t *weights.Table) error {
	s.mu.Lock()
	s.saved = ""
	s.mu.Unlock()

	var localErr error
	if s.c.Local != nil {
		localErr = s.c.Local.Save(ctx, t)
	}
	var err error
	if s.CanSave() {
		err = s.save(ctx, t)
	}
	var msgs []string
	if err != nil {
		msgs = append(msgs, "weights cache: save under "+s.RunKey()+" failed: "+s.describe(ctx, err, s.timeout(DefaultSaveTimeout)))
	}
	if localErr != nil {
		msgs = append(msgs, fmt.Sprintf("weights: local table %s not written: %v", s.c.Local, localErr))
	}
	if len(msgs) > 0 {
		return errors.New(oneLine(strings.Join(msgs, "; "), s.c.Token))
	}
	return nil
}

func (s *Store) save(ctx context.Context, t *weights.Table) error {
	key := s.RunKey()
	if strings.TrimSpace(s.c.RunID) == "" {
		return errors.New("GITHUB_RUN_ID is not set, so there is no run-unique key; run inside GitHub Actions or set it")
	}
	if err := s.ready(key); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Format(&b); err != nil {
		return err
	}
	if int64(b.Len()) > s.c.MaxBytes {
		return fmt.Errorf("the table is %d bytes, over the %d-byte limit of a cached table", b.Len(), s.c.MaxBytes)
	}
	if err := s.saveEntry(ctx, key, b.Bytes()); err != nil {
		return err
	}
	s.mu.Lock()
	s.saved = key
	s.mu.Unlock()
	return nil
}

// saveEntry stores data under key; a key already stored counts as saved.
func (s *Store) saveEntry(ctx context.Context, key string, data []byte) error {
	if int64(len(data)) > s.c.MaxBytes {
		return fmt.Errorf("%d bytes, over the %d-byte limit of a cache entry", len(data), s.c.MaxBytes)
	}
	timeout := s.timeout(DefaultSaveTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.call(timeout, func(c *actionscache.Cache) error { return c.Save(ctx, key, actionscache.NewBlob(data)) })
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// ready checks what a call needs before any network traffic.
func (s *Store) ready(key string) error {
	if s.c.Token == "" {
		return errors.New("ACTIONS_RUNTIME_TOKEN is not set (only actions get it; run this as the action, or pass the runtime variables)")
	}
	u := s.c.ResultsURL
	name := "ACTIONS_RESULTS_URL"
	if u == "" {
		u, name = s.c.CacheURL, "ACTIONS_CACHE_URL"
	}
	if u == "" {
		return errors.New("neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL is set")
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s is not an http(s) URL", name)
	}
	return checkKey(key)
}

// checkKey applies the service's key rules, so a bad prefix is named here, not in an HTTP 400.
func checkKey(key string) error {
	switch {
	case len(key) > maxKeyLen:
		return fmt.Errorf("cache key %q is longer than %d characters; shorten the cache-key-prefix input", clip(key, 60), maxKeyLen)
	case strings.Contains(key, ","):
		return fmt.Errorf("cache key %q contains a comma; remove it from the cache-key-prefix input", clip(key, 60))
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("cache key %q contains a control character; fix the cache-key-prefix input", clip(key, 60))
	}
	return nil
}

func (s *Store) timeout(def time.Duration) time.Duration {
	if s.c.Timeout > 0 {
		return s.c.Timeout
	}
	return def
}

// call runs f against the service in use; a v2 404 moves the store to v1 when ACTIONS_CACHE_URL is set.
func (s *Store) call(timeout time.Duration, f func(*actionscache.Cache) error) error {
	c, err := s.open(timeout)
	if err != nil {
		return err
	}
	err = guard(func() error { return f(c) })
	var he actionscache.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound || s.c.CacheURL == "" || s.Protocol() != "v2" {
		return err
	}
	s.mu.Lock()
	s.v1Only = true
	s.mu.Unlock()
	if c, err = s.open(timeout); err != nil {
		return err
	}
	return guard(func() error { return f(c) })
}

// open builds the service's client; timeout also bounds the library's own wait on 429 answers.
func (s *Store) open(timeout time.Duration) (*actionscache.Cache, error) {
	u, v2 := s.c.ResultsURL, true
	if s.Protocol() == "v1" {
		u, v2 = s.c.CacheURL, false
	}
	c, err := actionscache.New(s.c.Token, u, v2, actionscache.Opt{
		Client:      s.client,
		Timeout:     timeout,
		BackoffPool: s.backoff,
		UserAgent:   "sgpu-queue",
	})
	if err != nil {
		return nil, fmt.Errorf("ACTIONS_RUNTIME_TOKEN unusable: %w", err)
	}
	return c, nil
}

// guard turns a library panic into an error: it dereferences server answers unchecked, and a cache
// must never end the run.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the cache client failed on an unexpected answer: %v", p)
		}
	}()
	return f()
}
