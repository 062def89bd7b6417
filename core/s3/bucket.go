package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
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
	b, _, err := s.bucket(ctx, name)
	return b, err
}

// bucket reads a bucket record and its revision through the cache.
func (s *Service) bucket(ctx context.Context, name string) (*Bucket, storage.Revision, error) {
	c, gen := s.buckets.get(name)
	if c.b != nil {
		return c.b, c.rev, nil
	}
	it, err := s.db.Read(ctx, bucketKey(name))
	if err != nil {
		return nil, storage.NoRevision, wrapf(err, "read bucket %s", name)
	}
	if !it.Rev.Exists() {
		return nil, storage.NoRevision, errNoSuchBucket
	}
	b := new(Bucket)
	if err := json.Unmarshal(it.Value, b); err != nil {
		return nil, storage.NoRevision, wrapf(err, "decode bucket %s", name)
	}
	s.buckets.fill(name, cachedBucket{b: b, rev: it.Rev}, gen)
	return b, it.Rev, nil
}

// bucketIn returns the bucket record (NoSuchBucket if absent) and makes t's commit
// conditional on it being unchanged: a commit into a bucket deleted or changed
// meanwhile conflicts. A stale cache entry only costs a conflict and a retry (the
// change that made it stale has dropped it by then).
func (s *Service) bucketIn(t *txn, name string) (*Bucket, error) {
	b, rev, err := s.bucket(t.ctx, name)
	if err != nil {
		return nil, err
	}
	if !b.Deleting.IsZero() && time.Since(b.Deleting) < deletingTTL {
		return nil, errAgain // a deletion is checking that the bucket is empty
	}
	t.b.Require(bucketKey(name), rev)
	return b, nil
}

// deletingTTL is how long a deletion's mark on a bucket record holds object commits
// back: a deletion takes it back or deletes the record within milliseconds, so an
// older mark is one a crash left behind, and is ignored.
const deletingTTL = 10 * time.Second

// bucketTxn reads the bucket record in t, from the store (not the cache): for the
// updates of the record itself.
func (s *Service) bucketTxn(t *txn, name string) (*Bucket, error) {
	v, err := t.get(bucketKey(name))
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
	return b, nil
}

// maxCachedBuckets bounds the bucket cache; past it the cache starts over.
const maxCachedBuckets = 65536

// cachedBucket is a decoded bucket record and its revision.
type cachedBucket struct {
	b   *Bucket // never changed once cached
	rev storage.Revision
}

// bucketCache keeps decoded bucket records by name. It is kept coherent by the store's
// change notifications (Service.observe), whoever wrote the record: this service,
// another over the same store, a replica. A reader that misses takes the generation
// before it reads the store and fills only if no change has been seen since, so a
// record read before a change can never outlive the change's drop.
type bucketCache struct {
	mu  sync.Mutex // guards m and gen
	m   map[string]cachedBucket
	gen uint64 // incremented by every drop
}

// get returns the cached record (zero if none) and the generation to fill with.
func (c *bucketCache) get(name string) (cachedBucket, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name], c.gen
}

// fill caches v if no drop has happened since get returned gen.
func (c *bucketCache) fill(name string, v cachedBucket, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.m) >= maxCachedBuckets {
		clear(c.m)
	}
	c.m[name] = v
}

// drop forgets the bucket and invalidates every fill in flight.
func (c *bucketCache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, name)
}

// CreateBucket creates the bucket with the given ACL (whose owner must be r). It
// answers created=false, nil when r already owns the bucket (nothing changes), 409
// BucketAlreadyExists when another user does, 400 InvalidBucketName and TooManyBuckets.
// Anonymous requesters are refused.
func (s *Service) CreateBucket(ctx context.Context, r Requester, name string, acl ACL) (created bool, err error) {
	return s.CreateBucketWith(ctx, r, name, acl, BucketOptions{})
}

// BucketOptions are the choices a bucket is created with that cannot be made later.
type BucketOptions struct {
	// ObjectLock creates the bucket with Object Lock enabled (and so versioning
	// Enabled, for good): x-amz-bucket-object-lock-enabled: true.
	ObjectLock bool
}

