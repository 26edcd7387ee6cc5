// Package cache keeps the weight table in the GitHub Actions cache (docs/weights.md),
// for the container action, through github.com/tonistiigi/go-actions-cache.
//
// Restore looks up the newest entry whose key starts with "<prefix>-<arch>-l<level>-",
// else the newest of any level of the arch, "<prefix>-<arch>-" (another level's table
// shares most keys, and orders a run far better than none: a PR at level 1 then starts
// from the level-3 table of its base branch). Save stores the table under the
// run-unique key "<prefix>-<arch>-l<level>-<run_id>-<run_attempt>[-<leg>]", the leg
// part telling matrix legs of one run apart (entries are immutable; a key that already
// exists means this run attempt saved already, which is success). The blob is the table
// in its text format, so a downloaded entry is a valid CLI weight file.
//
// ACTIONS_CACHE_MODE, which the runner passes to container actions when the
// workflow limits the job's cache access (actions/runner#4538), is honoured as
// actions/toolkit's @actions/cache does (actions/toolkit#2447): "read" and "write" may
// restore, "write" and "write-only" may save, "none" neither; unset or unknown
// values change nothing.
//
// The cache only ever makes a run faster, so nothing here fails a run: every problem
// (no token, a bad URL, a timeout, an HTTP error, a corrupt or oversized blob) is a
// one-line warning from Load or an error from Save that the caller reports as a
// warning. Every call is bounded by a timeout, blob transfers included. Warnings
// never contain the runtime token nor the signature of a signed URL.
//
// v2 comes first whenever ACTIONS_RESULTS_URL is set; a v2 service that answers HTTP
// 404 (no such service: runner implementations such as nektos/act serve only v1) is
// left for v1 at ACTIONS_CACHE_URL when that is set, for the rest of the store's life.
//
// On the wire (v2): Twirp JSON POSTs to
// <ACTIONS_RESULTS_URL>twirp/github.actions.results.api.v1.CacheService/ with
// "Authorization: Bearer <ACTIONS_RUNTIME_TOKEN>": GetCacheEntryDownloadURL
// {key: prefix, restore_keys: [prefix], version}, then a GET of the signed URL; for
// a save CreateCacheEntry {key, version}, the upload to the signed URL by the Azure
// SDK (one PUT with x-ms-blob-type: BlockBlob under 1 MiB, else PUT ?comp=block per
// 1 MiB block and PUT ?comp=blocklist), then FinalizeCacheEntryUpload {key,
// version, size_bytes}. version is the library's constant, so entries written by
// actions/cache never match. v1 (GHES) uses <ACTIONS_CACHE_URL>_apis/artifactcache/:
// GET cache?keys=&version=, POST caches, PATCH caches/<id>, POST caches/<id>.
package cache

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
	"sync"
	"time"

	actionscache "github.com/tonistiigi/go-actions-cache"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// DefaultPrefix is the default of the cache-key-prefix input.
const DefaultPrefix = "sgpu-weights"

// DefaultMaxBytes bounds the blob a restore accepts and a save writes. A weight
// table line is ~50-100 bytes, so this is far above any real table (TE's have a few
// thousand lines) while keeping a wrong or hostile entry from filling memory.
const DefaultMaxBytes = 16 << 20

// Default time bounds of one restore (lookup + download) and one save (reserve +
// upload + finalize).
const (
	DefaultRestoreTimeout = 30 * time.Second
	DefaultSaveTimeout    = 60 * time.Second
)

// maxKeyLen is the service's limit on a key.
const maxKeyLen = 512

// maxParseWarnings bounds the warnings of one restored table; the rest are counted.
const maxParseWarnings = 5

// Config says where the table lives in the cache.
type Config struct {
	// Prefix is the cache-key-prefix input; "" means DefaultPrefix.
	Prefix string
	// Arch and Level are key parts: restore prefix "<Prefix>-<Arch>-l<Level>-".
	Arch, Level string
	// RunID and RunAttempt complete the save key
	// "<Prefix>-<Arch>-l<Level>-<RunID>-<RunAttempt>"; RunAttempt "" means "1".
	RunID, RunAttempt string
	// Leg, when set, ends the save key ("-<Leg>"): the matrix leg, so that two legs
	// of one run on one arch and level do not save under one key (the second save
	// would be refused). The caller keeps it short and free of commas.
	Leg string
	// Mode is ACTIONS_CACHE_MODE: "none", "read", "write", "write-only"; "" or an
	// unknown value allows both.
	Mode string
	// Token is ACTIONS_RUNTIME_TOKEN.
	Token string
	// ResultsURL is ACTIONS_RESULTS_URL: when set, the cache service v2 is used.
	ResultsURL string
	// CacheURL is ACTIONS_CACHE_URL: the v1 service, used when ResultsURL is empty
	// (GHES) or its v2 service answers 404.
	CacheURL string
	// Timeout bounds each Load and each Save as a whole, blob transfer included;
	// 0 means DefaultRestoreTimeout for Load and DefaultSaveTimeout for Save.
	Timeout time.Duration
	// MaxBytes bounds the blob; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Local, when set, is also kept: Save writes it too (so an artifact upload of
	// ci-weights/ keeps working), and Load falls back to it when the cache has no
	// usable entry.
	Local weights.Store
}

