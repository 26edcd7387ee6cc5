// Package cachetest is a local GitHub Actions cache server for tests, speaking the
// protocols github.com/tonistiigi/go-actions-cache uses: v2 (Twirp JSON with
// Azure-blob style signed URLs) and v1 (GHES). Entries are immutable, keyed by (key,
// version); every call is recorded, and SetMode makes calls fail, 404 or hang.
package cachetest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mode is how the server answers.
type Mode int

const (
	// Normal serves the protocol.
	Normal Mode = iota
	// Fail answers every call with HTTP 500, in the endpoint's dialect.
	Fail
	// Hang never answers, proving that the client's timeouts bound every call.
	Hang
	// NotFound answers HTTP 404 as a server without that service does (nektos/act
	// serves only v1).
	NotFound
)

// Op names one kind of call.
type Op string

const (
	OpGetDownloadURL Op = "GetCacheEntryDownloadURL" // v2 Twirp
	OpCreate         Op = "CreateCacheEntry"         // v2 Twirp
	OpFinalize       Op = "FinalizeCacheEntryUpload" // v2 Twirp
	OpBlobPut        Op = "BlobPut"                  // PUT, single-shot Put Blob
	OpBlobBlock      Op = "BlobBlock"                // PUT ?comp=block&blockid=…
	OpBlobBlockList  Op = "BlobBlockList"            // PUT ?comp=blocklist
	OpBlobGet        Op = "BlobGet"                  // GET of a signed URL
	OpV1Query        Op = "V1Query"                  // GET _apis/artifactcache/cache
	OpV1Reserve      Op = "V1Reserve"                // POST _apis/artifactcache/caches
	OpV1Upload       Op = "V1Upload"                 // PATCH _apis/artifactcache/caches/<id>
	OpV1Commit       Op = "V1Commit"                 // POST _apis/artifactcache/caches/<id>
	OpUnknown        Op = "Unknown"
)

// twirpPrefix is the path of the v2 cache service under the results URL.
const twirpPrefix = "/twirp/github.actions.results.api.v1.CacheService/"

// v1Prefix is where the v1 service lives under the server (CacheURL ends with it).
const v1Prefix = "/v1/_apis/artifactcache/"

const maxBody = 64 << 20

// Call is one recorded request.
type Call struct {
	Op       Op
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	// Body is the request body of service (JSON) calls; blob data is not kept.
	Body     []byte
	BodySize int
	// Status is the HTTP status answered; 0 for a call that hung.
	Status int
}

// Entry is one cache entry.
type Entry struct {
	ID      int64
	Key     string
	Version string
	Data    []byte
	// Final is true once the upload was finalized; only final entries match.
	Final bool
	// Seq orders final entries by finalization: the highest is the newest.
	Seq int64
}

// LibraryVersion is the constant version string go-actions-cache sends with every
// key.
func LibraryVersion() string {
	sum := sha256.Sum256([]byte("|go-actionscache-1.0"))
	return hex.EncodeToString(sum[:])
}

type entry struct {
	Entry
	readSig, writeSig string
	blocks            map[string][]byte // staged, uncommitted blocks
}

// Server is a running fake cache service.
type Server struct {
	// URL is the base URL, without a trailing slash.
	URL string

	hs      *httptest.Server
	secret  []byte
	token   string
	closing chan struct{}
	once    sync.Once

	// callMu guards calls alone, so that a status can be recorded while a handler
	// holds mu.
	callMu sync.Mutex
	calls  []Call

	mu      sync.Mutex
	mode    Mode
	opModes map[Op]Mode
	entries []*entry
	nextID  int64
	nextSeq int64
}

// New starts a server; it is closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		secret:  randomBytes(tb, 32),
		closing: make(chan struct{}),
		opModes: map[Op]Mode{},
	}
	s.token = NewToken(tb, s.secret, RunnerClaims(6*time.Hour))
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.hs.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, releasing any hanging handler first.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.hs.Close()
	})
}

// Token is a valid ACTIONS_RUNTIME_TOKEN for this server.
func (s *Server) Token() string { return s.token }

