package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/storage"
)

// TestRandomVersionSequences runs random sequences of versioned operations (PUT,
// DELETE with and without version id, copy, multipart, versioning changes, ACL and
// tag changes, lifecycle) from three goroutines over two services sharing one store:
// after each round Check passes, every listed version reads back whole (a single-PUT
// version's bytes have its ETag), every key has one latest version, and HEAD agrees
// with the listing. A few seeds (-short: fewer rounds) of the review's 40.
func TestRandomVersionSequences(t *testing.T) {
	rounds := 15
	if testing.Short() {
		rounds = 6
	}
	for _, seed := range []int64{1, 7, 23} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomVersionSequence(t, seed, rounds) })
	}
}

// randomVersionSequence runs rounds rounds of the random operations of seed (see
// TestRandomVersionSequences).
func randomVersionSequence(t *testing.T, seed int64, rounds int) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs := newBlobStore(t, memBlobs)
	var svcs [2]*Service
	for i := range svcs {
		if svcs[i], err = New(db, Config{ChunkSize: 16, MinPartSize: 20, Blobs: blobs, LifecycleDay: 5 * time.Millisecond, LifecycleInterval: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	defer db.Close()
	defer func() {
		for _, s := range svcs {
			s.Close()
		}
	}()
	ctx := context.Background()
	alice := mustUser(t, svcs[0], "alice")
	mustBucket(t, svcs[0], alice, "bkt", "private")
	keys := []string{"a", "b", "c/d"}
	var logMu sync.Mutex
	var oplog []string
	logf := func(f string, args ...any) {
		logMu.Lock()
		oplog = append(oplog, fmt.Sprintf(f, args...))
		logMu.Unlock()
	}
	var seqMu sync.Mutex
	seq := 0
	body := func(r *rand.Rand) []byte {
		seqMu.Lock()
		seq++
		n := seq
		seqMu.Unlock()
		size := r.Intn(50)
		b := []byte(fmt.Sprintf("%d:%s", n, strings.Repeat("x", size)))
		return b
	}
	versionIDs := func(s *Service, key string) []string {
		l, err := s.ListObjectVersions(ctx, alice, "bkt", VersionListOptions{Prefix: key, MaxKeys: 1000})
		if err != nil {
			return nil
		}
		var ids []string
		for _, v := range l.Versions {
			if v.Key == key {
				ids = append(ids, v.VersionID)
			}
		}
		return ids
	}
	pickID := func(r *rand.Rand, s *Service, key string) string {
		ids := versionIDs(s, key)
		switch {
		case len(ids) == 0 || r.Intn(6) == 0:
			return NullVersionID
		}
		return ids[r.Intn(len(ids))]
	}
	unexpected := func(what string, err error) {
		if err == nil {
			return
		}
		e := AsError(err)
		if e == nil || e.Code == InternalError {
			t.Errorf("%s: unexpected error %v", what, err)
		}
	}
	op := func(r *rand.Rand) {
		s := svcs[r.Intn(2)]
		key := keys[r.Intn(len(keys))]
		switch x := r.Intn(100); {
		case x < 25:
			b := body(r)
			m, err := s.PutObject(ctx, alice, "bkt", key, PutInput{Body: bytes.NewReader(b), Size: int64(len(b))})
			unexpected("put", err)
			if err == nil {
				logf("put %s -> %q", key, m.VersionID)
			}
		case x < 35:
			res, err := s.DeleteObjectVersion(ctx, alice, "bkt", key, "")
			unexpected("delete", err)
			logf("delete %s -> %+v %v", key, res, err)
		case x < 50:
			id := pickID(r, s, key)
			res, err := s.DeleteObjectVersion(ctx, alice, "bkt", key, id)
			unexpected("delete version", err)
			logf("delete %s?versionId=%s -> %+v %v", key, id, res, err)
		case x < 58:
			id := pickID(r, s, key)
			dst := keys[r.Intn(len(keys))]
			m, err := s.CopyObject(ctx, alice, "bkt", key, "bkt", dst, CopyInput{SourceVersionID: id, ReplaceMeta: true})
			if err != nil && !IsCode(err, NoSuchVersion) && !IsCode(err, NoSuchKey) && !IsCode(err, MethodNotAllowed) {
				unexpected("copy", err)
			}
			if err == nil {
				logf("copy %s@%s -> %s %q", key, id, dst, m.VersionID)
			}
		case x < 64:
			u, err := s.CreateUpload(ctx, alice, "bkt", key, PutInput{})
			if err != nil {
				unexpected("create upload", err)
				return
			}
			p1b := bytes.Repeat([]byte("p"), 20+r.Intn(20))
			p2b := body(r)
			p1, err := s.PutPart(ctx, alice, "bkt", key, u.ID, 1, PutInput{Body: bytes.NewReader(p1b), Size: int64(len(p1b))})
			unexpected("part 1", err)
			p2, err2 := svcs[r.Intn(2)].PutPart(ctx, alice, "bkt", key, u.ID, 2, PutInput{Body: bytes.NewReader(p2b), Size: int64(len(p2b))})
			unexpected("part 2", err2)
			if err != nil || err2 != nil {
				return
			}
			m, err := svcs[r.Intn(2)].CompleteUpload(ctx, alice, "bkt", key, u.ID, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, WriteConditions{})
			unexpected("complete", err)
			if err == nil {
				logf("multipart %s -> %q", key, m.VersionID)
			}
		case x < 70:
			st := VersioningEnabled
			if r.Intn(2) == 0 {
				st = VersioningSuspended
			}
			err := s.SetBucketVersioning(ctx, alice, "bkt", st)
			unexpected("versioning", err)
			logf("versioning %s %v", st, err)
		case x < 78:
			id := ""
			if r.Intn(2) == 0 {
				id = pickID(r, s, key)
			}
			canned := []string{"private", "public-read"}[r.Intn(2)]
			err := s.SetObjectVersionACL(ctx, alice, "bkt", key, id, ACLSpec{Canned: canned})
			if err != nil && !IsCode(err, NoSuchKey) && !IsCode(err, NoSuchVersion) && !IsCode(err, MethodNotAllowed) {
				unexpected("acl", err)
			}
			logf("acl %s@%q %s %v", key, id, canned, err)
		case x < 86:
			id := ""
			if r.Intn(2) == 0 {
				id = pickID(r, s, key)
			}
			err := s.SetObjectVersionTagging(ctx, alice, "bkt", key, id, []Tag{{Key: "t", Value: fmt.Sprint(r.Intn(3))}})
			if err != nil && !IsCode(err, NoSuchKey) && !IsCode(err, NoSuchVersion) && !IsCode(err, MethodNotAllowed) {
				unexpected("tag", err)
			}
			logf("tag %s@%q %v", key, id, err)
		case x < 90:
			err := s.SetBucketLifecycle(ctx, alice, "bkt", &Lifecycle{Rules: []LifecycleRule{{ID: "e", Enabled: true,
				Filter: s3types.LifecycleFilter{Prefix: key[:1]}, Expiration: &s3types.LifecycleExpiration{Days: 1 + r.Intn(3)}}}})
			unexpected("lifecycle", err)
		default:
			err := s.lifecycleCycle(ctx, time.Now())
			unexpected("cycle", err)
			logf("lifecycle cycle %v", err)
		}
	}
	check := func(stage string) {
		for _, s := range svcs {
			waitCollected(t, s)
		}
		if _, err := Check(db, blobs); err != nil {
			t.Errorf("seed %d %s: check: %v", seed, stage, err)
		}
		// Every listed version reads back whole; a single-PUT version's bytes have its ETag.
		l, err := svcs[0].ListObjectVersions(ctx, alice, "bkt", VersionListOptions{MaxKeys: 1000})
		if err != nil {
			t.Fatal(err)
		}
		latest := map[string]int{}
		for _, v := range l.Versions {
			if v.IsLatest {
				latest[v.Key]++
			}
			if v.DeleteMarker {
				continue
			}
			o, err := svcs[0].OpenObjectVersion(ctx, alice, "bkt", v.Key, v.VersionID)
			if err != nil {
				t.Errorf("seed %d %s: open listed %s@%s: %v", seed, stage, v.Key, v.VersionID, err)
				continue
			}
			var buf bytes.Buffer
			err = o.WriteRange(ctx, &buf, 0, o.Manifest.Size)
			o.Close()
			sum := md5.Sum(buf.Bytes())
			if err != nil || int64(buf.Len()) != v.Size || !strings.Contains(v.ETag, "-") && hex.EncodeToString(sum[:]) != v.ETag {
				t.Errorf("seed %d %s: read listed %s@%s: %d bytes of %d, %v", seed, stage, v.Key, v.VersionID, buf.Len(), v.Size, err)
			}
		}
		for k, n := range latest {
			if n != 1 {
				t.Errorf("seed %d %s: key %s has %d latest versions", seed, stage, k, n)
			}
		}
		// Current-version reads agree with the listing's latest entry.
		for _, key := range keys {
			var lat *VersionInfo
			for i := range l.Versions {
				if l.Versions[i].Key == key && l.Versions[i].IsLatest {
					lat = &l.Versions[i]
				}
			}
			m, err := svcs[1].StatObject(ctx, alice, "bkt", key)
			switch {
			case lat == nil && err == nil:
				t.Errorf("seed %d %s: %s: no latest version listed, HEAD finds %q", seed, stage, key, m.VersionID)
			case lat != nil && lat.DeleteMarker && err == nil:
				t.Errorf("seed %d %s: %s: latest is a marker, HEAD finds %q", seed, stage, key, m.VersionID)
			case lat != nil && !lat.DeleteMarker && (err != nil || externalID(m.VersionID) != lat.VersionID):
				t.Errorf("seed %d %s: %s: latest %s, HEAD %v %v", seed, stage, key, lat.VersionID, m, err)
			}
		}
	}
	r := rand.New(rand.NewSource(seed))
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			gr := rand.New(rand.NewSource(r.Int63()))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 6; i++ {
					op(gr)
				}
			}()
		}
		wg.Wait()
		check(fmt.Sprintf("round %d", round))
		if t.Failed() {
			for _, l := range oplog {
				t.Log(l)
			}
			return
		}
	}
}
