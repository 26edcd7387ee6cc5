package cache

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/cache/cachetest"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// testTimeout bounds every cache call of the tests that expect answers; the tests
// that prove the bound use a short one instead.
const testTimeout = 20 * time.Second

func config(srv *cachetest.Server, proto, runID string) Config {
	c := Config{
		Arch: "gfx942", Level: "1", RunID: runID, RunAttempt: "1",
		Token: srv.Token(), Timeout: testTimeout,
	}
	if proto == "v1" {
		c.CacheURL = srv.CacheURL()
	} else {
		c.ResultsURL = srv.ResultsURL()
	}
	return c
}

func table(kv ...any) *weights.Table {
	t := weights.New()
	for i := 0; i < len(kv); i += 2 {
		t.Set(kv[i].(string), kv[i+1].(float64))
	}
	return t
}

func text(t *testing.T, tb *weights.Table) string {
	t.Helper()
	var b bytes.Buffer
	if err := tb.Format(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkWarnings asserts the rules every warning obeys: one line, no token.
func checkWarnings(t *testing.T, token string, warns ...string) {
	t.Helper()
	for _, w := range warns {
		if strings.ContainsAny(w, "\r\n") {
			t.Errorf("warning is not one line: %q", w)
		}
		if token != "" && strings.Contains(w, token) {
			t.Errorf("warning contains the token: %q", w)
		}
		for _, part := range strings.Split(token, ".") {
			if len(part) >= 16 && strings.Contains(w, part) {
				t.Errorf("warning contains part of the token: %q", w)
			}
		}
		if strings.Contains(w, "sig=") {
			t.Errorf("warning contains a URL signature: %q", w)
		}
	}
}

func load(t *testing.T, c Config) (*Store, *weights.Table, []string) {
	t.Helper()
	s := New(c)
	tb, warns, err := s.Load(context.Background())
	if err != nil {
		t.Fatalf("Load returned an error (it must only warn): %v", err)
	}
	if tb == nil {
		t.Fatal("Load returned a nil table")
	}
	checkWarnings(t, c.Token, warns...)
	return s, tb, warns
}

// TestRoundTrip is the life of the table over several runs: a miss, a save, a
// restore by prefix from a later run, newest of several saves wins, a second save
// of the same key is fine, and entries of another arch/level or version never match.
func TestRoundTrip(t *testing.T) {
	for _, proto := range []string{"v2", "v1"} {
		t.Run(proto, func(t *testing.T) {
			srv := cachetest.New(t)
			ctx := context.Background()

			// Run 100: nothing cached yet.
			s, tb, warns := load(t, config(srv, proto, "100"))
			if len(warns) != 0 || tb.Len() != 0 || s.Hit() || s.MatchedKey() != "" {
				t.Fatalf("first run: want a silent miss, got %d keys, hit=%v, warnings %q", tb.Len(), s.Hit(), warns)
			}
			a := table("suite_a/t1", 120.0, "suite_a/t2", 3.5, "opaque", 40.0)
			if err := s.Save(ctx, a); err != nil {
				t.Fatalf("save: %v", err)
			}
			if got, want := s.SavedKey(), "sgpu-weights-gfx942-l1-100-1"; got != want {
				t.Fatalf("saved key %q, want %q", got, want)
			}
			e, ok := srv.Lookup("sgpu-weights-gfx942-l1-100-1", "")
			if !ok || string(e.Data) != text(t, a) {
				t.Fatalf("server entry: found=%v data %q, want the table text %q", ok, e.Data, text(t, a))
			}

			// Run 101 restores run 100's table by prefix and saves a new one.
			s, tb, warns = load(t, config(srv, proto, "101"))
			if len(warns) != 0 || !s.Hit() || s.MatchedKey() != "sgpu-weights-gfx942-l1-100-1" || text(t, tb) != text(t, a) {
				t.Fatalf("second run: hit=%v key=%q warnings %q table %q", s.Hit(), s.MatchedKey(), warns, text(t, tb))
			}
			b := table("suite_a/t1", 100.0, "suite_a/t3", 7.0)
			if err := s.Save(ctx, b); err != nil {
				t.Fatalf("save: %v", err)
			}

			// Entries that must never match: another arch, another level, another
			// version (actions/cache's own), all newer than run 101's.
			srv.Put("sgpu-weights-gfx950-l1-102-1", "", []byte("other_arch 1.0\n"))
			srv.Put("sgpu-weights-gfx942-l2-102-1", "", []byte("other_level 1.0\n"))
			srv.Put("sgpu-weights-gfx942-l1-102-1", "0123456789abcdef", []byte("other_version 1.0\n"))

			// Run 103: the newest of the two saves wins.
			s, tb, warns = load(t, config(srv, proto, "103"))
			if len(warns) != 0 || s.MatchedKey() != "sgpu-weights-gfx942-l1-101-1" || text(t, tb) != text(t, b) {
				t.Fatalf("third run: key=%q warnings %q table %q, want run 101's", s.MatchedKey(), warns, text(t, tb))
			}

			// A rerun of 101 (same key) saving again: already exists = done.
			s = New(config(srv, proto, "101"))
			if err := s.Save(ctx, a); err != nil {
				t.Fatalf("save of an existing key must succeed, got %v", err)
			}
			if s.SavedKey() != "sgpu-weights-gfx942-l1-101-1" {
				t.Fatalf("saved key %q", s.SavedKey())
			}
			if e, _ := srv.Lookup("sgpu-weights-gfx942-l1-101-1", ""); string(e.Data) != text(t, b) {
				t.Fatalf("an existing entry changed: %q", e.Data)
			}
		})
	}
}

// Restore order: this level's newest entry, even when another level's is newer; else
// the newest entry of any level of the arch, which is restored and said but is no hit;
// another arch never. The same on v1 (GHES).
func TestRestoreOrder(t *testing.T) {
	for _, proto := range []string{"v2", "v1"} {
		t.Run(proto, func(t *testing.T) {
			srv := cachetest.New(t)
			srv.Put("sgpu-weights-gfx950-l1-1-1", "", []byte("other_arch 1.0\n"))
			srv.Put("sgpu-weights-gfx942-l3-2-1", "", []byte("level3_old 1.0\n"))
			srv.Put("sgpu-weights-gfx942-l3-3-1", "", []byte("level3 3.0\n"))

			s, tb, warns := load(t, config(srv, proto, "10"))
			if len(warns) != 0 || s.Hit() || !s.OtherLevel() || s.MatchedKey() != "sgpu-weights-gfx942-l3-3-1" || text(t, tb) != "level3 3.0\n" {
				t.Fatalf("level 1 without its own entry: hit=%v other=%v key=%q table %q warnings %q", s.Hit(), s.OtherLevel(), s.MatchedKey(), text(t, tb), warns)
			}
			if !strings.Contains(s.String(), "seeded from another level's table sgpu-weights-gfx942-l3-3-1") {
				t.Errorf("the store's name does not say where the table came from: %s", s)
			}

			srv.Put("sgpu-weights-gfx942-l1-11-1", "", []byte("level1 1.0\n"))
			srv.Put("sgpu-weights-gfx942-l3-12-1", "", []byte("level3_newer 1.0\n"))
			s, tb, _ = load(t, config(srv, proto, "13"))
			if !s.Hit() || s.OtherLevel() || s.MatchedKey() != "sgpu-weights-gfx942-l1-11-1" || text(t, tb) != "level1 1.0\n" {
				t.Fatalf("own level first: hit=%v key=%q table %q", s.Hit(), s.MatchedKey(), text(t, tb))
			}
			if strings.Contains(s.String(), "another level") {
				t.Errorf("a hit of this level says otherwise: %s", s)
			}
		})
	}
}

// ACTIONS_CACHE_MODE: what it forbids is never asked of the service, and the local
// table still works; unset or unknown modes change nothing.
func TestCacheMode(t *testing.T) {
	cases := []struct {
		mode                string
		restores, saves     bool
		canRestore, canSave bool
	}{
		{"", true, true, true, true},
		{"write", true, true, true, true},
		{"read", true, false, true, false},
		{"write-only", false, true, false, true},
		{"none", false, false, false, false},
		{"sideways", true, true, true, true},
	}
	for _, tc := range cases {
		t.Run("mode="+tc.mode, func(t *testing.T) {
			srv := cachetest.New(t)
			srv.Put("sgpu-weights-gfx942-l1-1-1", "", []byte("cached 1.0\n"))
			local := weights.File{Path: filepath.Join(t.TempDir(), "w.txt")}
			c := config(srv, "v2", "2")
			c.Mode, c.Local = tc.mode, local
			s, tb, warns := load(t, c)
			if s.CanRestore() != tc.canRestore || s.CanSave() != tc.canSave {
				t.Errorf("CanRestore %v CanSave %v", s.CanRestore(), s.CanSave())
			}
			if len(warns) != 0 || s.Hit() != tc.restores || (text(t, tb) == "cached 1.0\n") != tc.restores {
				t.Errorf("restore: hit=%v table %q warnings %q", s.Hit(), text(t, tb), warns)
			}
			if err := s.Save(context.Background(), table("k", 2.0)); err != nil {
				t.Fatal(err)
			}
			if _, ok := srv.Lookup("sgpu-weights-gfx942-l1-2-1", ""); ok != tc.saves || (s.SavedKey() != "") != tc.saves {
				t.Errorf("save: entry %v, saved key %q", ok, s.SavedKey())
			}
			if got := len(srv.CallsTo(cachetest.OpGetDownloadURL)); (got > 0) != tc.restores {
				t.Errorf("%d lookups", got)
			}
			if got := len(srv.CallsTo(cachetest.OpCreate)); (got > 0) != tc.saves {
				t.Errorf("%d creates", got)
			}
			if lt, _, _ := local.Load(context.Background()); text(t, lt) != "k 2.0\n" {
				t.Errorf("the local table was not written: %q", text(t, lt))
			}
		})
	}
}

// Two matrix legs of one run on one arch and level save under two keys.
func TestLegKeys(t *testing.T) {
	srv := cachetest.New(t)
	for _, leg := range []string{"build_and_test-linux-mi300x", "build_and_test-linux-mi325x"} {
		c := config(srv, "v2", "5")
		c.Leg = leg
		s := New(c)
		if err := s.Save(context.Background(), table("k", 1.0)); err != nil {
			t.Fatal(err)
		}
		if want := "sgpu-weights-gfx942-l1-5-1-" + leg; s.SavedKey() != want {
			t.Errorf("saved %q, want %q", s.SavedKey(), want)
		}
	}
	if n := len(srv.Entries()); n != 2 {
		t.Errorf("%d entries, want one per leg", n)
	}
}

// TestWireProtocol checks the calls the library makes on the wire: bearer token on
// service calls only, the library's constant version, the prefix as key and restore
// key, a single Put Blob for a small table.
func TestWireProtocol(t *testing.T) {
	srv := cachetest.New(t)
	s := New(config(srv, "v2", "7"))
	if _, _, err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), table("k", 1.0)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, c := range srv.Calls() {
		ops = append(ops, string(c.Op))
		auth := c.Header.Get("Authorization")
		if strings.HasPrefix(string(c.Op), "Blob") {
			if auth != "" {
				t.Errorf("%s carries an Authorization header; signed URLs need none", c.Op)
			}
			continue
		}
		if auth != "Bearer "+srv.Token() {
			t.Errorf("%s: Authorization %q, want the bearer token", c.Op, auth)
		}
		if !bytes.Contains(c.Body, []byte(`"version":"`+cachetest.LibraryVersion()+`"`)) {
			t.Errorf("%s: body %s lacks the library's version", c.Op, c.Body)
		}
	}
	want := "GetCacheEntryDownloadURL CreateCacheEntry BlobPut FinalizeCacheEntryUpload GetCacheEntryDownloadURL BlobGet"
	if got := strings.Join(ops, " "); got != want {
		t.Fatalf("calls:\n got %s\nwant %s", got, want)
	}
	get := srv.CallsTo(cachetest.OpGetDownloadURL)[0]
	if want := `{"key":"sgpu-weights-gfx942-l1-","restore_keys":["sgpu-weights-gfx942-l1-","sgpu-weights-gfx942-"],`; !bytes.HasPrefix(get.Body, []byte(want)) {
		t.Errorf("lookup body %s, want prefix %s", get.Body, want)
	}
	put := srv.CallsTo(cachetest.OpBlobPut)[0]
	if put.Header.Get("x-ms-blob-type") != "BlockBlob" {
		t.Errorf("Put Blob without x-ms-blob-type: BlockBlob: %v", put.Header)
	}
}

// TestBlockUpload saves a table of more than 1 MiB, which the Azure SDK uploads as
// staged blocks plus a block list instead of one PUT.
func TestBlockUpload(t *testing.T) {
	srv := cachetest.New(t)
	big := weights.New()
	for i := 0; big.Len() < 30000; i++ {
		big.Set(fmt.Sprintf("tests/pytorch/test_numerics_%05d.py/test_case_with_a_long_parametrized_name[%d]", i, i), float64(i%997)+0.5)
	}
	s := New(config(srv, "v2", "1"))
	if err := s.Save(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	blocks, lists, puts := len(srv.CallsTo(cachetest.OpBlobBlock)), len(srv.CallsTo(cachetest.OpBlobBlockList)), len(srv.CallsTo(cachetest.OpBlobPut))
	if blocks < 2 || lists != 1 || puts != 0 {
		t.Fatalf("want ≥2 comp=block + 1 comp=blocklist and no single PUT, got %d, %d, %d", blocks, lists, puts)
	}
	s, got, warns := load(t, config(srv, "v2", "2"))
	if len(warns) != 0 || !s.Hit() || text(t, got) != text(t, big) {
		t.Fatalf("restore of the big table: hit=%v, %d keys of %d, warnings %q", s.Hit(), got.Len(), big.Len(), warns)
	}
}

func TestVersionMismatchIsAMiss(t *testing.T) {
	srv := cachetest.New(t)
	srv.Put("sgpu-weights-gfx942-l1-5-1", "a-version-of-actions/cache", []byte("k 1.0\n"))
	s, tb, warns := load(t, config(srv, "v2", "6"))
	if s.Hit() || tb.Len() != 0 || len(warns) != 0 {
		t.Fatalf("want a silent miss, got hit=%v %d keys warnings %q", s.Hit(), tb.Len(), warns)
	}
}

// TestFailures: every way the cache can fail is a warning from Load (with an empty
// table) and an error from Save, never a hang and never the token in the text.
func TestFailures(t *testing.T) {
	garbage := []byte("\x1f\x8b\x08\x00binary\x00data")
	html := []byte("<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>\n")
	var many bytes.Buffer
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&many, "suite/t%03d %d.0\n", i, i)
	}
	cases := []struct {
		name      string
		setup     func(t *testing.T, srv *cachetest.Server, c *Config)
		seed      []byte // a matching entry to restore, if any
		wantLoad  string // in the Load warning
		wantSave  string // in the Save error
		saveCalls bool   // whether Save reaches the server
	}{
		{"no token", func(t *testing.T, srv *cachetest.Server, c *Config) { c.Token = "" }, nil,
			"ACTIONS_RUNTIME_TOKEN is not set", "ACTIONS_RUNTIME_TOKEN is not set", false},
		{"no URL", func(t *testing.T, srv *cachetest.Server, c *Config) { c.ResultsURL = "" }, nil,
			"neither ACTIONS_RESULTS_URL nor ACTIONS_CACHE_URL", "neither ACTIONS_RESULTS_URL", false},
		{"bad URL", func(t *testing.T, srv *cachetest.Server, c *Config) { c.ResultsURL = "results.example/" }, nil,
			"ACTIONS_RESULTS_URL is not an http(s) URL", "ACTIONS_RESULTS_URL is not an http(s) URL", false},
		{"not a JWT", func(t *testing.T, srv *cachetest.Server, c *Config) { c.Token = "ghs_notajwtatallbutsecretlooking" }, nil,
			"ACTIONS_RUNTIME_TOKEN unusable", "ACTIONS_RUNTIME_TOKEN unusable", false},
		{"expired token", func(t *testing.T, srv *cachetest.Server, c *Config) {
			c.Token = cachetest.NewToken(t, srv.Secret(), cachetest.RunnerClaims(-time.Hour))
		}, nil, "expired", "expired", false},
		{"token without ac", func(t *testing.T, srv *cachetest.Server, c *Config) {
			cl := cachetest.RunnerClaims(time.Hour)
			delete(cl, "ac")
			c.Token = cachetest.NewToken(t, srv.Secret(), cl)
		}, nil, "access controls", "access controls", false},
		{"wrong token", func(t *testing.T, srv *cachetest.Server, c *Config) {
			c.Token = cachetest.NewToken(t, []byte("another secret"), cachetest.RunnerClaims(time.Hour))
		}, nil, "HTTP 401", "HTTP 401", true},
		{"failing server", func(t *testing.T, srv *cachetest.Server, c *Config) { srv.SetMode(cachetest.Fail) }, []byte("k 1.0\n"),
			"HTTP 500", "HTTP 500", true},
		{"hanging server", func(t *testing.T, srv *cachetest.Server, c *Config) {
			srv.SetMode(cachetest.Hang)
			c.Timeout = 300 * time.Millisecond
		}, []byte("k 1.0\n"), "did not finish within 300ms", "did not finish within 300ms", true},
		{"hanging blob storage", func(t *testing.T, srv *cachetest.Server, c *Config) {
			srv.SetMode(cachetest.Hang, cachetest.OpBlobGet, cachetest.OpBlobPut)
			c.Timeout = 300 * time.Millisecond
		}, []byte("k 1.0\n"), "did not finish within 300ms", "did not finish within 300ms", true},
		{"failing blob storage", func(t *testing.T, srv *cachetest.Server, c *Config) {
			// The Azure SDK retries a 500 after 10 s; the timeout ends it.
			srv.SetMode(cachetest.Fail, cachetest.OpBlobGet, cachetest.OpBlobPut)
			c.Timeout = 300 * time.Millisecond
		}, []byte("k 1.0\n"), "did not finish within 300ms", "did not finish within 300ms", true},
		{"failing finalize", func(t *testing.T, srv *cachetest.Server, c *Config) {
			srv.SetMode(cachetest.Fail, cachetest.OpFinalize)
		}, nil, "", "HTTP 500", true},
		{"binary blob", nil, garbage, "binary data, not a weight table", "", true},
		{"html blob", nil, html, "not a weight table: 5 lines", "", true},
		{"huge blob", func(t *testing.T, srv *cachetest.Server, c *Config) { c.MaxBytes = 1000 }, many.Bytes(),
			"larger than 1000 bytes", "", true},
		{"table over the cap", func(t *testing.T, srv *cachetest.Server, c *Config) { c.MaxBytes = 5 }, nil,
			"", "over the 5-byte limit", false},
		{"comma in prefix", func(t *testing.T, srv *cachetest.Server, c *Config) { c.Prefix = "a,b" }, nil,
			"contains a comma", "contains a comma", false},
		{"no run id", func(t *testing.T, srv *cachetest.Server, c *Config) { c.RunID = "" }, nil,
			"", "GITHUB_RUN_ID is not set", false},
		{"no v2 service and no v1", func(t *testing.T, srv *cachetest.Server, c *Config) { srv.SetMode(cachetest.NotFound) }, []byte("k 1.0\n"),
			"failed: cache service answered HTTP 404 Not Found (no cache service v2 at ACTIONS_RESULTS_URL, and no ACTIONS_CACHE_URL to fall back to v1)",
			"failed: cache service answered HTTP 404 Not Found (no cache service v2", true},
		{"no v2 service, v1 failing", func(t *testing.T, srv *cachetest.Server, c *Config) {
			srv.SetMode(cachetest.NotFound, cachetest.OpGetDownloadURL, cachetest.OpCreate)
			srv.SetMode(cachetest.Fail, cachetest.OpV1Query, cachetest.OpV1Reserve)
			c.CacheURL = srv.CacheURL()
		}, []byte("k 1.0\n"), "the v2 service at ACTIONS_RESULTS_URL answered HTTP 404, so v1 at ACTIONS_CACHE_URL was used: cache service answered HTTP 500",
			"the v2 service at ACTIONS_RESULTS_URL answered HTTP 404, so v1 at ACTIONS_CACHE_URL was used: cache service answered HTTP 500", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := cachetest.New(t)
			if tc.seed != nil {
				srv.Put("sgpu-weights-gfx942-l1-1-1", "", tc.seed)
			}
			c := config(srv, "v2", "2")
			if tc.setup != nil {
				tc.setup(t, srv, &c)
			}
			s, tb, warns := load(t, c)
			if want := map[bool]Outcome{true: Failed, false: Miss}[tc.wantLoad != ""]; s.Outcome() != want {
				t.Errorf("Outcome %v, want %v", s.Outcome(), want)
			}
			if s.Hit() || s.MatchedKey() != "" || tb.Len() != 0 {
				t.Errorf("Load: hit=%v key=%q %d keys, want an empty table and no hit", s.Hit(), s.MatchedKey(), tb.Len())
			}
			switch {
			case tc.wantLoad == "" && len(warns) != 0:
				t.Errorf("Load warnings %q, want none", warns)
			case tc.wantLoad != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.wantLoad)):
				t.Errorf("Load warnings %q, want one containing %q", warns, tc.wantLoad)
			}

			before := len(srv.Calls())
			err := s.Save(context.Background(), table("k", 2.0))
			t.Logf("Load warnings: %q; Save: %v", warns, err)
			if tc.wantSave == "" {
				if err != nil {
					t.Errorf("Save: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantSave) {
				t.Errorf("Save error %v, want one containing %q", err, tc.wantSave)
			} else {
				checkWarnings(t, c.Token, err.Error())
			}
			if s.SavedKey() != "" {
				t.Errorf("SavedKey %q after a failed save", s.SavedKey())
			}
			if reached := len(srv.Calls()) > before; reached != tc.saveCalls {
				t.Errorf("Save reached the server: %v, want %v", reached, tc.saveCalls)
			}
		})
	}
}