// ConfigFromEnv reads the runner's variables: ACTIONS_RUNTIME_TOKEN,
// ACTIONS_RESULTS_URL, ACTIONS_CACHE_URL, GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT.
//
// The service version follows actions/toolkit: v2 when ACTIONS_RESULTS_URL is set,
// except on GHES (GITHUB_SERVER_URL not github.com, *.ghe.com or *.localhost), which
// has only v1 (at ACTIONS_CACHE_URL, else at ACTIONS_RESULTS_URL). The library's
// override ACTIONS_CACHE_API_FORCE_VERSION=v1|v2 wins over both.
func ConfigFromEnv(env func(string) string, prefix, arch, level string) Config {
	c := Config{
		Prefix:     prefix,
		Arch:       arch,
		Level:      level,
		RunID:      strings.TrimSpace(env("GITHUB_RUN_ID")),
		RunAttempt: strings.TrimSpace(env("GITHUB_RUN_ATTEMPT")),
		Token:      strings.TrimSpace(env("ACTIONS_RUNTIME_TOKEN")),
		ResultsURL: strings.TrimSpace(env("ACTIONS_RESULTS_URL")),
		CacheURL:   strings.TrimSpace(env("ACTIONS_CACHE_URL")),
		Mode:       strings.TrimSpace(env("ACTIONS_CACHE_MODE")),
	}
	v1 := isGHES(env("GITHUB_SERVER_URL"))
	switch strings.TrimSpace(env("ACTIONS_CACHE_API_FORCE_VERSION")) {
	case "v1":
		v1 = true
	case "v2":
		v1 = false
	}
	if v1 && c.ResultsURL != "" {
		if c.CacheURL == "" {
			c.CacheURL = c.ResultsURL
		}
		c.ResultsURL = ""
	}
	return c
}

// isGHES tells a GitHub Enterprise Server from github.com and GHE.com.
func isGHES(serverURL string) bool {
	u, err := url.Parse(strings.TrimSpace(serverURL))
	if serverURL == "" || err != nil || u.Hostname() == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h != "github.com" && !strings.HasSuffix(h, ".ghe.com") && !strings.HasSuffix(h, ".localhost")
}

// Store keeps the weight table in the Actions cache; it implements weights.Store.
// Use one Store per run: it remembers what Load matched and what Save stored.
type Store struct {
	c       Config
	client  *http.Client
	backoff *actionscache.BackoffPool

	mu      sync.Mutex
	matched string
	saved   string
	failed  bool // the last Load failed (it warned)
	v1Only  bool // the v2 service answered 404: v1 from then on
}

// Outcome is what the last Load did; each is said in one line.
type Outcome int

const (
	// Skipped: ACTIONS_CACHE_MODE does not allow reading.
	Skipped Outcome = iota
	// Hit: a table of this arch and level was restored.
	Hit
	// OtherLevel: another level's table of this arch was restored.
	OtherLevel
	// Miss: the service has no entry under either prefix.
	Miss
	// Failed: the restore failed; Load's warning says why.
	Failed
)

var _ weights.Store = (*Store)(nil)

