package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

func bucketKey(name string) []byte { return storage.KeyString(storage.TagS3, "b", name) }
func ownedKey(owner, name string) []byte {
	return storage.KeyString(storage.TagS3, "ob", owner, name)
}
func ownedPrefix(owner string) []byte { return storage.KeyString(storage.TagS3, "ob", owner) }
func objectPrefix(bucket string) []byte {
	return storage.KeyString(storage.TagS3, "o", bucket)
}
func objectKey(bucket, key string) []byte { return storage.KeyString(storage.TagS3, "o", bucket, key) }

// ValidBucketName reports whether name follows the bucket naming rules: 3 to 63
// characters, dot-separated labels of lower-case letters, digits and hyphens that start
// and end with a letter or digit, and not an IPv4 address.
func ValidBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// Bucket returns the bucket record (NoSuchBucket if absent). It checks no permission.
func (s *Service) Bucket(ctx context.Context, name string) (*Bucket, error) {
	s.bucketsMu.RLock()
	defer s.bucketsMu.RUnlock()
	return s.bucketLocked(name)
}

// bucketLocked reads a bucket through the cache; bucketsMu is held (shared suffices:
// the cache has its own rule, see cacheBucket).
func (s *Service) bucketLocked(name string) (*Bucket, error) {
	if b, ok := s.loadCachedBucket(name); ok {
		return b, nil
	}
	v, err := s.db.Get(bucketKey(name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchBucket
	}
	if err != nil {
		return nil, wrapf(err, "read bucket %s", name)
	}
	b := new(Bucket)
	if err := json.Unmarshal(v, b); err != nil {
		return nil, wrapf(err, "decode bucket %s", name)
	}
	s.cacheBucket(name, b)
	return b, nil
}

func (s *Service) loadCachedBucket(name string) (*Bucket, bool) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	b, ok := s.bucketCache[name]
	return b, ok
}

func (s *Service) cacheBucket(name string, b *Bucket) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if len(s.bucketCache) >= 65536 {
		clear(s.bucketCache)
	}
	s.bucketCache[name] = b
}

func (s *Service) uncacheBucket(name string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	delete(s.bucketCache, name)
}

// CreateBucket creates the bucket with the given ACL (whose owner must be r). It
// answers created=false, nil when r already owns the bucket (nothing changes), 409
// BucketAlreadyExists when another user does, 400 InvalidBucketName and TooManyBuckets.
// Anonymous requesters are refused.
func (s *Service) CreateBucket(ctx context.Context, r Requester, name string, acl ACL) (created bool, err error) {
	if r.Anonymous {
		return false, errAccessDenied
	}
	if !ValidBucketName(name) {
		return false, errBucketName
	}
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	old, err := s.bucketLocked(name)
	switch {
	case err == nil && old.Owner.ID == r.ID:
		return false, nil
	case err == nil:
		return false, errExists
	case !IsCode(err, NoSuchBucket):
		return false, err
	}
	n, err := s.countOwned(r.ID)
	if err != nil {
		return false, err
	}
	if n >= s.cfg.MaxBuckets {
		return false, errTooMany
	}
	acl.Owner = Owner{ID: r.ID, DisplayName: r.DisplayName}
	b := &Bucket{Name: name, Owner: acl.Owner, Created: time.Now().UTC().Truncate(time.Millisecond), ACL: acl}
	v, err := json.Marshal(b)
	if err != nil {
		return false, wrapf(err, "encode bucket %s", name)
	}
	batch := s.db.NewBatch()
	batch.Put(bucketKey(name), v)
	batch.Put(ownedKey(r.ID, name), nil)
	if err := s.db.Write(batch, true); err != nil {
		return false, wrapf(err, "create bucket %s", name)
	}
	s.cacheBucket(name, b)
	return true, nil
}

func (s *Service) countOwned(owner string) (int, error) {
	it := s.db.IteratePrefix(ownedPrefix(owner))
	defer it.Release()
	n := 0
	for it.Next() {
		n++
	}
	return n, wrapf(it.Err(), "count buckets")
}

// HeadBucket checks that the bucket exists and r may list it (READ).
func (s *Service) HeadBucket(ctx context.Context, r Requester, name string) error {
	return s.bucketAccess(ctx, r, name, ActionListBucket, PermRead)
}