// TestParseWarningsCapped: a table with some corrupt lines is used; the warnings
// about its lines are capped.
func TestParseWarningsCapped(t *testing.T) {
	srv := cachetest.New(t)
	var b bytes.Buffer
	b.WriteString("good/one 10.0\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "bad line %d x\n", i)
	}
	srv.Put("sgpu-weights-gfx942-l1-1-1", "", b.Bytes())
	s, tb, warns := load(t, config(srv, "v2", "2"))
	if !s.Hit() || tb.Len() != 1 {
		t.Fatalf("hit=%v keys=%d, want the good line", s.Hit(), tb.Len())
	}
	if len(warns) != maxParseWarnings+1 || !strings.Contains(warns[maxParseWarnings], "15 more corrupt lines") {
		t.Fatalf("warnings %q", warns)
	}
	if !strings.HasPrefix(warns[0], "cache:sgpu-weights-gfx942-l1-1-1:2: ") {
		t.Fatalf("warning does not name the entry and line: %q", warns[0])
	}
}

// TestLocal: with Local set, Save writes the file too, and a miss or a failure falls
// back to the file; a hit uses the cache.
func TestLocal(t *testing.T) {
	srv := cachetest.New(t)
	local := weights.File{Path: filepath.Join(t.TempDir(), "ci-weights", "test_weights.gfx942.l1.txt")}
	c := config(srv, "v2", "1")
	c.Local = local

	s, tb, warns := load(t, c)
	if s.Hit() || tb.Len() != 0 || len(warns) != 0 {
		t.Fatalf("empty cache, no file: hit=%v keys=%d warnings %q", s.Hit(), tb.Len(), warns)
	}
	a := table("a", 5.0)
	if err := s.Save(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if lt, _, _ := local.Load(context.Background()); text(t, lt) != text(t, a) {
		t.Fatalf("local file holds %q", text(t, lt))
	}

	// A newer local file but a cache hit: the cache wins.
	if err := local.Save(context.Background(), table("from_file", 1.0)); err != nil {
		t.Fatal(err)
	}
	s, tb, _ = load(t, c)
	if !s.Hit() || text(t, tb) != text(t, a) {
		t.Fatalf("hit=%v table %q, want the cached one", s.Hit(), text(t, tb))
	}

	// A failing cache: the file, with a warning saying so.
	srv.SetMode(cachetest.Fail)
	s, tb, warns = load(t, c)
	if s.Hit() || text(t, tb) != "from_file 1.0\n" || len(warns) != 1 || !strings.Contains(warns[0], "using the local table "+local.Path) {
		t.Fatalf("hit=%v table %q warnings %q", s.Hit(), text(t, tb), warns)
	}
	// Save still writes the file, and reports the cache failure.
	err := s.Save(context.Background(), table("b", 6.0))
	if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("save error %v", err)
	}
	if lt, _, _ := local.Load(context.Background()); text(t, lt) != "b 6.0\n" {
		t.Fatalf("local file holds %q", text(t, lt))
	}

	// A miss (another arch): the file, silently.
	srv.SetMode(cachetest.Normal)
	c.Arch = "gfx950"
	s, tb, warns = load(t, c)
	if s.Hit() || text(t, tb) != "b 6.0\n" || len(warns) != 0 {
		t.Fatalf("hit=%v table %q warnings %q", s.Hit(), text(t, tb), warns)
	}
}

