package s3

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// BenchmarkPutObject measures the service's PUT of 1 KiB objects (one synced commit
// each): to new keys, and over one key (each replaces a version and queues its data;
// in a versioned bucket, each keeps the version it supersedes, rewritten noncurrent).
func BenchmarkPutObject(b *testing.B) {
	for _, c := range []struct {
		name      string
		key       func(i int) string
		versioned bool
	}{
		{"new-keys", func(i int) string { return "k" + strconv.Itoa(i) }, false},
		{"one-key", func(int) string { return "k" }, false},
		{"one-key-versioned", func(int) string { return "k" }, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, r := benchService(b, Config{})
			ctx := context.Background()
			if c.versioned {
				if err := s.SetBucketVersioning(ctx, r, "bench", VersioningEnabled); err != nil {
					b.Fatal(err)
				}
			}
			data := bytes.Repeat([]byte("x"), 1024)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				in := PutInput{Body: bytes.NewReader(data), Size: int64(len(data))}
				if _, err := s.PutObject(ctx, r, "bench", c.key(i), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchService opens a service with cfg on a fresh store (closed at the end of the
// benchmark) and returns it with a user who owns the bucket "bench".
func benchService(b *testing.B, cfg Config) (*Service, Requester) {
	b.Helper()
	db, err := storage.Open(filepath.Join(b.TempDir(), "db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := New(db, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Name: "bench", Email: "bench@example.com"})
	if err != nil {
		b.Fatal(err)
	}
	r := Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, _ := CannedACL("", Owner{ID: r.ID}, Owner{ID: r.ID})
	if _, err := s.CreateBucket(ctx, r, "bench", acl); err != nil {
		b.Fatal(err)
	}
	return s, r
}
