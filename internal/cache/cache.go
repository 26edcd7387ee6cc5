// Package cache keeps the weight table in the GitHub Actions cache (docs/weights.md) through
// github.com/tonistiigi/go-actions-cache. The cache only makes a run faster, so nothing here fails a run:
// every problem is a one-line warning, and no warning holds the token or a signed URL's signature.
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
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	actionscache "github.com/tonistiigi/go-actions-cache"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// DefaultPrefix is the default of the cache-key-prefix input.
const DefaultPrefix = "sgpu-weights"

// DefaultMaxBytes bounds a blob: far above any real table, but a hostile entry cannot fill memory.
const DefaultMaxBytes = 16 << 20

// Default time bounds of one restore and one save, transfers included.
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
	// RunID and RunAttempt complete the save key; RunAttempt "" means "1".
	RunID, RunAttempt string
	// Leg, when set, ends the save key, so two matrix legs of one run do not save under one key.
	Leg string
	// Mode is ACTIONS_CACHE_MODE (docs/weights.md); "" or an unknown value allows both.
	Mode string
	// Token is ACTIONS_RUNTIME_TOKEN.
	Token string
	// ResultsURL is ACTIONS_RESULTS_URL: when set, the cache service v2 is used.
	ResultsURL string
	// CacheURL is ACTIONS_CACHE_URL: v1, used on GHES or when v2 answers 404.
	CacheURL string
	// Timeout bounds each Load and Save as a whole; 0 means the defaults.
	Timeout time.Duration
	// MaxBytes bounds the blob; 0 means DefaultMaxBytes.
	MaxBytes int64
	// Local, when set, is saved too (an artifact of ci-weights/ keeps working) and Load falls back to it.
	Local weights.Store
}

// ConfigFromEnv reads the runner's variables. v2 when ACTIONS_RESULTS_URL is set, except on GHES, as actions/toolkit
// does; ACTIONS_CACHE_API_FORCE_VERSION wins over both.
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

// Store keeps the weight table in the Actions cache; one per run, as it remembers what it loaded and saved.
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
		// One pool per store, so one store's 429 back-off does not stall another.
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

// Protocol is the service in use: "v2", "v1", or "" when none is configured.
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

// String names the store in logs and run.json: where the table lives, and which level's table seeded it.
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

// Hit reports whether Load restored this arch and level's table; save keys are run-unique, so an exact
// key never matches.
func (s *Store) Hit() bool { return s.Outcome() == Hit }

// OtherLevel reports whether Load restored another level's table of this arch.
func (s *Store) OtherLevel() bool { return s.Outcome() == OtherLevel }

// MatchedKey is the key of the entry Load restored, "" when none.
func (s *Store) MatchedKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matched
}

// SavedKey is the key Save stored under or found stored, "" when it did not.
func (s *Store) SavedKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}
