package main

// End-to-end tests of bucket policies: GET/PUT/DELETE ?policy and their errors, a
// policy granting anonymous reads of private objects, conditions on the source address
// (the tests' requests come from 127.0.0.1), Deny beating the owner's ACL but not its
// access to the policy itself, persistence across a restart, and minio-go's policy
// calls.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/policy"
)

// s3PolicyDoc renders a one-statement policy document.
func s3PolicyDoc(effect, principal, action string, resources []string, cond string) string {
	rs, _ := json.Marshal(resources)
	s := fmt.Sprintf(`{"Version":"2008-10-17","Statement":[{"Sid":"s1","Effect":%q,"Principal":%s,"Action":%q,"Resource":%s`,
		effect, principal, action, rs)
	if cond != "" {
		s += `,"Condition":` + cond
	}
	return s + "}]}"
}

// s3Compact compacts a JSON document.
func s3Compact(t testing.TB, doc string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		t.Fatalf("compact %s: %v", doc, err)
	}
	return b.String()
}

func TestS3Policy(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	for _, style := range []struct {
		name string
		sign s3SigVer
		host bool
	}{{"v4-path", s3V4, false}, {"v2-host", s3V2, true}} {
		t.Run(style.name, func(t *testing.T) {
			alice := s3CreateUser(t, s, "alice-"+style.name+"@example.com", "Alice")
			bob := s3CreateUser(t, s, "bob-"+style.name+"@example.com", "Bob")
			owner := s3c{s: s, cred: alice.cred(), sign: style.sign, host: style.host}
			other := owner.as(bob.cred())
			anon := owner.anon()
			bkt := "pol-" + style.name
			owner.mkBucket(t, bkt)
			owner.put(t, bkt, "doc", "hello")
			owner.put(t, bkt, "secret/x", "hidden")

			// No policy yet: 404 for the owner, 403 for others; DELETE is still 204.
			expectS3Error(t, owner.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusNotFound, "NoSuchBucketPolicy")
			expectS3Error(t, other.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, owner.do(t, http.MethodGet, "no-such-bkt", "", "policy", nil, ""), http.StatusNotFound, "NoSuchBucket")
			owner.must(t, http.StatusNoContent, http.MethodDelete, bkt, "", "policy", nil, "")
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")

			// Malformed documents.
			for name, doc := range map[string]string{
				"empty":        "",
				"not json":     "{nope",
				"no statement": `{"Version":"2008-10-17","Statement":[]}`,
				"bad version":  `{"Version":"1999-01-01","Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::` + bkt + `"}]}`,
				"bad effect":   s3PolicyDoc("Maybe", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, ""),
				"bad action":   s3PolicyDoc("Allow", `"*"`, "s3:CreateBucket", []string{"arn:aws:s3:::" + bkt}, ""),
				"other bucket": s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::elsewhere/*"}, ""),
				"bad cidr":     s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"IpAddress":{"aws:SourceIp":"300.0.0.0/8"}}`),
				"too large":    `{"Id":"` + strings.Repeat("x", 20<<10) + `"}`,
			} {
				r := owner.do(t, http.MethodPut, bkt, "", "policy", nil, doc)
				if e := expectS3Error(t, r, http.StatusBadRequest, "MalformedPolicy"); e.Message == "" {
					t.Errorf("%s: MalformedPolicy without a message", name)
				}
			}
			expectS3Error(t, owner.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusNotFound, "NoSuchBucketPolicy")

			// Only the owner sets a policy.
			readDoc := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, "")
			expectS3Error(t, other.do(t, http.MethodPut, bkt, "", "policy", nil, readDoc), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, anon.do(t, http.MethodPut, bkt, "", "policy", nil, readDoc), http.StatusForbidden, "AccessDenied")

			// Content-MD5 is checked when given.
			expectS3Error(t, owner.do(t, http.MethodPut, bkt, "", "policy", hdr{"Content-MD5", s3MD5B64([]byte("other"))}, readDoc),
				http.StatusBadRequest, "BadDigest")

			// A policy granting everyone s3:GetObject makes the private objects readable.
			pretty := strings.ReplaceAll(readDoc, ",", ",\n  ")
			r := owner.do(t, http.MethodPut, bkt, "", "policy", hdr{"Content-Type", "application/json", "Content-MD5", s3MD5B64([]byte(pretty))}, pretty)
			if r.StatusCode != http.StatusNoContent || len(r.Body) != 0 {
				t.Fatalf("PUT ?policy: want an empty 204, got\n%s", r)
			}
			r = owner.must(t, http.StatusOK, http.MethodGet, bkt, "", "policy", nil, "")
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("GET ?policy Content-Type %q", ct)
			}
			if string(r.Body) != s3Compact(t, readDoc) {
				t.Errorf("GET ?policy: %s, want %s", r.Body, s3Compact(t, readDoc))
			}
			expectS3Error(t, other.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusForbidden, "AccessDenied")
			if r := anon.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, ""); string(r.Body) != "hello" {
				t.Errorf("anonymous GET: %q", r.Body)
			}
			anon.must(t, http.StatusOK, http.MethodHead, bkt, "doc", "", nil, "")
			other.must(t, http.StatusOK, http.MethodGet, bkt, "secret/x", "", nil, "")
			// Reading is all it grants: not listing, writing or deleting.
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "", "", nil, ""), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, anon.do(t, http.MethodPut, bkt, "new", "", nil, "x"), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, other.do(t, http.MethodDelete, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")

			// Allow and Deny together: Deny wins for bob under secret/.
			both := `{"Statement":[` +
				`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::` + bkt + `","arn:aws:s3:::` + bkt + `/*"]},` +
				`{"Effect":"Deny","Principal":{"AWS":["` + bob.ID + `"]},"Action":"s3:Get*","Resource":"arn:aws:s3:::` + bkt + `/secret/*"}]}`
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, both)
			other.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")
			expectS3Error(t, other.do(t, http.MethodGet, bkt, "secret/x", "", nil, ""), http.StatusForbidden, "AccessDenied")
			anon.must(t, http.StatusOK, http.MethodGet, bkt, "secret/x", "", nil, "")
			anon.must(t, http.StatusOK, http.MethodGet, bkt, "", "", nil, "")

			// Source address conditions: the tests connect from 127.0.0.1.
			allowLocal := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"IpAddress":{"aws:SourceIp":["127.0.0.0/8","::1/128"]}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, allowLocal)
			anon.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")
			allowRemote := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, allowRemote)
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")
			notRemote := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, notRemote)
			anon.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")

			// A Deny for 127.0.0.0/8 blocks even the owner, except on the policy itself.
			denyLocal := s3PolicyDoc("Deny", `"*"`, "s3:*", []string{"arn:aws:s3:::" + bkt, "arn:aws:s3:::" + bkt + "/*"}, `{"IpAddress":{"aws:SourceIp":"127.0.0.0/8"}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, denyLocal)
			expectS3Error(t, owner.do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, owner.do(t, http.MethodPut, bkt, "new", "", nil, "x"), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, owner.do(t, http.MethodGet, bkt, "", "", nil, ""), http.StatusForbidden, "AccessDenied")
			expectS3Error(t, owner.do(t, http.MethodDelete, bkt, "", "", nil, ""), http.StatusForbidden, "AccessDenied")
			if r := owner.must(t, http.StatusOK, http.MethodGet, bkt, "", "policy", nil, ""); string(r.Body) != s3Compact(t, denyLocal) {
				t.Errorf("GET ?policy under a Deny: %s", r.Body)
			}
			owner.must(t, http.StatusNoContent, http.MethodDelete, bkt, "", "policy", nil, "")
			owner.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")
			owner.put(t, bkt, "new", "x")

			// Secure transport: the test server speaks plain HTTP.
			tlsOnly := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"Bool":{"aws:SecureTransport":"true"}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, tlsOnly)
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")
			plainOK := s3PolicyDoc("Allow", `"*"`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, `{"Bool":{"aws:SecureTransport":"false"}}`)
			owner.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, plainOK)
			anon.must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")

			// Others cannot delete the policy; the owner can, twice.
			expectS3Error(t, other.do(t, http.MethodDelete, bkt, "", "policy", nil, ""), http.StatusForbidden, "AccessDenied")
			owner.must(t, http.StatusNoContent, http.MethodDelete, bkt, "", "policy", nil, "")
			owner.must(t, http.StatusNoContent, http.MethodDelete, bkt, "", "policy", nil, "")
			expectS3Error(t, owner.do(t, http.MethodGet, bkt, "", "policy", nil, ""), http.StatusNotFound, "NoSuchBucketPolicy")
			expectS3Error(t, anon.do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")
		})
	}
}

// TestS3PolicyRestart checks that a policy is stored with its bucket.
func TestS3PolicyRestart(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "alice@example.com", "Alice")
	owner := s3c{s: s, cred: alice.cred(), sign: s3V4}
	owner.mkBucket(t, "persist")
	owner.put(t, "persist", "doc", "hello")
	doc := s3PolicyDoc("Allow", `{"AWS":["*"]}`, "s3:GetObject", []string{"arn:aws:s3:::persist/*"}, "")
	owner.must(t, http.StatusNoContent, http.MethodPut, "persist", "", "policy", nil, doc)
	s.Stop()
	s.Restart()
	owner.anon().must(t, http.StatusOK, http.MethodGet, "persist", "doc", "", nil, "")
	if r := owner.must(t, http.StatusOK, http.MethodGet, "persist", "", "policy", nil, ""); string(r.Body) != s3Compact(t, doc) {
		t.Errorf("policy after restart: %s", r.Body)
	}
}

// TestS3PolicyMinio runs minio-go's policy calls: SetBucketPolicy / GetBucketPolicy
// round trip, SetBucketPolicy("") deleting, and a canned read-only policy (minio's own
// document, with bucket and object statements) opening the bucket to anonymous reads.
func TestS3PolicyMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "alice@example.com", "Alice")
	raw := s3c{s: s, cred: alice.cred(), sign: s3V4}
	ctx := context.Background()
	for _, combo := range minioCombos {
		t.Run(combo.name, func(t *testing.T) {
			c := newMinio(t, s, alice.cred(), combo)
			bkt := "mpol-" + combo.name
			raw.mkBucket(t, bkt)
			raw.put(t, bkt, "doc", "hello")
			if got, err := c.GetBucketPolicy(ctx, bkt); err != nil || got != "" {
				t.Fatalf("GetBucketPolicy without a policy: %q, %v", got, err)
			}
			doc := s3PolicyDoc("Allow", `{"AWS":["*"]}`, "s3:GetObject", []string{"arn:aws:s3:::" + bkt + "/*"}, "")
			if err := c.SetBucketPolicy(ctx, bkt, doc); err != nil {
				t.Fatalf("SetBucketPolicy: %v", err)
			}
			if got, err := c.GetBucketPolicy(ctx, bkt); err != nil || got != s3Compact(t, doc) {
				t.Fatalf("GetBucketPolicy: %q, %v", got, err)
			}
			raw.anon().must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")
			err := c.SetBucketPolicy(ctx, bkt, `{"Statement":"nope"}`)
			if code := minioCode(err); code != "MalformedPolicy" {
				t.Errorf("malformed policy: %v (code %q)", err, code)
			}
			if err := c.SetBucketPolicy(ctx, bkt, ""); err != nil {
				t.Fatalf("SetBucketPolicy(\"\") (delete): %v", err)
			}
			if got, err := c.GetBucketPolicy(ctx, bkt); err != nil || got != "" {
				t.Fatalf("GetBucketPolicy after delete: %q, %v", got, err)
			}
			expectS3Error(t, raw.anon().do(t, http.MethodGet, bkt, "doc", "", nil, ""), http.StatusForbidden, "AccessDenied")

			if err := c.SetCannedBucketPolicy(ctx, bkt, policy.BucketPolicyReadOnly); err != nil {
				t.Fatalf("SetCannedBucketPolicy(readonly): %v", err)
			}
			raw.anon().must(t, http.StatusOK, http.MethodGet, bkt, "doc", "", nil, "")
			raw.anon().must(t, http.StatusOK, http.MethodGet, bkt, "", "", nil, "")
			expectS3Error(t, raw.anon().do(t, http.MethodPut, bkt, "x", "", nil, "x"), http.StatusForbidden, "AccessDenied")
			if err := c.SetBucketPolicy(ctx, bkt, ""); err != nil {
				t.Fatal(err)
			}
		})
	}
}
