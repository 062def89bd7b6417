package main

// Hostile input against KV access control: what a user with a little access, or none,
// tries in order to read or change what it was not granted.

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestHostileKVAuth runs each attack against a server with --kv-auth: a user granted
// get, put and mapreduce on bucket "open" only, and anonymous callers, try to reach the
// bucket "secret" and the server-wide settings.
func TestHostileKVAuth(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--kv-auth", "--kv-auth-allow-insecure")
	adminID, adminSecret := adminCred(t, s)
	admin := basic(adminID, adminSecret)
	for _, r := range []struct{ path, link, body string }{
		{"/buckets/secret/keys/s", "", "the secret"},
		{"/buckets/secret/keys/fn", "", "function(v) { return [v.values[0].data]; }"},
		{"/buckets/open/keys/o", `</buckets/secret/keys/s>; riaktag="leak"`, "public"},
	} {
		h := append(hdr{"Content-Type", "text/plain"}, admin...)
		if r.link != "" {
			h = append(h, "Link", r.link)
		}
		expect(t, s.do(t, "PUT", r.path, h, r.body), http.StatusNoContent, nil)
	}
	u := cliCreateUser(t, s, "Mallory", "mallory@example.com")
	mustGrantCLI(t, s, "grant", u.KeyID, "get,put,mapreduce", "on", "default", "open")
	user := basic(u.KeyID, u.KeySecret)
	denied := func(perm, bucket string) string {
		return "Permission denied: User '" + u.KeyID + "' does not have '" + perm + `' on {<<"default">>,<<"` + bucket + `">>}`
	}
	jsonHdr := func(h hdr) hdr { return append(hdr{"Content-Type", "application/json"}, h...) }

	for _, a := range []struct {
		name         string
		method, path string
		h            hdr
		body         string
		status       int
		text         string // the exact body, when set
	}{
		// Issue 15's first attack, without the right to it: the bucket type's n_val.
		{"anonymous type props", "PUT", "/types/default/props", jsonHdr(nil), `{"props":{"n_val":1000000000000}}`, 401, ""},
		{"user type props", "PUT", "/types/default/props", jsonHdr(user), `{"props":{"n_val":1000000000000}}`, 403,
			"Permission denied: User '" + u.KeyID + `' does not have 'cairn.admin' on <<"default">>`},
		{"user bucket props", "PUT", "/buckets/open/props", jsonHdr(user), `{"props":{"n_val":1000000000000}}`, 403, denied("riak_core.set_bucket", "open")},
		// Reading the secret bucket sideways.
		{"walk a link into secret", "GET", "/buckets/open/keys/o/_,_,1", user, "", 403, denied("riak_kv.get", "secret")},
		{"mapred over secret", "POST", "/mapred", jsonHdr(user), `{"inputs":"secret","query":[]}`, 403, denied("riak_kv.list_keys", "secret")},
		{"mapred key filter over secret", "POST", "/mapred", jsonHdr(user),
			`{"inputs":{"bucket":"secret","key_filters":[["starts_with","s"]]},"query":[]}`, 403, denied("riak_kv.list_keys", "secret")},
		{"mapred index over secret", "POST", "/mapred", jsonHdr(user),
			`{"inputs":{"bucket":"secret","index":"$key","start":"a","end":"z"},"query":[]}`, 403, denied("riak_kv.index", "secret")},
		{"mapred keys in secret", "POST", "/mapred", jsonHdr(user), `{"inputs":[["open","o"],["secret","s"]],"query":[]}`, 403, denied("riak_kv.mapreduce", "secret")},
		{"mapred link phase into secret", "POST", "/mapred", jsonHdr(user),
			`{"inputs":[["open","o"]],"query":[{"link":{"bucket":"_"}},{"map":{"language":"javascript","name":"Riak.mapValues"}}]}`, 403,
			denied("riak_kv.mapreduce", "secret")},
		{"mapred source stored in secret", "POST", "/mapred", jsonHdr(user),
			`{"inputs":[["open","o"]],"query":[{"map":{"language":"javascript","bucket":"secret","key":"fn"}}]}`, 403, denied("riak_kv.get", "secret")},
		{"list the buckets", "GET", "/buckets?buckets=true", user, "", 403, ""},
		{"grant oneself", "PUT", "/admin/grants/" + u.KeyID, jsonHdr(user), `{"permissions":["get"],"any":true}`, 403, ""},
		{"register a module", "PUT", "/admin/modules/evil", append(hdr{"Content-Type", "application/wasm"}, user...), "\x00asm", 403, ""},
		// Malformed and oversized credentials.
		{"not basic", "GET", "/buckets/open/keys/o", hdr{"Authorization", "Bearer " + u.KeySecret}, "", 401, ""},
		{"not base64", "GET", "/buckets/open/keys/o", hdr{"Authorization", "Basic !!!!"}, "", 401, ""},
		{"no colon", "GET", "/buckets/open/keys/o", hdr{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(u.KeyID))}, "", 401, ""},
		{"huge key id", "GET", "/buckets/open/keys/o", basic(strings.Repeat("K", 48<<10), u.KeySecret), "", 401, ""},
		{"huge secret", "GET", "/buckets/open/keys/o", basic(u.KeyID, strings.Repeat("s", 48<<10)), "", 401, ""},
		{"key id with NUL", "GET", "/buckets/open/keys/o", basic(u.KeyID+"\x00", u.KeySecret), "", 401, ""},
	} {
		r := s.do(t, a.method, a.path, a.h, a.body)
		if r.StatusCode != a.status || (a.text != "" && string(r.Body) != a.text) {
			t.Errorf("%s: want %d %q, got\n%s", a.name, a.status, a.text, r)
		}
	}

	// Guessing secrets: every guess is refused alike, and the right one still works.
	for i := 0; i < 200; i++ {
		guess := u.KeySecret[:len(u.KeySecret)-1] + string(rune('a'+i%26))
		if guess == u.KeySecret {
			continue
		}
		if r := s.do(t, "GET", "/buckets/open/keys/o", basic(u.KeyID, guess), ""); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %s", i, r)
		}
	}
	expect(t, s.do(t, "GET", "/buckets/open/keys/o", user, ""), http.StatusOK, ptr("public"))
	// Nothing the attacks tried changed the secret bucket or the type.
	expect(t, s.do(t, "GET", "/buckets/secret/keys/s", admin, ""), http.StatusOK, ptr("the secret"))
	if r := s.do(t, "GET", "/types/default/props", admin, ""); !strings.Contains(string(r.Body), `"n_val":3`) {
		t.Errorf("the default type's props changed:\n%s", r)
	}
	assertServing(t, s)
}
