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