// TestTokenNeverInWarnings runs against a server that echoes everything it got,
// token included, in its error bodies and in signed URLs.
func TestTokenNeverInWarnings(t *testing.T) {
	srv := cachetest.New(t) // only for a valid token
	tok := srv.Token()
	for _, status := range []int{http.StatusOK, http.StatusBadRequest, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var echo *httptest.Server
			echo = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth := r.Header.Get("Authorization")
				if strings.HasPrefix(r.URL.Path, "/blob") {
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprintf(w, "<Error><Code>AuthenticationFailed</Code><Message>%s\n%s</Message></Error>", r.URL, auth)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				// A download URL whose signature is the token, and the token in
				// every field the library might quote.
				fmt.Fprintf(w, `{"ok":true,"signed_download_url":"%s/blob?sig=%s","signed_upload_url":"%s/blob?sig=%s","matched_key":"%s","msg":"%s","message":"%s\n%s"}`,
					echo.URL, tok, echo.URL, tok, tok, auth, auth, tok)
			}))
			defer echo.Close()
			c := Config{Arch: "x", Level: "1", RunID: "1", Token: tok, ResultsURL: echo.URL + "/", Timeout: testTimeout}
			_, _, warns := load(t, c)
			if len(warns) == 0 {
				t.Fatal("want a warning")
			}
			err := New(c).Save(context.Background(), table("k", 1.0))
			if err == nil {
				t.Fatal("want a save error")
			}
			checkWarnings(t, tok, append(warns, err.Error())...)
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{
		"ACTIONS_RUNTIME_TOKEN": " tok\n",
		"ACTIONS_RESULTS_URL":   "https://results-receiver.actions.githubusercontent.com/",
		"ACTIONS_CACHE_URL":     "https://artifactcache.actions.githubusercontent.com/abc/",
		"GITHUB_RUN_ID":         "123",
		"GITHUB_RUN_ATTEMPT":    "2",
	}
	cases := []struct {
		name             string
		env              map[string]string
		wantProto        string
		wantURL, wantKey string
	}{
		{"github.com", map[string]string{"GITHUB_SERVER_URL": "https://github.com"}, "v2", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-2"},
		{"ghe.com", map[string]string{"GITHUB_SERVER_URL": "https://acme.ghe.com"}, "v2", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-2"},
		{"no server URL", map[string]string{}, "v2", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-2"},
		{"GHES uses v1", map[string]string{"GITHUB_SERVER_URL": "https://ghes.corp.example"}, "v1", base["ACTIONS_CACHE_URL"], "p-gfx942-l1-123-2"},
		{"GHES without cache URL", map[string]string{"GITHUB_SERVER_URL": "https://ghes.corp.example", "ACTIONS_CACHE_URL": ""}, "v1", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-2"},
		{"forced v2 on GHES", map[string]string{"GITHUB_SERVER_URL": "https://ghes.corp.example", "ACTIONS_CACHE_API_FORCE_VERSION": "v2"}, "v2", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-2"},
		{"forced v1", map[string]string{"ACTIONS_CACHE_API_FORCE_VERSION": "v1"}, "v1", base["ACTIONS_CACHE_URL"], "p-gfx942-l1-123-2"},
		{"v1 only", map[string]string{"ACTIONS_RESULTS_URL": ""}, "v1", base["ACTIONS_CACHE_URL"], "p-gfx942-l1-123-2"},
		{"no attempt", map[string]string{"GITHUB_RUN_ATTEMPT": ""}, "v2", base["ACTIONS_RESULTS_URL"], "p-gfx942-l1-123-1"},
		{"nothing", map[string]string{"ACTIONS_RESULTS_URL": "", "ACTIONS_CACHE_URL": ""}, "", "", "p-gfx942-l1-123-2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := func(k string) string {
				if v, ok := tc.env[k]; ok {
					return v
				}
				return base[k]
			}
			c := ConfigFromEnv(env, "p", "gfx942", "1")
			s := New(c)
			url := c.ResultsURL
			if url == "" {
				url = c.CacheURL
			}
			if s.Protocol() != tc.wantProto || url != tc.wantURL || s.RunKey() != tc.wantKey || c.Token != "tok" {
				t.Fatalf("protocol %q url %q key %q token %q; want %q %q %q", s.Protocol(), url, s.RunKey(), c.Token, tc.wantProto, tc.wantURL, tc.wantKey)
			}
		})
	}
	if got := New(ConfigFromEnv(func(string) string { return "" }, "", "gfx90a", "3")).RestorePrefix(); got != "sgpu-weights-gfx90a-l3-" {
		t.Fatalf("default prefix: %q", got)
	}
}

func TestOneLine(t *testing.T) {
	const tok = "eyJhbGciOiJIUzI1NiJ9.eyJhYyI6IltdIiwiZXhwIjoxfQ.c2lnbmF0dXJlc2lnbmF0dXJlc2ln"
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"two\nlines\r\n\tand  tabs", "two lines and tabs"},
		{"Bearer " + tok, "Bearer ***"},
		{"payload eyJhYyI6IltdIiwiZXhwIjoxfQ quoted", "payload *** quoted"},
		{`Get "https://blob.example/c/k?sv=1&sig=abc%2F": EOF`, `Get "https://blob.example/c/k?…": EOF`},
		{"bell\a and \x00nul and \xff bad", "bell? and ?nul and ? bad"},
		{"line\u2028sep\u0085nel", "line sep nel"},
		{strings.Repeat("x", 500), strings.Repeat("x", maxWarning-1) + "…"},
	}
	for _, tc := range cases {
		if got := oneLine(tc.in, tok); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeBlob(t *testing.T) {
	cases := []struct {
		name, in string
		keys     int
		warns    int
		err      string
	}{
		{"empty", "", 0, 0, ""},
		{"comments only", "# weights\n\n", 0, 0, ""},
		{"TE table", "# te\ntests/pytorch/test_a.py 120.5\ntests/pytorch/test_b.py/case[1] 3.0\n", 2, 0, ""},
		{"CRLF and BOM", "\xef\xbb\xbfa 1.0\r\nb 2.0\r\n", 2, 0, ""},
		{"one corrupt line", "a 1.0\nb x\n", 1, 1, ""},
		{"all corrupt", "a\nb\n", 0, 0, "none of them"},
		{"NUL", "a 1.0\x00\n", 0, 0, "binary data"},
		{"invalid UTF-8", "a\xff 1.0\n", 0, 0, "binary data"},
		{"over the cap", strings.Repeat("a 1.0\n", 20), 0, 0, "larger than 100 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb, warns, err := decodeBlob([]byte(tc.in), "k", 100)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || tb.Len() != tc.keys || len(warns) != tc.warns {
				t.Fatalf("err %v, %d keys, warnings %q; want %d keys, %d warnings", err, tb.Len(), warns, tc.keys, tc.warns)
			}
		})
	}
}