// bucketAccess checks that the bucket exists and r may perform action on it (perm in
// the bucket's ACL when the policy does not decide).
func (s *Service) bucketAccess(ctx context.Context, r Requester, name, action string, perm Permission) error {
	b, err := s.Bucket(ctx, name)
	if err != nil {
		return err
	}
	if !s.allowed(b, nil, r, action, "", perm) {
		return errAccessDenied
	}
	return nil
}

// DeleteBucket deletes an empty bucket. Only its owner may: others get
// AccessDenied; a bucket with objects is 409 BucketNotEmpty.
func (s *Service) DeleteBucket(ctx context.Context, r Requester, name string) error {
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	b, err := s.bucketLocked(name)
	if err != nil {
		return err
	}
	if !ownsBucket(b, r) || b.denies(r, ActionDeleteBucket, "") {
		return errAccessDenied
	}
	it := s.db.IteratePrefix(objectPrefix(name))
	empty := !it.Next()
	err = it.Err()
	it.Release()
	if err != nil {
		return wrapf(err, "delete bucket %s", name)
	}
	if !empty {
		return errNotEmpty
	}
	if busy, err := s.hasUploads(name); err != nil {
		return err
	} else if busy {
		return &Error{Code: MultipartUploadRemaining, Message: "The bucket you tried to delete has multipart uploads in progress"}
	}
	batch := s.db.NewBatch()
	batch.Delete(bucketKey(name))
	batch.Delete(ownedKey(b.Owner.ID, name))
	if err := s.db.Write(batch, true); err != nil {
		return wrapf(err, "delete bucket %s", name)
	}
	s.uncacheBucket(name)
	return nil
}

// ListBuckets lists r's buckets by name. Anonymous requesters are refused.
func (s *Service) ListBuckets(ctx context.Context, r Requester) ([]BucketInfo, error) {
	if r.Anonymous {
		return nil, errAccessDenied
	}
	it := s.db.IteratePrefix(ownedPrefix(r.ID))
	var names []string
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 3 {
			it.Release()
			return nil, fmt.Errorf("s3: list buckets: malformed key %q: %w", it.Key(), errors.Join(err, storage.ErrMalformedKey))
		}
		names = append(names, string(comps[2]))
	}
	err := it.Err()
	it.Release()
	if err != nil {
		return nil, wrapf(err, "list buckets")
	}
	out := make([]BucketInfo, 0, len(names))
	for _, n := range names {
		b, err := s.Bucket(ctx, n)
		if IsCode(err, NoSuchBucket) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, BucketInfo{Name: n, Created: b.Created})
	}
	return out, nil
}

// BucketACL returns the bucket's ACL (READ_ACP).
func (s *Service) BucketACL(ctx context.Context, r Requester, name string) (ACL, error) {
	b, err := s.Bucket(ctx, name)
	if err != nil {
		return ACL{}, err
	}
	if !s.allowed(b, nil, r, ActionGetBucketACL, "", PermReadACP) {
		return ACL{}, errAccessDenied
	}
	return b.ACL.Clone(), nil
}

// SetBucketACL replaces the bucket's ACL (WRITE_ACP). An explicit ACL's owner must be
// the bucket's owner (an empty owner id means "the bucket's owner"); a canned one is
// built for the bucket's owner.
func (s *Service) SetBucketACL(ctx context.Context, r Requester, name string, spec ACLSpec) error {
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	b, err := s.bucketLocked(name)
	if err != nil {
		return err
	}
	if !s.allowed(b, nil, r, ActionPutBucketACL, "", PermWriteACP) {
		return errAccessDenied
	}
	acl, err := spec.Build(b.Owner, b.Owner)
	if err != nil {
		return err
	}
	if acl.Owner.ID != "" && acl.Owner.ID != b.Owner.ID {
		return errAccessDenied
	}
	acl.Owner = b.Owner
	nb := *b
	nb.ACL = acl
	v, err := json.Marshal(&nb)
	if err != nil {
		return wrapf(err, "encode bucket %s", name)
	}
	if err := s.db.Put(bucketKey(name), v, true); err != nil {
		return wrapf(err, "set bucket acl %s", name)
	}
	s.cacheBucket(name, &nb)
	return nil
}

// BucketLocation returns the region of the bucket (READ).
func (s *Service) BucketLocation(ctx context.Context, r Requester, name string) (string, error) {
	if err := s.bucketAccess(ctx, r, name, ActionGetBucketLocation, PermRead); err != nil {
		return "", err
	}
	return s.cfg.Region, nil
}
