package main

// Hostile object-storage requests: probing private buckets for keys, keys that an XML
// listing cannot carry, and users impersonating the administrator.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// TestHostileS3Probe is the attack of telling which keys of a private bucket exist (403
// for an existing key, 404 for a missing one): every principal and object read, in the
// ACL matrix style, answers the same for an existing and a missing key unless the
// principal may list the bucket, when a missing key is 404 NoSuchKey.
func TestHostileS3Probe(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	a := newS3Actors(t, s, s3V4, false)
	a.owner.mkBucket(t, "probe")                                    // private
	a.owner.mkBucket(t, "probe-listed", "x-amz-acl", "public-read") // anyone may list
	a.other.mkBucket(t, "probe-dst")
	for _, b := range []string{"probe", "probe-listed"} {
		a.owner.put(t, b, "secret", "s") // private object
	}
	type read struct {
		name          string
		method, query string
		h             func(bucket, key string) hdr              // the request's headers
		bucket        func(bucket, key string) (string, string) // where the request goes
	}
	plain := func(b, k string) (string, string) { return b, k }
	reads := []read{
		{name: "GET", method: http.MethodGet, bucket: plain},
		{name: "HEAD", method: http.MethodHead, bucket: plain},
		{name: "GET ?acl", method: http.MethodGet, query: "acl", bucket: plain},
		{name: "PUT ?acl", method: http.MethodPut, query: "acl", bucket: plain,
			h: func(string, string) hdr { return hdr{"x-amz-acl", "private"} }},
		{name: "copy source", method: http.MethodPut,
			bucket: func(string, string) (string, string) { return "probe-dst", "copy" },
			h:      func(b, k string) hdr { return hdr{"x-amz-copy-source", "/" + b + "/" + k} }},
	}
	// answer renders what a principal gets for the existing and the missing key.
	answer := func(c s3c, r read, bucket, key string) string {
		var h hdr
		if r.h != nil {
			h = r.h(bucket, key)
		}
		b, k := r.bucket(bucket, key)
		res := c.do(t, r.method, b, k, r.query, h, "")
		if r.method == http.MethodHead || res.StatusCode/100 == 2 {
			return http.StatusText(res.StatusCode)
		}
		e, ok := s3CheckError(t, res, res.StatusCode)
		if !ok {
			return http.StatusText(res.StatusCode)
		}
		return e.Code
	}
	for _, tc := range []struct {
		bucket string
		want   map[string]string // principal → "existing|missing" for every read
	}{
		{"probe", map[string]string{"other": "AccessDenied|AccessDenied", "anonymous": "AccessDenied|AccessDenied"}},
		{"probe-listed", map[string]string{"other": "AccessDenied|NoSuchKey", "anonymous": "AccessDenied|NoSuchKey"}},
	} {
		for _, w := range a.who()[1:] {
			for _, r := range reads {
				if w.name == "anonymous" && r.name == "copy source" {
					continue // an anonymous copy is refused for its destination
				}
				want := tc.want[w.name]
				if r.method == http.MethodHead {
					want = map[string]string{"AccessDenied|AccessDenied": "Forbidden|Forbidden",
						"AccessDenied|NoSuchKey": "Forbidden|Not Found"}[want]
				}
				got := answer(w.c, r, tc.bucket, "secret") + "|" + answer(w.c, r, tc.bucket, "missing")
				if got != want {
					t.Errorf("%s, %s in %s: existing|missing = %s, want %s", w.name, r.name, tc.bucket, got, want)
				}
			}
			// Deletes need WRITE on the bucket first: refused alike.
			for _, k := range []string{"secret", "missing"} {
				expectS3Error(t, w.c.do(t, http.MethodDelete, tc.bucket, k, "", nil, ""), http.StatusForbidden, "AccessDenied")
			}
		}
		// The owner, who may list, is told a key is missing.
		expectS3Error(t, a.owner.do(t, http.MethodGet, tc.bucket, "missing", "", nil, ""), http.StatusNotFound, "NoSuchKey")
	}
	assertServing(t, s)
}