// TestOddAnswers: a service that answers 200 with nonsense, or a blob store that
// leaves out what the library relies on, is a warning or an error, never a panic.
func TestOddAnswers(t *testing.T) {
	cases := []struct {
		name     string
		twirp    string // body of every Twirp answer (status 200)
		blob     func(w http.ResponseWriter)
		wantLoad string
		wantSave string
	}{
		{"not JSON", "<html>oops</html>", nil, "answer is not JSON", "answer is not JSON"},
		{"ok false", `{"ok":false}`, nil, "", "failed to reserve cache"},
		{"empty URLs", `{"ok":true,"matched_key":"k","signed_download_url":"","signed_upload_url":""}`, nil, "k", "failed"},
		{"bad URLs", `{"ok":true,"matched_key":"k","signed_download_url":"::bad","signed_upload_url":"::bad"}`, nil, "k", "failed"},
		{"upload answer without x-ms-request-id", `{"ok":true,"matched_key":"k","signed_download_url":"BLOB","signed_upload_url":"BLOB"}`,
			func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated) }, "not a weight table", "unexpected answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/blob") {
					if r.Method == http.MethodGet {
						fmt.Fprint(w, "<html>\n</html>\n")
						return
					}
					tc.blob(w)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, strings.ReplaceAll(tc.twirp, "BLOB", srv.URL+"/blob"))
			}))
			defer srv.Close()
			c := Config{Arch: "x", Level: "1", RunID: "1", Token: cachetest.New(t).Token(), ResultsURL: srv.URL, Timeout: testTimeout}
			s, tb, warns := load(t, c)
			if s.Hit() || tb.Len() != 0 {
				t.Errorf("hit=%v keys=%d", s.Hit(), tb.Len())
			}
			if tc.wantLoad == "" && len(warns) != 0 || tc.wantLoad != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.wantLoad)) {
				t.Errorf("Load warnings %q, want one containing %q", warns, tc.wantLoad)
			}
			err := s.Save(context.Background(), table("k", 1.0))
			if err == nil || !strings.Contains(err.Error(), tc.wantSave) {
				t.Errorf("Save error %v, want one containing %q", err, tc.wantSave)
			}
			t.Logf("Load warnings: %q; Save: %v", warns, err)
		})
	}
}