// Secret is the HS256 key of the server's tokens, for NewToken.
func (s *Server) Secret() []byte { return append([]byte(nil), s.secret...) }

// ResultsURL is the value of ACTIONS_RESULTS_URL (v2), with the trailing slash the
// runner gives it.
func (s *Server) ResultsURL() string { return s.URL + "/" }

// CacheURL is the value of ACTIONS_CACHE_URL (v1).
func (s *Server) CacheURL() string { return s.URL + "/v1/" }

// Env is the runner environment of a container action for the v2 service.
func (s *Server) Env() []string {
	return []string{"ACTIONS_RUNTIME_TOKEN=" + s.token, "ACTIONS_RESULTS_URL=" + s.ResultsURL()}
}

// EnvV1 is the environment of a GHES runner, which has only the v1 service.
func (s *Server) EnvV1() []string {
	return []string{"ACTIONS_RUNTIME_TOKEN=" + s.token, "ACTIONS_CACHE_URL=" + s.CacheURL()}
}

// SetMode sets how the server answers the given ops, or every op (clearing per-op
// modes).
func (s *Server) SetMode(m Mode, ops ...Op) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ops) == 0 {
		s.mode = m
		s.opModes = map[Op]Mode{}
		return
	}
	for _, op := range ops {
		s.opModes[op] = m
	}
}

// Calls returns the recorded calls, oldest first.
func (s *Server) Calls() []Call {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	out := make([]Call, len(s.calls))
	copy(out, s.calls)
	return out
}

// CallsTo returns the recorded calls of one op.
func (s *Server) CallsTo(op Op) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Op == op {
			out = append(out, c)
		}
	}
	return out
}

// Entries returns every entry, newest final first, then pending ones.
func (s *Server) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, 0, len(s.entries))
	for _, e := range s.entries {
		c := e.Entry
		c.Data = append([]byte(nil), e.Data...)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Final != b.Final {
			return a.Final
		}
		if a.Final {
			return a.Seq > b.Seq
		}
		return a.ID < b.ID
	})
	return out
}

// Lookup returns the final entry with this exact key and version ("" = the
// library's version).
func (s *Server) Lookup(key, version string) (Entry, bool) {
	if version == "" {
		version = LibraryVersion()
	}
	for _, e := range s.Entries() {
		if e.Final && e.Key == key && e.Version == version {
			return e, true
		}
	}
	return Entry{}, false
}

