package main

// Hostile input against KV objects, clocks and bucket properties (issue 15): each test
// replays an attack against the real binary and ends with assertServing.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// seedStore writes raw records into a stopped server's store, as an older build (or a
// damaged disk) could have left them.
func seedStore(t *testing.T, dataDir string, records map[string][]byte) {
	t.Helper()
	db, err := storage.Open(filepath.Join(dataDir, "leveldb"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	for k, v := range records {
		b.Put([]byte(k), v)
	}
	if err := db.Write(b, true); err != nil {
		t.Fatal(err)
	}
}

// preflistLen fetches a key's preference list and returns its length.
func preflistLen(t *testing.T, s *child, bucket, key string) int {
	t.Helper()
	r := s.get(t, "/buckets/"+bucket+"/keys/"+key+"/preflist")
	expect(t, r, 200, nil)
	var pl struct {
		Preflist []json.RawMessage `json:"preflist"`
	}
	if err := json.Unmarshal(r.Body, &pl); err != nil {
		t.Fatalf("preflist: %v\n%s", err, r)
	}
	return len(pl.Preflist)
}

// TestHostileNVal: n_val 10^12 on a bucket, then the preflist, used to abort the process
// (an allocation by n_val); on /types/default/props it did so for every bucket, after
// every restart. Now both are refused, and the same value stored by an older build is
// clamped, served, and reported by `cairn check`.
func TestHostileNVal(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	jsonCT := hdr{"Content-Type", "application/json"}
	for _, path := range []string{"/buckets/b/props", "/types/default/props", "/riak/b"} {
		r := s.do(t, "PUT", path, jsonCT, `{"props":{"n_val":1000000000000,"young_vclock":"x","w":70}}`)
		expect(t, r, 400, ptr(`{"n_val":"out_of_range: n_val must be an integer from 1 to 64","w":"not_valid_quorum: 70 is above n_val 3","young_vclock":"not_integer"}`))
	}
	if n := preflistLen(t, s, "b", "k"); n != 3 {
		t.Fatalf("preflist of %d", n)
	}
	expect(t, s.do(t, "PUT", "/buckets/b/props", jsonCT, `{"props":{"n_val":64}}`), 204, nil)
	if n := preflistLen(t, s, "b", "k"); n != 64 {
		t.Fatalf("preflist of %d with n_val 64", n)
	}
	assertServing(t, s)

	// What an older build stored: the type and a bucket with n_val 10^12.
	s.Stop()
	seedStore(t, s.DataDir, map[string][]byte{
		string(storage.KeyString(storage.TagType, core.DefaultType)):       []byte(`{"n_val":1000000000000}`),
		string(storage.KeyString(storage.TagProps, core.DefaultType, "b")): []byte(`{"n_val":999999999999999}`),
	})
	s.Restart()
	for _, b := range []string{"b", "other"} {
		if n := preflistLen(t, s, b, "k"); n != 64 {
			t.Fatalf("%s: preflist of %d with a stored n_val above 64", b, n)
		}
		s.mustPut(t, "/buckets/"+b+"/keys/k", "v")
		expect(t, s.get(t, "/buckets/"+b+"/keys/k"), 200, ptr("v"))
		expect(t, s.do(t, "DELETE", "/buckets/"+b+"/keys/k", nil, ""), 204, nil)
	}
	assertServing(t, s)
	s.Stop()
	code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	for _, want := range []string{
		"kv: bucket type default: n_val is 1000000000000: out_of_range: n_val must be an integer from 1 to 64\n",
		"kv: bucket default/b: n_val is 999999999999999: out_of_range",
		": 2 problems found\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("cairn check does not say %q", want)
		}
	}
	if code != 1 || strings.Contains(out, "is consistent") {
		t.Fatalf("cairn check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// vclockHeader returns the X-Riak-Vclock value of a clock.
func vclockHeader(entries ...vclock.Entry) string {
	return base64.StdEncoding.EncodeToString(vclock.VClock(entries).Encode())
}

// nodeActor returns the server's actor id, read from the clock of a write.
func nodeActor(t *testing.T, s *child) string {
	t.Helper()
	r := s.mustPut(t, "/buckets/probe/keys/k?returnbody=true", "v")
	raw, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Store-Vclock"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := vclock.Decode(raw)
	if err != nil || len(c) != 1 {
		t.Fatalf("clock %v: %v", c, err)
	}
	return c[0].Actor
}

// actors returns n fresh foreign entries (fresh timestamps: the bucket's pruning keeps them).
func actors(prefix string, n int) []vclock.Entry {
	out := make([]vclock.Entry, n)
	for i := range out {
		out[i] = vclock.Entry{Actor: fmt.Sprintf("%s%04d", prefix, i), Counter: 1, Timestamp: time.Now().Unix()}
	}
	return out
}

// TestHostileForgedClock: a clock whose entry for the node is 2^64−1, or one with 4,096
// foreign actors, used to leave a record that no longer decoded: every PUT and DELETE of
// the key then answered 500, also after a restart, and `cairn check` called the whole
// store corrupt. Now such clocks are refused with 400, accepted ones never grow a stored
// clock beyond what decodes, and the key stays writable.
func TestHostileForgedClock(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	node := nodeActor(t, s)
	ct := hdr{"Content-Type", "text/plain"}
	with := func(clock string) hdr { return hdr{"Content-Type", "text/plain", "X-Riak-Vclock", clock} }
	s.mustPut(t, "/buckets/b/keys/k", "v")
	for _, c := range []struct {
		name, clock, want string
	}{
		{"own counter 2^64-1", vclockHeader(vclock.Entry{Actor: node, Counter: 1<<64 - 1}),
			fmt.Sprintf("Invalid vector clock: vclock: malformed clock: counter 18446744073709551615 of actor %q is above 9007199254740992\n", node)},
		{"4096 actors", vclockHeader(actors("a", 4096)...), "Invalid vector clock: vclock: malformed clock: 4096 entries, more than 1024\n"},
	} {
		expect(t, s.do(t, "PUT", "/buckets/b/keys/k", with(c.clock), "forged"), 400, &c.want)
		expect(t, s.do(t, "DELETE", "/buckets/b/keys/k", hdr{"X-Riak-Vclock", c.clock}, ""), 400, &c.want)
		expect(t, s.get(t, "/buckets/b/keys/k"), 200, ptr("v"))
	}
	// Clocks at the limits are taken, write after write, and the key stays writable.
	for i := range 4 {
		expect(t, s.do(t, "PUT", "/buckets/b/keys/k", with(vclockHeader(actors(fmt.Sprintf("r%d-", i), vclock.MaxReceivedEntries)...)), "wide"), 204, nil)
	}
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", with(vclockHeader(vclock.Entry{Actor: node, Counter: vclock.MaxCounter})), "high"), 204, nil)
	expect(t, s.get(t, "/buckets/b/keys/k"), 200, ptr("high"))
	s.Stop()
	s.Restart()
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", ct, "after restart"), 204, nil)
	expect(t, s.do(t, "DELETE", "/buckets/b/keys/k", nil, ""), 204, nil)
	assertServing(t, s)
	s.Stop()
	if code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}}); code != 0 || !strings.Contains(out, "is consistent") {
		t.Fatalf("cairn check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestHostileSiblingFlood: blind writes with allow_mult used to grow one key without
// bound. The 101st sibling is refused with 409 (Riak's max_siblings, 100 by default) and
// a warning is logged from the 26th (warn_siblings); a write with the clock resolves
// them. max_object_size (plus one value's worth of headers, 64 KiB) bounds the whole
// sibling set (413).
func TestHostileSiblingFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.setProps(t, "flood", `{"allow_mult":true}`)
	ct := hdr{"Content-Type", "text/plain"}
	for i := range 100 {
		expect(t, s.do(t, "PUT", "/buckets/flood/keys/k", ct, fmt.Sprint("v", i)), 204, nil)
	}
	want := "Too many siblings: the write would leave 101, above the bucket's max_siblings of 100; write with the object's vector clock to resolve them\n"
	expect(t, s.do(t, "PUT", "/buckets/flood/keys/k", ct, "v100"), 409, &want)
	r := s.get(t, "/buckets/flood/keys/k")
	expect(t, r, 300, nil)
	if n := strings.Count(string(r.Body), "\n") - 1; n != 100 {
		t.Fatalf("%d siblings after a refused 101st", n)
	}
	if !strings.Contains(s.stderr.String(), "too many siblings") {
		t.Errorf("no warning above warn_siblings in the log")
	}
	clock := r.Header.Get("X-Store-Vclock")
	expect(t, s.do(t, "PUT", "/buckets/flood/keys/k", hdr{"Content-Type", "text/plain", "X-Store-Vclock", clock}, "resolved"), 204, nil)
	expect(t, s.get(t, "/buckets/flood/keys/k"), 200, ptr("resolved"))

	s.setProps(t, "big", `{"allow_mult":true,"max_object_size":50000}`)
	value := strings.Repeat("x", 40000)
	for range 2 {
		expect(t, s.do(t, "PUT", "/buckets/big/keys/k", ct, value), 204, nil)
	}
	want = "Object of 120030 bytes over all its siblings exceeds the bucket's max_object_size of 50000 bytes (plus 65536 bytes of headers)\n"
	expect(t, s.do(t, "PUT", "/buckets/big/keys/k", ct, value), 413, &want)
	clock = s.get(t, "/buckets/big/keys/k").Header.Get("X-Store-Vclock")
	expect(t, s.do(t, "PUT", "/buckets/big/keys/k", hdr{"Content-Type", "text/plain", "X-Store-Vclock", clock}, value), 204, nil)
	assertServing(t, s)
}

// TestHostileMetadataFlood: 10,000 user metadata headers used to be stored and returned
// on every GET. Values over --max-object-meta-entries or --max-object-header-bytes are
// refused with 400 before the body is read, and nothing is stored. Huge timeouts are
// refused too.
func TestHostileMetadataFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--max-object-meta-entries", "50", "--max-object-header-bytes", "4KiB")
	many := func(n int) hdr {
		h := hdr{"Content-Type", "text/plain"}
		for i := range n {
			h = append(h, fmt.Sprintf("X-Riak-Meta-H%05d", i), "v")
		}
		return h
	}
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", many(10000), "v"), 400,
		ptr("Too many user metadata entries: 10000, the maximum is 50\n"))
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", many(51), "v"), 400, ptr("Too many user metadata entries: 51, the maximum is 50\n"))
	expect(t, s.do(t, "PUT", "/buckets/b/keys/k", hdr{"Content-Type", "text/plain", "X-Riak-Meta-Big", strings.Repeat("b", 4096)}, "v"), 400,
		ptr("Headers too large: 4109 bytes of content type, user metadata, index entries and links, the maximum is 4096\n"))
	expect(t, s.get(t, "/buckets/b/keys/k"), 404, ptr("not found\n"))
	r := s.do(t, "PUT", "/buckets/b/keys/k?returnbody=true", many(50), "v")
	expect(t, r, 200, ptr("v"))
	meta := 0
	for name := range r.Header { // answered in the names the request used
		if strings.HasPrefix(name, "X-Riak-Meta-") {
			meta++
		}
	}
	if meta != 50 {
		t.Fatalf("%d metadata headers returned, want 50", meta)
	}
	for _, path := range []string{"/buckets/b/keys/k?timeout=9223372036854775807", "/buckets/b/keys?keys=true&timeout=4294967296"} {
		want := "Bad timeout value \"" + path[strings.Index(path, "timeout=")+8:] + "\"\n"
		expect(t, s.get(t, path), 400, &want)
	}
	assertServing(t, s)
}

// TestHostileCheckReportsEveryProblem: `cairn check` used to stop at the first bad key
// and call the whole store corrupt. Seeded with several distinct problems, it reports
// each, their count, and exits 1.
func TestHostileCheckReportsEveryProblem(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.mustPut(t, "/buckets/b/keys/good", "v", "X-Riak-Index-f_bin", "x")
	s.Stop()
	orphan, err := index.PostingKey(core.DefaultType, "b", "gone", core.IndexEntry{Field: "f_bin", Value: "y"})
	if err != nil {
		t.Fatal(err)
	}
	seedStore(t, s.DataDir, map[string][]byte{
		string(storage.KeyString(storage.TagObject, core.DefaultType, "b", "bad1")): {1, 2, 3},
		string(storage.KeyString(storage.TagObject, core.DefaultType, "b", "bad2")): {7},
		string(orphan): nil,
		string(storage.KeyString(storage.TagType, core.DefaultType)): []byte(`{"small_vclock":0}`),
	})
	code, out, errOut := runCairn(t, serverOpts{args: []string{"check", "--data-dir", s.DataDir}})
	for _, want := range []string{
		"kv: object default/b/bad1: kv: corrupt object record",
		"kv: object default/b/bad2: kv: corrupt object record: version 7",
		"kv: orphan posting",
		"kv: bucket type default: small_vclock is 0: not_integer",
		": 4 problems found\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("cairn check does not say %q", want)
		}
	}
	if code != 1 || !strings.Contains(out, "cairn: kv: 3 objects, 2 index postings, 1 property records") {
		t.Fatalf("cairn check: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
