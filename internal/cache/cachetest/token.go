package cachetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// NewToken returns an HS256-signed JWT carrying claims, for tests that need an odd
// token (expired, without "ac", …).
func NewToken(tb testing.TB, secret []byte, claims map[string]any) string {
	tb.Helper()
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload, err := json.Marshal(claims)
	if err != nil {
		tb.Fatalf("cachetest.NewToken: claims cannot be encoded as JSON: %v", err)
	}
	signing := header + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// RunnerClaims are the claims of a runner's ACTIONS_RUNTIME_TOKEN that
// go-actions-cache reads, valid from a minute ago for life.
func RunnerClaims(life time.Duration) map[string]any {
	now := time.Now()
	return map[string]any{
		"ac":  `[{"Scope":"refs/heads/main","Permission":3}]`,
		"exp": now.Add(life).Unix(),
		"nbf": now.Add(-time.Minute).Unix(),
		"iat": now.Add(-time.Minute).Unix(),
	}
}

// verifyToken checks an HS256 JWT against secret and its exp/nbf claims.
func verifyToken(secret []byte, tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT")
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return errors.New("bad signature encoding")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return errors.New("signature does not verify")
	}
	raw, err := enc.DecodeString(parts[1])
	if err != nil {
		return errors.New("bad payload encoding")
	}
	var claims struct {
		Exp *float64 `json:"exp"`
		Nbf *float64 `json:"nbf"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return errors.New("bad payload")
	}
	now := float64(time.Now().Unix())
	if claims.Exp == nil || now > *claims.Exp {
		return errors.New("token expired")
	}
	if claims.Nbf != nil && now < *claims.Nbf {
		return errors.New("token not valid yet")
	}
	return nil
}
