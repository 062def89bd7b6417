package s3

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnkv/cairn/core/storage"
)

// CheckReport is what Check found in a stopped server's S3 tables.
type CheckReport struct {
	Users, Buckets, Objects int
	// Chunks counts stored data chunk records, Blobs blob files; Pending counts chunk
	// sets that a write in progress ("w") or the collector ("g") still owns.
	Chunks, Blobs, Pending int
	// Problems counts every problem found; the error lists the first maxCheckErrors.
	Problems int
}

// maxCheckErrors is how many problems Check's error lists.
const maxCheckErrors = 100

// Check verifies the S3 tables of db without changing them: users and their e-mail and
// canonical-id entries agree, every bucket is in its owner's list and back, bucket and
// object tags and lifecycle configurations keep their limits, the lifecycle indexes
// agree with the manifests and uploads (checkLifecycleIndex) and with the versions
// (checkVersionsIndex), every manifest belongs to
// an existing bucket and has exactly the chunks its size needs, the versions tables
// agree (checkVersions), no listed data is queued for collection or still being
// written (checkQueuedListed), and every chunk belongs to a manifest or to pending work (a chunk no one owns is a leak).
// It finds every problem: the error joins the first maxCheckErrors, and the report
// counts them all.
//
// blobs may be nil when the server keeps no blob store.
func Check(db storage.Store, blobs storage.BlobStore) (CheckReport, error) {
	var rep CheckReport
	var errs []error
	bad := func(format string, args ...any) {
		rep.Problems++
		if len(errs) < maxCheckErrors {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		return rep, err
	}
	defer snap.Release()
	tables := map[string]map[string][]byte{} // table → encoded rest of key → value
	it := snap.IteratePrefix([]byte{storage.TagS3})
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) < 2 {
			bad("s3: malformed key %q", it.Key())
			continue
		}
		t := string(comps[0])
		if tables[t] == nil {
			tables[t] = map[string][]byte{}
		}
		tables[t][joinKey(stringsOf(comps[1:])...)] = bytes.Clone(it.Value())
	}
	it.Release()
	if err := it.Err(); err != nil {
		return rep, err
	}
	one := func(k string) string { return splitKey(k)[0] }
	two := func(k string) (string, string) {
		s := splitKey(k)
		if len(s) < 2 {
			return s[0], ""
		}
		return s[0], s[1]
	}
	key := joinKey

	for k, v := range tables["u"] {
		rep.Users++
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			bad("s3: user %s does not decode: %v", one(k), err)
			continue
		}
		if string(tables["ue"][key(strings.ToLower(u.Email))]) != u.KeyID {
			bad("s3: user %s: e-mail entry missing", u.KeyID)
		}
		if string(tables["ui"][key(u.ID)]) != u.KeyID {
			bad("s3: user %s: canonical-id entry missing", u.KeyID)
		}
	}
	buckets := map[string]Bucket{}
	for k, v := range tables["b"] {
		rep.Buckets++
		var b Bucket
		if err := json.Unmarshal(v, &b); err != nil {
			bad("s3: bucket %s does not decode: %v", one(k), err)
			continue
		}
		buckets[b.Name] = b
		if err := CheckBucketTags(b.Tags); err != nil {
			bad("s3: bucket %s: tags: %v", b.Name, err)
		}
		if b.CORS != nil {
			if err := CheckCORSRules(b.CORS); err != nil {
				bad("s3: bucket %s: cors: %v", b.Name, err)
			}
		}
		if _, ok := tables["ob"][key(b.Owner.ID, b.Name)]; !ok {
			bad("s3: bucket %s missing from its owner's list", b.Name)
		}
	}
	for k := range tables["ob"] {
		owner, name := two(k)
		if b, ok := buckets[name]; !ok || b.Owner.ID != owner {
			bad("s3: owner list of %s names bucket %s, which it does not own", owner, name)
		}
	}
	owned := map[string]bool{} // chunk id (raw) → owned by someone
	for _, t := range []string{"w", "g"} {
		for k := range tables[t] {
			owned[one(k)] = true
			rep.Pending++
		}
	}
	// Uploads in progress own their parts' data.
	uploads := map[string]bool{}
	for k, v := range tables["mu"] {
		var u Upload
		if err := json.Unmarshal(v, &u); err != nil {
			bad("s3: upload %q does not decode: %v", k, err)
			continue
		}
		uploads[u.ID] = true
	}
	extents := map[string]Extent{} // chunk id → the extent that names it
	partIDs := map[string]bool{}   // chunk ids of upload parts
	for k, v := range tables["mp"] {
		id, _ := two(k)
		if !uploads[id] {
			bad("s3: a part of upload %s, which does not exist", id)
		}
		var p PartInfo
		if err := json.Unmarshal(v, &p); err != nil {
			bad("s3: part of upload %s does not decode: %v", id, err)
			continue
		}
		raw, err := hex.DecodeString(p.Extent.ID)
		if err != nil || len(raw) != 16 {
			bad("s3: part of upload %s: bad chunk id %q", id, p.Extent.ID)
			continue
		}
		owned[string(raw)] = true
		extents[string(raw)] = p.Extent
		partIDs[string(raw)] = true
	}
	manifests := map[string]Manifest{}
	for k, v := range tables["o"] {
		rep.Objects++
		bucket, name := two(k)
		var m Manifest
		if err := json.Unmarshal(v, &m); err != nil {
			bad("s3: manifest %s/%s does not decode: %v", bucket, name, err)
			continue
		}
		if _, ok := buckets[bucket]; !ok {
			bad("s3: object %s/%s is in a bucket that does not exist", bucket, name)
		}
		if err := CheckObjectTags(m.Tags); err != nil {
			bad("s3: manifest %s/%s: tags: %v", bucket, name, err)
		}
		if err := checkEncryption(&m); err != nil {
			bad("s3: manifest %s/%s: %v", bucket, name, err)
		}
		checkLock("manifest "+bucket+"/"+name, &m, buckets[bucket], bad)
		id, err := hex.DecodeString(m.UUID)
		if err != nil || len(id) != 16 {
			bad("s3: manifest %s/%s: bad chunk id %q", bucket, name, m.UUID)
			continue
		}
		if _, dup := manifests[string(id)]; dup {
			bad("s3: chunk id %s is used by two manifests", m.UUID)
		}
		manifests[string(id)] = m
		checkData("manifest "+bucket+"/"+name, &m, owned, extents, bad)
	}
	checkVersions(tables, buckets, owned, extents, bad)
	checkQueuedListed(tables, extents, partIDs, bad)
	for name, b := range buckets {
		checkBucketLock(name, b, bad)
	}
	// Chunks, in key order: per id, count and sizes.
	sizes := map[string][]int{}
	cit := snap.Scan([]byte{storage.TagChunk})
	for cit.Next() {
		_, comps, err := storage.DecodeKey(cit.Key())
		if err != nil || len(comps) != 2 {
			bad("s3: malformed chunk key %q", cit.Key())
			continue
		}
		rep.Chunks++
		id := string(comps[0])
		if !owned[id] {
			bad("s3: chunk %x/%x belongs to no object and to no pending work (leaked)", comps[0], comps[1])
		}
		sizes[id] = append(sizes[id], len(cit.Value()))
	}
	cit.Release()
	if err := cit.Err(); err != nil {
		return rep, err
	}
	blobSizes := map[string]int64{}
	if blobs != nil {
		err := blobs.Walk(context.Background(), func(id []byte, name string, size int64) error {
			rep.Blobs++
			switch {
			case id == nil:
				bad("s3: %s in the blob directory is not a blob", name)
			case !owned[string(id)]:
				bad("s3: blob %x belongs to no object and to no pending work (leaked)", id)
			}
			blobSizes[string(id)] = size
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	for id, e := range extents {
		label := hex.EncodeToString([]byte(id))
		if e.Blob {
			size, ok := blobSizes[id]
			switch {
			case blobs == nil:
				bad("s3: data %s is in a blob and no blob store was given", label)
			case !ok:
				bad("s3: data %s: its blob is missing", label)
			case !e.holds(size):
				bad("s3: data %s: blob of %d bytes, %d expected", label, size, e.storedSize())
			}
			if len(sizes[id]) > 0 {
				bad("s3: data %s has a blob and chunk records", label)
			}
			continue
		}
		var total int64
		for i, n := range sizes[id] {
			total += int64(n)
			if i < len(sizes[id])-1 && n != e.ChunkSize {
				bad("s3: chunk %d of %s is %d bytes, not %d", i, label, n, e.ChunkSize)
			}
		}
		if !e.holds(total) {
			bad("s3: data %s holds %d bytes in chunks, %d expected", label, total, e.storedSize())
		}
	}
	checkLifecycleIndex(tables, bad)
	checkVersionsIndex(tables, bad)
	for name, b := range buckets {
		if b.Lifecycle != nil {
			if err := CheckLifecycle(b.Lifecycle); err != nil {
				bad("s3: bucket %s: lifecycle: %v", name, err)
			}
		}
	}
	if rep.Problems > len(errs) {
		errs = append(errs, fmt.Errorf("s3: (and %d more problems)", rep.Problems-len(errs)))
	}
	return rep, errors.Join(errs...)
}

func stringsOf(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// joinKey and splitKey encode a tuple of strings as one map key (length-prefixed, so
// any bytes are safe).
func joinKey(parts ...string) string {
	var b []byte
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return string(b)
}

func splitKey(k string) []string {
	var out []string
	b := []byte(k)
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			break
		}
		out = append(out, string(b[w:w+int(n)]))
		b = b[w+int(n):]
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}