// CreateBucketWith is CreateBucket with options.
func (s *Service) CreateBucketWith(ctx context.Context, r Requester, name string, acl ACL, opt BucketOptions) (created bool, err error) {
	if r.Anonymous {
		return false, errAccessDenied
	}
	if !ValidBucketName(name) {
		return false, errBucketName
	}
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	acl.Owner = Owner{ID: r.ID, DisplayName: r.DisplayName}
	err = s.update(ctx, "create bucket "+name, func(t *txn) error {
		created = false
		old, err := s.bucketTxn(t, name) // absent: the commit requires it still absent
		switch {
		case err == nil && old.Owner.ID == r.ID:
			return nil
		case err == nil:
			return errExists
		case !IsCode(err, NoSuchBucket):
			return err
		}
		n, err := s.countOwned(r.ID)
		if err != nil {
			return err
		}
		if n >= s.cfg.MaxBuckets {
			return errTooMany
		}
		b := &Bucket{Name: name, Owner: acl.Owner, Created: time.Now().UTC().Truncate(time.Millisecond), ACL: acl}
		if opt.ObjectLock {
			b.Versioning, b.ObjectLock = VersioningEnabled, &ObjectLockConfig{}
		}
		if err := putBucket(t, b); err != nil {
			return err
		}
		t.b.Put(ownedKey(r.ID, name), nil)
		created = true
		return nil
	})
	return created && err == nil, err
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
//
// Emptiness cannot be a condition of a commit (it is about a range of keys), so the
// deletion goes in three steps: it marks the record (Bucket.Deleting), which changes
// its revision, so that an object commit that read the bucket before conflicts and one
// that reads it after waits (see bucketIn); it checks that the bucket is empty; then it
// deletes the record, or takes the mark back, on condition that the record is still
// the marked one.
func (s *Service) DeleteBucket(ctx context.Context, r Requester, name string) error {
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	var marked Bucket
	err := s.update(ctx, "delete bucket "+name, func(t *txn) error {
		b, err := s.bucketTxn(t, name)
		if err != nil {
			return err
		}
		if !ownsBucket(b, r) || b.denies(r, ActionDeleteBucket, "") {
			return errAccessDenied
		}
		marked = *b
		marked.Deleting = time.Now().UTC()
		return putBucket(t, &marked)
	})
	if err != nil {
		return err
	}
	// Whatever happens to the request now, the mark is taken back or the bucket goes.
	ctx = context.WithoutCancel(ctx)
	empty := s.bucketEmpty(name)
	err = s.update(ctx, "delete bucket "+name, func(t *txn) error {
		b, err := s.bucketTxn(t, name)
		if err != nil {
			return err
		}
		if !b.Deleting.Equal(marked.Deleting) {
			return errContended // another deletion took over the record
		}
		if empty != nil {
			b.Deleting = time.Time{}
			return putBucket(t, b)
		}
		t.b.Delete(bucketKey(name))
		t.b.Delete(ownedKey(b.Owner.ID, name))
		return nil
	})
	if err != nil {
		return err
	}
	return empty
}

// bucketEmpty returns nil if the bucket holds no object and no upload in progress,
// else the error DeleteBucket answers.
func (s *Service) bucketEmpty(name string) error {
	// A versioned bucket's noncurrent versions and delete markers count (AWS's rule).
	for _, p := range [][]byte{objectPrefix(name), versionsPrefix(name), headsPrefix(name)} {
		it := s.db.IteratePrefix(p)
		empty := !it.Next()
		err := it.Err()
		it.Release()
		if err != nil {
			return wrapf(err, "delete bucket %s", name)
		}
		if !empty {
			return errNotEmpty
		}
	}
	if busy, err := s.hasUploads(name); err != nil {
		return err
	} else if busy {
		return &Error{Code: MultipartUploadRemaining, Message: "The bucket you tried to delete has multipart uploads in progress"}
	}
	return nil
}

// putBucket adds the record b to t.
func putBucket(t *txn, b *Bucket) error {
	v, err := json.Marshal(b)
	if err != nil {
		return wrapf(err, "encode bucket %s", b.Name)
	}
	t.b.Put(bucketKey(b.Name), v)
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
	return s.updateBucket(ctx, "set bucket acl "+name, name, func(b *Bucket) error {
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
		b.ACL = acl
		return nil
	})
}

// errUnchanged, returned by the change function of updateBucket, leaves the record as
// it is.
var errUnchanged = errors.New("s3: unchanged")

// updateBucket rewrites the bucket record with change (which may refuse with an error,
// or return errUnchanged), read and committed conditionally (see Service.update).
// bucketsMu keeps this service's bucket changes from conflicting.
func (s *Service) updateBucket(ctx context.Context, what, name string, change func(b *Bucket) error) error {
	s.bucketsMu.Lock()
	defer s.bucketsMu.Unlock()
	return s.update(ctx, what, func(t *txn) error {
		b, err := s.bucketTxn(t, name)
		if err != nil {
			return err
		}
		switch err := change(b); {
		case errors.Is(err, errUnchanged):
			return nil
		case err != nil:
			return err
		}
		return putBucket(t, b)
	})
}

// BucketLocation returns the region of the bucket (READ).
func (s *Service) BucketLocation(ctx context.Context, r Requester, name string) (string, error) {
	if err := s.bucketAccess(ctx, r, name, ActionGetBucketLocation, PermRead); err != nil {
		return "", err
	}
	return s.cfg.Region, nil
}
