package main

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// adminCred reads the credential the server created in its data directory.
func adminCred(t testing.TB, s *child) (id, secret string) {
	t.Helper()
	path := filepath.Join(s.DataDir, "admin-credentials.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		KeyID     string `json:"key_id"`
		KeySecret string `json:"key_secret"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.KeyID == "" || c.KeySecret == "" {
		t.Fatalf("credential file %s: %v: %s", path, err, b)
	}
	return c.KeyID, c.KeySecret
}

// basic returns the Authorization header of an admin request.
func basic(id, secret string) hdr {
	return hdr{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))}
}

func TestAdminCredential(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	st, err := os.Stat(filepath.Join(s.DataDir, "admin-credentials.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("credential file mode %v, want 0600", st.Mode().Perm())
	}
	id, secret := adminCred(t, s)
	if len(id) != 20 || len(secret) != 40 {
		t.Errorf("credential %q/%q: want a 20-character key id and a 40-character secret", id, secret)
	}
	r := s.do(t, "GET", "/admin/modules", nil, "")
	expect(t, r, 401, nil)
	expectHeader(t, r, "WWW-Authenticate", `Basic realm="cairn admin"`)
	expect(t, s.do(t, "GET", "/admin/modules", basic(id, secret+"x"), ""), 403, nil)
	expect(t, s.do(t, "GET", "/admin/modules", basic("", ""), ""), 403, nil)
	expect(t, s.do(t, "GET", "/admin/modules", basic(id, secret), ""), 200, ptr(`{"modules":[]}`))
	expect(t, s.do(t, "PUT", "/admin/modules/x", nil, "junk"), 401, nil)
	expect(t, s.do(t, "DELETE", "/admin/modules/x", basic(id, "nope"), ""), 403, nil)
	expect(t, s.do(t, "DELETE", "/admin/modules/x", basic(id, secret), ""), 404, nil)
	expect(t, s.do(t, "PUT", "/admin/modules/x", basic(id, secret), "not wasm"), 400, nil)
	expect(t, s.do(t, "PUT", "/admin/modules/bad%20name", basic(id, secret), "not wasm"), 400, nil)
	expect(t, s.do(t, "POST", "/admin/modules/x", basic(id, secret), ""), 405, nil)

	// The same credential after a restart.
	s.Stop()
	s.Restart()
	if id2, secret2 := adminCred(t, s); id2 != id || secret2 != secret {
		t.Errorf("the credential changed across a restart")
	}
	expect(t, s.do(t, "GET", "/admin/modules", basic(id, secret), ""), 200, nil)

	// A credential given by flags.
	s2 := startServer(t, "--admin-key-id", "ADMINKEY", "--admin-key-secret", "s3cret")
	expect(t, s2.do(t, "GET", "/admin/modules", basic("ADMINKEY", "s3cret"), ""), 200, nil)
	expect(t, s2.do(t, "GET", "/admin/modules", basic(id, secret), ""), 403, nil)
	if _, err := os.Stat(filepath.Join(s2.DataDir, "admin-credentials.json")); err == nil {
		t.Error("a credential file was created although the credential was given")
	}
}

// riakPartition computes the first partition of the reference system's preference list
// for a key of the default type: SHA-1 of the external term {Bucket, Key}, 64 partitions.
func riakPartition(bucket, key string) int {
	term := []byte{131, 104, 2}
	for _, s := range []string{bucket, key} {
		term = append(term, 109, 0, 0, byte(len(s)>>8), byte(len(s)))
		term = append(term, s...)
	}
	sum := sha1.Sum(term)
	x := new(big.Int).SetBytes(sum[:])
	x.Rsh(x, 160-6) // the top 6 bits number the partition holding the hash
	return int((x.Int64() + 1) % 64)
}

func TestPreflist(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--node-name", "cairn@10.0.0.1")
	for _, key := range []string{"k", "alice", "a/b"} {
		p := riakPartition("users", key)
		want := fmt.Sprintf(`{"preflist":[{"partition":%d,"node":"cairn@10.0.0.1","primary":true},{"partition":%d,"node":"cairn@10.0.0.1","primary":true},{"partition":%d,"node":"cairn@10.0.0.1","primary":true}]}`,
			p, (p+1)%64, (p+2)%64)
		r := s.get(t, "/buckets/users/keys/"+strings.ReplaceAll(key, "/", "%2F")+"/preflist")
		expect(t, r, 200, &want)
		expectHeader(t, r, "Content-Type", "application/json")
	}
	s.setProps(t, "one", `{"n_val":1,"chash_keyfun":{"mod":"riak_core_util","fun":"chash_bucketonly_keyfun"}}`)
	a := s.get(t, "/buckets/one/keys/a/preflist")
	b := s.get(t, "/buckets/one/keys/b/preflist")
	expect(t, a, 200, nil)
	if string(a.Body) != string(b.Body) || strings.Count(string(a.Body), "partition") != 1 {
		t.Errorf("bucket-only keyfun: keys a and b placed %s and %s, want one identical partition", a.Body, b.Body)
	}
	expect(t, s.get(t, "/types/nope/buckets/b/keys/k/preflist"), 404, nil)
	expect(t, s.do(t, "PUT", "/buckets/users/keys/k/preflist", nil, "x"), 405, nil)
}