// A v2 service that answers 404 (nektos/act serves only v1) is left for v1 at
// ACTIONS_CACHE_URL: the restore finds the v1 entry, the save goes to v1, and v2 is
// asked once per store.
func TestV2NotFoundFallsBackToV1(t *testing.T) {
	srv := cachetest.New(t)
	srv.SetMode(cachetest.NotFound, cachetest.OpGetDownloadURL, cachetest.OpCreate, cachetest.OpFinalize)
	srv.Put("sgpu-weights-gfx942-l1-1-1", "", []byte("k 1.0\n"))
	c := config(srv, "v2", "2")
	c.CacheURL = srv.CacheURL()
	s, tb, warns := load(t, c)
	if len(warns) != 0 || s.Outcome() != Hit || s.MatchedKey() != "sgpu-weights-gfx942-l1-1-1" || text(t, tb) != "k 1.0\n" {
		t.Fatalf("Load: warnings %q, outcome %v, key %q, table %q", warns, s.Outcome(), s.MatchedKey(), text(t, tb))
	}
	if s.Protocol() != "v1" || !strings.Contains(s.String(), "(v1)") {
		t.Errorf("Protocol %q, String %q: want v1", s.Protocol(), s.String())
	}
	if err := s.Save(context.Background(), table("k", 2.0)); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if e, ok := srv.Lookup("sgpu-weights-gfx942-l1-2-1", ""); !ok || string(e.Data) != "k 2.0\n" {
		t.Errorf("saved entry %+v, %v", e, ok)
	}
	if n := len(srv.CallsTo(cachetest.OpGetDownloadURL)); n != 1 {
		t.Errorf("v2 asked %d times, want once", n)
	}
	if n := len(srv.CallsTo(cachetest.OpCreate)); n != 0 {
		t.Errorf("v2 CreateCacheEntry called %d times after the 404, want 0", n)
	}
	if len(srv.CallsTo(cachetest.OpV1Query)) != 1 || len(srv.CallsTo(cachetest.OpV1Commit)) != 1 {
		t.Errorf("v1 calls: %v", srv.Calls())
	}
}

// Without ACTIONS_CACHE_URL a v2 404 stays a v2 failure, said with its status.
func TestV2NotFoundWithoutV1(t *testing.T) {
	srv := cachetest.New(t)
	srv.SetMode(cachetest.NotFound)
	s, _, warns := load(t, config(srv, "v2", "2"))
	if s.Outcome() != Failed || s.Protocol() != "v2" || len(warns) != 1 || strings.Contains(warns[0], "not JSON") {
		t.Errorf("outcome %v, protocol %s, warnings %q", s.Outcome(), s.Protocol(), warns)
	}
	if len(srv.CallsTo(cachetest.OpV1Query)) != 0 {
		t.Error("v1 asked without ACTIONS_CACHE_URL")
	}
}
