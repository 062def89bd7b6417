package s3

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestCheckCORSRules: the limits of a CORS configuration, as AWS answers them.
func TestCheckCORSRules(t *testing.T) {
	ok := CORSRule{AllowedOrigins: []string{"https://*.example.com"}, AllowedMethods: []string{"GET", "PUT"},
		AllowedHeaders: []string{"x-amz-*"}, HasMaxAge: true, MaxAgeSeconds: 0}
	with := func(change func(r *CORSRule)) []CORSRule { r := ok; change(&r); return []CORSRule{r} }
	many := make([]CORSRule, MaxCORSRules+1)
	for i := range many {
		many[i] = ok
	}
	tests := []struct {
		name  string
		rules []CORSRule
		code  Code
		msg   string
	}{
		{"valid", []CORSRule{ok}, "", ""},
		{"100 rules", many[:MaxCORSRules], "", ""},
		{"none", nil, MalformedXML, ""},
		{"101 rules", many, InvalidRequest, "should not exceed"},
		{"no origin", with(func(r *CORSRule) { r.AllowedOrigins = nil }), MalformedXML, ""},
		{"no method", with(func(r *CORSRule) { r.AllowedMethods = nil }), MalformedXML, ""},
		{"PATCH", with(func(r *CORSRule) { r.AllowedMethods = []string{"PATCH"} }), InvalidRequest, "Unsupported method is PATCH"},
		{"two origin stars", with(func(r *CORSRule) { r.AllowedOrigins = []string{"*://*.x"} }), InvalidRequest, "AllowedOrigin"},
		{"two header stars", with(func(r *CORSRule) { r.AllowedHeaders = []string{"**"} }), InvalidRequest, "AllowedHeader"},
		{"long ID", with(func(r *CORSRule) { r.ID = strings.Repeat("é", MaxCORSIDLength+1) }), InvalidRequest, "ID"},
		{"ID of 255", with(func(r *CORSRule) { r.ID = strings.Repeat("é", MaxCORSIDLength) }), "", ""},
		{"negative max age", with(func(r *CORSRule) { r.MaxAgeSeconds = -1 }), InvalidRequest, "MaxAgeSeconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCORSRules(tt.rules)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !IsCode(err, tt.code) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("%v, want %s %q", err, tt.code, tt.msg)
			}
		})
	}
}

// TestMatchCORS: the first rule allowing the origin (one "*", case-sensitive), the
// method and, for a preflight, every header (patterns ignoring case) is the match.
func TestMatchCORS(t *testing.T) {
	rules := []CORSRule{
		{ID: "a", AllowedOrigins: []string{"https://*.example.com"}, AllowedMethods: []string{"PUT"}, AllowedHeaders: []string{"X-Amz-*", "content-type"}},
		{ID: "b", AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}},
		{ID: "c", AllowedOrigins: []string{"http://exact.example"}, AllowedMethods: []string{"GET", "PUT"}, AllowedHeaders: []string{"*"}},
	}
	tests := []struct {
		origin, method string
		headers        []string
		want           string
	}{
		{"https://a.example.com", "PUT", []string{"x-amz-date", "Content-Type"}, "a"},
		{"https://a.example.com", "PUT", nil, "a"},
		{"https://.example.com", "PUT", nil, "a"},
		{"https://example.com", "PUT", nil, ""},
		{"HTTPS://A.EXAMPLE.COM", "PUT", nil, ""},
		{"https://a.example.com", "PUT", []string{"authorization"}, ""},
		{"https://a.example.com", "GET", []string{"authorization"}, ""},
		{"https://a.example.com", "GET", nil, "b"},
		{"http://exact.example", "PUT", []string{"anything"}, "c"},
		{"http://exact.example/", "PUT", nil, ""},
		{"http://exact.example", "DELETE", nil, ""},
	}
	for _, tt := range tests {
		got := ""
		if r := MatchCORS(rules, tt.origin, tt.method, tt.headers); r != nil {
			got = r.ID
		}
		if got != tt.want {
			t.Errorf("%s %s %v: rule %q, want %q", tt.origin, tt.method, tt.headers, got, tt.want)
		}
	}
}

// TestBucketCORS: the owner sets, reads and removes the rules; others are refused;
// GET without rules is NoSuchCORSConfiguration; a refused configuration changes
// nothing; `cairn check` reports a record whose rules break the limits.
func TestBucketCORS(t *testing.T) {
	ctx := context.Background()
	s, db := newTestService(t)
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustBucket(t, s, alice, "web", "")
	if _, err := s.BucketCORS(ctx, alice, "web"); !IsCode(err, NoSuchCORSConfiguration) {
		t.Fatalf("no rules: %v", err)
	}
	rules := []CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}}}
	if err := s.SetBucketCORS(ctx, bob, "web", rules); !IsCode(err, AccessDenied) {
		t.Fatalf("bob sets: %v", err)
	}
	if err := s.SetBucketCORS(ctx, alice, "web", rules); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBucketCORS(ctx, alice, "web", nil); !IsCode(err, MalformedXML) {
		t.Fatalf("no rules: %v", err)
	}
	if got, err := s.BucketCORS(ctx, alice, "web"); err != nil || !reflect.DeepEqual(got, rules) {
		t.Fatalf("rules %v, %v", got, err)
	}
	if _, err := s.BucketCORS(ctx, bob, "web"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob reads: %v", err)
	}
	if got, err := s.CORSRules(ctx, "web"); err != nil || len(got) != 1 {
		t.Fatalf("CORSRules %v, %v", got, err)
	}
	if rep, err := Check(db, nil); err != nil || rep.Problems != 0 {
		t.Fatalf("valid rules: %v", err)
	}
	v, err := db.Get(bucketKey("web"))
	if err != nil {
		t.Fatal(err)
	}
	var b Bucket
	if err := json.Unmarshal(v, &b); err != nil {
		t.Fatal(err)
	}
	b.CORS[0].AllowedMethods = []string{"TRACE"}
	v, _ = json.Marshal(b)
	if err := db.Put(bucketKey("web"), v, false); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(db, nil); rep.Problems != 1 || err == nil || !strings.Contains(err.Error(), "bucket web: cors") {
		t.Fatalf("%d problems: %v", rep.Problems, err)
	}
	if err := s.DeleteBucketCORS(ctx, bob, "web"); !IsCode(err, AccessDenied) {
		t.Fatalf("bob deletes: %v", err)
	}
	if err := s.DeleteBucketCORS(ctx, alice, "web"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BucketCORS(ctx, alice, "web"); !IsCode(err, NoSuchCORSConfiguration) {
		t.Fatalf("after delete: %v", err)
	}
}