// New returns a store for c; nothing is contacted until Load or Save.
func New(c Config) *Store {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.RunAttempt == "" {
		c.RunAttempt = "1"
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return &Store{
		c:      c,
		client: &http.Client{},
		// The library's default pool is shared by the whole process; one per store
		// keeps a 429 back-off of one store from stalling another.
		backoff: &actionscache.BackoffPool{},
	}
}

// RestorePrefix is the key prefix a restore looks up first: this arch and level.
func (s *Store) RestorePrefix() string {
	return fmt.Sprintf("%s-%s-l%s-", s.c.Prefix, s.c.Arch, s.c.Level)
}

// ArchPrefix is the key prefix a restore falls back to: any level of this arch.
func (s *Store) ArchPrefix() string {
	return fmt.Sprintf("%s-%s-", s.c.Prefix, s.c.Arch)
}

// RunKey is the key a save stores under.
func (s *Store) RunKey() string {
	k := s.RestorePrefix() + s.c.RunID + "-" + s.c.RunAttempt
	if s.c.Leg != "" {
		k += "-" + s.c.Leg
	}
	return k
}

// CanRestore and CanSave say what ACTIONS_CACHE_MODE allows.
func (s *Store) CanRestore() bool { return s.c.Mode != "none" && s.c.Mode != "write-only" }
func (s *Store) CanSave() bool    { return s.c.Mode != "none" && s.c.Mode != "read" }

// Mode is ACTIONS_CACHE_MODE as given.
func (s *Store) Mode() string { return s.c.Mode }

// Protocol is "v2", "v1", or "" when no service URL is configured: the one in use
// (v1 once the v2 service answered 404).
func (s *Store) Protocol() string {
	s.mu.Lock()
	v1Only := s.v1Only
	s.mu.Unlock()
	switch {
	case s.c.ResultsURL != "" && !v1Only:
		return "v2"
	case s.c.CacheURL != "":
		return "v1"
	}
	return ""
}

// String names the store in logs and in run.json (so in the report): where the
// table lives, and which other level's table seeded it when that happened.
func (s *Store) String() string {
	p := s.Protocol()
	if p == "" {
		p = "unconfigured"
	}
	name := fmt.Sprintf("Actions cache (%s) %s*", p, s.RestorePrefix())
	if k := s.MatchedKey(); k != "" && !s.Hit() {
		name += fmt.Sprintf(", seeded from another level's table %s", k)
	}
	return name
}

// Outcome says what the last Load did.
func (s *Store) Outcome() Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.CanRestore():
		return Skipped
	case s.failed:
		return Failed
	case s.matched == "":
		return Miss
	case strings.HasPrefix(s.matched, s.RestorePrefix()):
		return Hit
	}
	return OtherLevel
}

// Hit reports whether Load restored a usable table of this arch and level (save keys
// are run-unique, so actions/cache's "the key matched exactly" would never be true;
// another level's table is restored, and said, but is no hit).
func (s *Store) Hit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matched != "" && strings.HasPrefix(s.matched, s.RestorePrefix())
}

// OtherLevel reports whether Load restored another level's table of this arch.
func (s *Store) OtherLevel() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matched != "" && !strings.HasPrefix(s.matched, s.RestorePrefix())
}

// MatchedKey is the key of the entry Load restored (of this level or another), ""
// when it restored none.
func (s *Store) MatchedKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matched
}

// SavedKey is the key Save stored the table under (or found already stored), ""
// when it did not.
func (s *Store) SavedKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// Load restores the newest table under RestorePrefix, else under ArchPrefix (when
// ACTIONS_CACHE_MODE allows reading). It never returns an error:
// a miss is an empty table without warnings; a failure is one warning. On a miss or
// a failure the Local table is used when Local is set and holds any weight (an
// older table orders the queue better than none; the order only affects speed),
// otherwise the table is empty.
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

// restore returns the restored table and its key; a nil table and nil error is a
// miss. Warnings are about lines of an otherwise usable table.
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

// loadEntry downloads the newest entry whose key starts with the first of keys,
// else with the next (the service's rule), up to MaxBytes+1 bytes; "" is a miss.
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

// LoadBlob restores the newest entry whose key starts with prefix: state other
// than the weight table (the re-run state, docs/reruns.md). "" is a miss; a blob
// over MaxBytes is an error. The error is one line, meant to be a warning.
func (s *Store) LoadBlob(ctx context.Context, prefix string) (string, []byte, error) {
	if !s.CanRestore() {
		return "", nil, nil
	}
	if err := s.ready(prefix); err != nil {
		return "", nil, err
	}
	key, data, err := s.loadEntry(ctx, prefix)
	if err != nil {
		return "", nil, errors.New(oneLine("cache: restore of "+prefix+"* failed: "+s.describe(ctx, err, s.timeout(DefaultRestoreTimeout)), s.c.Token))
	}
	if int64(len(data)) > s.c.MaxBytes {
		return "", nil, fmt.Errorf("cache: entry %s is over the %d-byte limit; not used", key, s.c.MaxBytes)
	}
	return key, data, nil
}

// SaveBlob stores data under key (when ACTIONS_CACHE_MODE allows writing); a key
// already stored counts as saved. The error is one line, meant to be a warning.
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

// Save writes the table to Local (if set) and to the cache under RunKey (when
// ACTIONS_CACHE_MODE allows writing). A key that already exists counts as saved. The
// error is one line, meant to be a warning.
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

// checkKey applies the service's rules on keys, so that a bad prefix input is named
// here instead of in an HTTP 400.
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

// call runs f with a client of the service in use (guarded). When the v2 service
// answers HTTP 404 and ACTIONS_CACHE_URL is set, the store moves to v1 and f runs
// again there.
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

// open builds the client of the service in use; it parses (without verifying) the
// token's claims. The context deadline bounds every call; timeout also bounds the
// library's own wait on 429 answers.
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

// guard runs a library call, turning a panic into an error: the library
// dereferences fields of server answers unchecked (an upload answer without
// x-ms-request-id panics), and a cache must never end the run.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the cache client failed on an unexpected answer: %v", p)
		}
	}()
	return f()
}
