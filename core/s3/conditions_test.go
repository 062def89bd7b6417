package s3

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConditionalPut: If-None-Match "*" creates only, If-Match replaces only the
// version named, each with S3's answers; a refused write stores nothing.
func TestConditionalPut(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	put := func(key, body string, c WriteConditions) (*Manifest, error) {
		return s.PutObject(ctx, alice, "bkt", key, PutInput{Body: bytes.NewReader([]byte(body)), Size: int64(len(body)), Conditions: c})
	}
	first, err := put("k", "one", WriteConditions{IfNoneMatch: "*"})
	if err != nil {
		t.Fatalf("create with If-None-Match *: %v", err)
	}
	for _, tc := range []struct {
		name string
		key  string
		c    WriteConditions
		code Code // "" = accepted
	}{
		{"create over an existing key", "k", WriteConditions{IfNoneMatch: "*"}, PreconditionFailed},
		{"If-None-Match with an ETag", "k", WriteConditions{IfNoneMatch: `"` + first.ETag + `"`}, NotImplemented},
		{"If-Match another ETag", "k", WriteConditions{IfMatch: `"0123"`}, PreconditionFailed},
		{"If-Match a weak ETag", "k", WriteConditions{IfMatch: `W/"` + first.ETag + `"`}, PreconditionFailed},
		{"If-Match on a missing key", "nope", WriteConditions{IfMatch: `"` + first.ETag + `"`}, NoSuchKey},
		{"If-Match * on a missing key", "nope", WriteConditions{IfMatch: "*"}, NoSuchKey},
		{"If-Match the current ETag, in a list", "k", WriteConditions{IfMatch: `"x", "` + first.ETag + `"`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := etagOf(t, s, alice, "k")
			_, err := put(tc.key, "two", tc.c)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !IsCode(err, tc.code) {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if etagOf(t, s, alice, "k") != before {
				t.Fatal("a refused write changed the object")
			}
			if etagOf(t, s, alice, "nope") != "" {
				t.Fatal("a refused write created the key")
			}
		})
	}
}

// TestConditionalPutRace: of 32 writers racing to create one key with If-None-Match
// "*", exactly one succeeds and the others get 412; the object is the winner's.
func TestConditionalPutRace(t *testing.T) {
	for _, kind := range []blobKind{noBlobs, memBlobs} {
		t.Run(string(kind), func(t *testing.T) {
			s, _ := newTestServiceBlobs(t, kind)
			ctx := context.Background()
			alice := mustUser(t, s, "alice")
			mustBucket(t, s, alice, "bkt", "")
			const writers = 32
			var wg sync.WaitGroup
			start := make(chan struct{})
			etags := make([]string, writers)
			errs := make([]error, writers)
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := bytes.Repeat([]byte(fmt.Sprintf("%02d", i)), 20)
					<-start
					m, err := s.PutObject(ctx, alice, "bkt", "race", PutInput{Body: bytes.NewReader(body), Size: int64(len(body)),
						Conditions: WriteConditions{IfNoneMatch: "*"}})
					if err == nil {
						etags[i] = m.ETag
					}
					errs[i] = err
				}()
			}
			close(start)
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("writers %d and %d both created the key", winner, i)
				case err == nil:
					winner = i
				case !IsCode(err, PreconditionFailed):
					t.Fatalf("writer %d: %v, want PreconditionFailed", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no writer created the key")
			}
			if etagOf(t, s, alice, "race") != etags[winner] {
				t.Fatal("the object is not the winner's")
			}
		})
	}
}

// etagOf returns the ETag of bkt/key ("" when it does not exist).
func etagOf(t *testing.T, s *Service, r Requester, key string) string {
	t.Helper()
	o, err := s.OpenObject(context.Background(), r, "bkt", key)
	if IsCode(err, NoSuchKey) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	return o.Manifest.ETag
}
