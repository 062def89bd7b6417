package s3

import (
	"bytes"
	"context"
	"testing"
)

// TestManifestBucket: the manifests the service returns carry the record of their
// bucket as read or committed with them (what the interface answers x-amz-version-id
// and x-amz-expiration from, without a second lookup): a PUT, copy and multipart
// completion the versioning state they were committed in, a read the record it was
// read in; a retried completion's answer, not read from the bucket, carries none.
func TestManifestBucket(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	s.cfg.MinPartSize = 1
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "bkt", "")
	put := func(key string) (*Manifest, error) {
		return s.PutObject(ctx, alice, "bkt", key, PutInput{Body: bytes.NewReader([]byte("data")), Size: 4})
	}
	opened := func(key string) (*Manifest, error) {
		o, err := s.OpenObject(ctx, alice, "bkt", key)
		if err != nil {
			return nil, err
		}
		defer o.Close()
		return o.Manifest, nil
	}
	var uploadID string
	var parts []CompletePart
	complete := func(key string) (*Manifest, error) {
		u, err := s.CreateUpload(ctx, alice, "bkt", key, PutInput{})
		if err != nil {
			return nil, err
		}
		p, err := s.PutPart(ctx, alice, "bkt", key, u.ID, 1, PutInput{Body: bytes.NewReader([]byte("part")), Size: 4})
		if err != nil {
			return nil, err
		}
		uploadID, parts = u.ID, []CompletePart{{Number: 1, ETag: p.ETag}}
		return s.CompleteUpload(ctx, alice, "bkt", key, u.ID, parts, WriteConditions{})
	}
	for _, versioning := range []string{"", VersioningEnabled} {
		if versioning != "" {
			if err := s.SetBucketVersioning(ctx, alice, "bkt", versioning); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			name string
			f    func() (*Manifest, error)
		}{
			{"put", func() (*Manifest, error) { return put("k") }},
			{"copy", func() (*Manifest, error) { return s.CopyObject(ctx, alice, "bkt", "k", "bkt", "copy", CopyInput{}) }},
			{"complete", func() (*Manifest, error) { return complete("mp") }},
			{"open", func() (*Manifest, error) { return opened("k") }},
			{"stat", func() (*Manifest, error) { return s.StatObject(ctx, alice, "bkt", "k") }},
		} {
			m, err := c.f()
			if err != nil {
				t.Fatalf("%s (versioning %q): %v", c.name, versioning, err)
			}
			if b := m.Bucket(); b == nil || b.Name != "bkt" || b.Versioning != versioning {
				t.Errorf("%s (versioning %q): manifest's bucket %+v", c.name, versioning, b)
			}
		}
	}
	again, err := s.CompleteUpload(ctx, alice, "bkt", "mp", uploadID, parts, WriteConditions{})
	if err != nil || again.Bucket() != nil {
		t.Fatalf("retried completion: %v, bucket %+v", err, again.Bucket())
	}
}