// Put stores a final, newest entry as if another run had saved it; version "" is
// the library's.
func (s *Server) Put(key, version string, data []byte) {
	if version == "" {
		version = LibraryVersion()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.find(key, version)
	if e == nil {
		e = s.newEntry(key, version)
	}
	e.Data = append([]byte(nil), data...)
	s.finalize(e)
}

// finalize makes e final and the newest.
func (s *Server) finalize(e *entry) {
	e.Final = true
	s.nextSeq++
	e.Seq = s.nextSeq
}

// byID is the entry of a path's id, nil when none.
func (s *Server) byID(id string) *entry {
	n, err := strconv.ParseInt(id, 10, 64)
	for _, e := range s.entries {
		if err == nil && e.ID == n {
			return e
		}
	}
	return nil
}

func (s *Server) find(key, version string) *entry {
	for _, e := range s.entries {
		if e.Key == key && e.Version == version {
			return e
		}
	}
	return nil
}

func (s *Server) newEntry(key, version string) *entry {
	s.nextID++
	e := &entry{
		Entry:    Entry{ID: s.nextID, Key: key, Version: version},
		readSig:  randomHex(),
		writeSig: randomHex(),
		blocks:   map[string][]byte{},
	}
	s.entries = append(s.entries, e)
	return e
}

// match implements the restore order: for the key and then each restore key, an
// exact match, then the newest entry the key is a prefix of; same version only.
func (s *Server) match(keys []string, version string) *entry {
	for _, k := range keys {
		if k == "" {
			continue
		}
		var best *entry
		for _, e := range s.entries {
			if !e.Final || e.Version != version {
				continue
			}
			if e.Key == k {
				return e
			}
			if strings.HasPrefix(e.Key, k) && (best == nil || e.Seq > best.Seq) {
				best = e
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

func (s *Server) blobURL(e *entry, write bool) string {
	sp, sig := "r", e.readSig
	if write {
		sp, sig = "cw", e.writeSig
	}
	return fmt.Sprintf("%s/blob/%d?sv=2024-08-04&sp=%s&sig=%s", s.URL, e.ID, sp, sig)
}

// rec records the status of call idx before the client can see the answer.
type rec struct {
	http.ResponseWriter
	s      *Server
	idx    int
	status int
}

func (r *rec) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.s.callMu.Lock()
		r.s.calls[r.idx].Status = code
		r.s.callMu.Unlock()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *rec) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	op := classify(r)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	call := Call{Op: op, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), BodySize: len(body)}
	if !strings.HasPrefix(string(op), "Blob") && op != OpV1Upload {
		call.Body = body
	}
	// Record before answering, so a client that gave up on a hanging call finds it.
	s.callMu.Lock()
	rw := &rec{ResponseWriter: w, s: s, idx: len(s.calls)}
	s.calls = append(s.calls, call)
	s.callMu.Unlock()

	s.mu.Lock()
	mode, ok := s.opModes[op]
	if !ok {
		mode = s.mode
	}
	s.mu.Unlock()
	switch mode {
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	case Fail:
		failure(rw, op, http.StatusInternalServerError, "internal", "cachetest: failing mode")
		return
	case NotFound:
		http.NotFound(rw, r)
		return
	}
	if err != nil || len(body) > maxBody {
		failure(rw, op, http.StatusRequestEntityTooLarge, "invalid_argument", "request body unreadable or too large")
		return
	}

	switch {
	case strings.HasPrefix(r.URL.Path, twirpPrefix):
		s.twirp(rw, r, op, body)
	case strings.HasPrefix(r.URL.Path, v1Prefix):
		s.v1(rw, r, op, body)
	case strings.HasPrefix(r.URL.Path, "/blob/"):
		s.blob(rw, r, op, body)
	default:
		http.NotFound(rw, r)
	}
}

func classify(r *http.Request) Op {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, twirpPrefix):
		switch m := Op(strings.TrimPrefix(p, twirpPrefix)); m {
		case OpGetDownloadURL, OpCreate, OpFinalize:
			return m
		}
	case strings.HasPrefix(p, "/blob/"):
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			return OpBlobGet
		case r.Method == http.MethodPut && q.Get("comp") == "block":
			return OpBlobBlock
		case r.Method == http.MethodPut && q.Get("comp") == "blocklist":
			return OpBlobBlockList
		case r.Method == http.MethodPut && q.Get("comp") == "":
			return OpBlobPut
		}
	case p == v1Prefix+"cache":
		return OpV1Query
	case p == v1Prefix+"caches":
		return OpV1Reserve
	case strings.HasPrefix(p, v1Prefix+"caches/"):
		switch r.Method {
		case http.MethodPatch:
			return OpV1Upload
		case http.MethodPost:
			return OpV1Commit
		}
	}
	return OpUnknown
}

// failure writes an error in the dialect of the endpoint op belongs to.
func failure(w http.ResponseWriter, op Op, status int, code, msg string) {
	switch {
	case strings.HasPrefix(string(op), "Blob"):
		azureError(w, status, azureCode(code), msg)
	case strings.HasPrefix(string(op), "V1"):
		v1Error(w, status, "", msg)
	default:
		twirpError(w, status, code, msg)
	}
}

func azureCode(twirp string) string {
	switch twirp {
	case "internal":
		return "InternalError"
	default:
		return "InvalidInput"
	}
}

func twirpError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "msg": msg, "meta": map[string]string{}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) authorized(r *http.Request) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return fmt.Errorf("missing bearer token")
	}
	return verifyToken(s.secret, tok)
}

func randomBytes(tb testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("cachetest: no randomness: %v", err)
	}
	return b
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms (Go ≥ 1.24)
	return hex.EncodeToString(b)
}
