package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// TestTTLCheckReportsExpiryEntries: `cairn check` accepts a store with expiring objects
// written in both dialects, and reports an expiry entry without its object and an
// object with a TTL without its entry.
func TestTTLCheckReportsExpiryEntries(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.mustPut(t, "/riak/b/k", "v", "X-Riak-TTL", "3600", "X-Riak-Index-f_bin", "x")
	s.mustPut(t, "/store/b/s", "v", "X-Store-TTL", "3600")
	s.Stop()
	if code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}}); code != 0 {
		t.Fatalf("cairn check of a consistent store: exit %d\n%s\n%s", code, out, errOut)
	}
	db, err := storage.Open(filepath.Join(s.DataDir, "leveldb"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.Get(storage.KeyString(storage.TagObject, core.DefaultType, "b", "s"))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	seedStore(t, s.DataDir, map[string][]byte{
		// a copy of b/s's record (with its expiry) that no expiry entry names
		string(storage.KeyString(storage.TagObject, core.DefaultType, "b", "copy")):         rec,
		string(storage.ExpiryKey(1, []byte(core.DefaultType), []byte("b"), []byte("gone"))): nil,
	})
	code, _, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	for _, want := range []string{
		"kv: expiry entry default/b/gone at 1 has no object with that expiry",
		"kv: object default/b/copy expiring at ",
		": 2 problems found\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("cairn check does not say %q", want)
		}
	}
	if code != 1 {
		t.Fatalf("cairn check: exit %d\n%s", code, errOut)
	}
}

// TestTTLMapReduceSkipsExpired: MapReduce over a bucket and over a 2i query leaves out
// objects that expired (TTLs given in both dialects).
func TestTTLMapReduceSkipsExpired(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.mustPut(t, "/riak/ttlmr/a", "1", "X-Riak-TTL", "1", "X-Riak-Index-f_bin", "x")
	s.mustPut(t, "/store/ttlmr/b", "2", "X-Store-TTL", "1", "X-Store-Index-f_bin", "x")
	s.mustPut(t, "/buckets/ttlmr/keys/c", "3", "X-Riak-Index-f_bin", "x")
	waitFor(t, 10*time.Second, "a and b to expire", func() bool {
		return s.get(t, "/buckets/ttlmr/keys/a").StatusCode == 404 && s.get(t, "/buckets/ttlmr/keys/b").StatusCode == 404
	})
	mapValue := `"query":[{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_object_value","keep":true}}]`
	want := `["3"]`
	for _, inputs := range []string{`"ttlmr"`, `{"bucket":"ttlmr","index":"f_bin","key":"x"}`} {
		r := s.do(t, "POST", "/mapred", hdr{"Content-Type", "application/json"}, `{"inputs":`+inputs+`,`+mapValue+`}`)
		expect(t, r, 200, &want)
	}
}