// TestHostileS3ControlKeys is the attack of a key with a NUL byte, which was listed
// under a name (U+FFFD) that answered 404: a key with a character XML 1.0 cannot carry
// is refused with 400 InvalidArgument (PUT, copy, multipart); the control characters XML
// carries (tab, line feed, carriage return, DEL, C1) are stored, and every key a
// listing shows, with or without encoding-type=url, answers GET under that name.
func TestHostileS3ControlKeys(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "ctl@example.com", "Ctl")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "ctl")
	for _, bad := range []string{"nul\x00key", "\x01", "esc\x1b[0m", "ff\x0c", "non\uffffchar"} {
		expectS3Error(t, c.do(t, http.MethodPut, "ctl", bad, "", nil, "x"), http.StatusBadRequest, "InvalidArgument")
		expectS3Error(t, c.do(t, http.MethodPost, "ctl", bad, "uploads", nil, ""), http.StatusBadRequest, "InvalidArgument")
	}
	c.put(t, "ctl", "src", "x")
	expectS3Error(t, c.do(t, http.MethodPut, "ctl", "copy\x00", "", hdr{"x-amz-copy-source", "/ctl/src"}, ""), http.StatusBadRequest, "InvalidArgument")
	good := []string{"tab\tkey", "line\nfeed", "carriage\rreturn", "crlf\r\n", "del\x7f", "c1\u0085next", "src"}
	for _, k := range good[:len(good)-1] {
		c.put(t, "ctl", k, "v:"+k)
	}
	for _, q := range []string{"", "encoding-type=url"} {
		l := s3ParseList(t, c.must(t, http.StatusOK, http.MethodGet, "ctl", "", q, nil, ""))
		keys := l.keys()
		if q != "" {
			for i, k := range keys {
				var err error
				if keys[i], err = url.QueryUnescape(k); err != nil {
					t.Fatalf("listed key %q: %v", k, err)
				}
			}
		}
		if !s3SameStrings(keys, slices.Sorted(slices.Values(good))) {
			t.Errorf("listing %q: %q, want %q", q, keys, slices.Sorted(slices.Values(good)))
		}
		for _, k := range keys {
			if r := c.do(t, http.MethodGet, "ctl", k, "", nil, ""); r.StatusCode != http.StatusOK {
				t.Errorf("listing %q shows %q, which answers %d", q, k, r.StatusCode)
			}
		}
	}
	assertServing(t, s)
}

// TestHostileS3AdminName is the attack of a user taking the display name "admin"
// (shown as owner and grantee in ACLs and listings): the administration API refuses
// names and addresses that read as the administrator's, in any case or look-alike
// letters, and the server's own e-mail domain.
func TestHostileS3AdminName(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V2}
	create := func(email, name string) *resp {
		body, _ := json.Marshal(map[string]string{"email": email, "name": name})
		return admin.do(t, http.MethodPost, "riak-cs", "user", "", hdr{"Content-Type", "application/json"}, string(body))
	}
	for _, tc := range []struct{ email, name string }{
		{"admin@example.com", "Mallory"},
		{"Admin@example.com", "Mallory"},
		{"аdmin@example.com", "Mallory"}, // Cyrillic а
		{"adm1n@example.com", "Mallory"},
		{"mallory@example.com", "ADMIN"},
		{"mallory@example.com", "Administrator"},
		{"mallory@cairn.local", "Mallory"},
	} {
		expectS3Error(t, create(tc.email, tc.name), http.StatusBadRequest, "InvalidUserField")
	}
	if r := create("mallory@example.com", "Mallory"); r.StatusCode != http.StatusCreated {
		t.Fatalf("an ordinary user: %s", r)
	}
	assertServing(t, s)
}
