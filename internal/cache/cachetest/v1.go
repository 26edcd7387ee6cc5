package cachetest

// The cache service v1 (GHES): _apis/artifactcache.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// v1Error writes the v1 service's error object.
func v1Error(w http.ResponseWriter, status int, typeKey, msg string) {
	writeJSON(w, status, map[string]any{"$id": "1", "innerException": nil, "message": msg,
		"typeName": typeKey, "typeKey": typeKey, "errorCode": 0, "eventId": 3000})
}

func (s *Server) v1(w http.ResponseWriter, r *http.Request, op Op, body []byte) {
	if op == OpUnknown {
		http.NotFound(w, r)
		return
	}
	if err := s.authorized(r); err != nil {
		v1Error(w, http.StatusUnauthorized, "UnauthorizedRequestException", err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case OpV1Query:
		q := r.URL.Query()
		keys := strings.Split(q.Get("keys"), ",")
		version := q.Get("version")
		if q.Get("keys") == "" || version == "" {
			v1Error(w, http.StatusBadRequest, "ArgumentException", "keys and version are required")
			return
		}
		e := s.match(keys, version)
		if e == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"scope": "refs/heads/main", "cacheKey": e.Key,
			"cacheVersion": e.Version, "creationTime": time.Now().UTC().Format(time.RFC3339),
			"archiveLocation": s.blobURL(e, false)})
	case OpV1Reserve:
		var req struct {
			Key     string `json:"key"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Key == "" || req.Version == "" {
			v1Error(w, http.StatusBadRequest, "ArgumentException", "key and version are required")
			return
		}
		if s.find(req.Key, req.Version) != nil {
			v1Error(w, http.StatusConflict, "ArtifactCacheItemAlreadyExistsException",
				fmt.Sprintf("Cache already exists. Scope: refs/heads/main, Key: %s, Version: %s", req.Key, req.Version))
			return
		}
		e := s.newEntry(req.Key, req.Version)
		writeJSON(w, http.StatusCreated, map[string]any{"cacheId": e.ID})
	case OpV1Upload, OpV1Commit:
		e := s.byID(strings.TrimPrefix(r.URL.Path, v1Prefix+"caches/"))
		if e == nil || e.Final {
			v1Error(w, http.StatusNotFound, "ArtifactCacheItemNotFoundException", "no pending cache entry with this id")
			return
		}
		if op == OpV1Upload {
			var start, end int64
			if _, err := fmt.Sscanf(r.Header.Get("Content-Range"), "bytes %d-%d/*", &start, &end); err != nil ||
				start < 0 || end-start+1 != int64(len(body)) || end >= maxBody {
				v1Error(w, http.StatusBadRequest, "ArgumentException", "Content-Range must be bytes <start>-<end>/* matching the body")
				return
			}
			if int64(len(e.Data)) < end+1 {
				e.Data = append(e.Data, make([]byte, end+1-int64(len(e.Data)))...)
			}
			copy(e.Data[start:], body)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var req struct {
			Size int64 `json:"size"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Size != int64(len(e.Data)) {
			v1Error(w, http.StatusBadRequest, "ArgumentException",
				fmt.Sprintf("size does not match the %d bytes uploaded", len(e.Data)))
			return
		}
		s.finalize(e)
		w.WriteHeader(http.StatusNoContent)
	}
}
