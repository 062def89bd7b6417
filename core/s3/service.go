// Package s3 is the object-storage service: users and their keys, buckets, objects
// stored as a manifest plus immutable chunks of at most 1 MiB, ACL evaluation, and the
// collector that removes the chunks of replaced, deleted and abandoned objects.
//
// Every operation takes the Requester and checks the permission the interface names
// for it, so no caller can forget a check. The HTTP side (core/s3api) authenticates,
// parses and writes; it never touches storage.
//
// Storage (all under storage.TagS3 unless noted):
//
//	"u"  key id             → user (JSON)
//	"ue" e-mail             → key id
//	"ui" canonical id       → key id
//	"b"  bucket             → bucket (JSON)
//	"ob" owner id, bucket   → ""             (a user's buckets)
//	"o"  bucket, key        → manifest (JSON)
//	"w"  chunk id           → write in progress (JSON: bucket, key, started)
//	"g"  chunk id           → chunks to collect ("")
//	"lo" bucket, time, key  → ""             (lifecycle index of objects, derived)
//	"lu" bucket, time, key, upload id → ""   (lifecycle index of uploads, derived)
//	"lv" "index"            → backfill done (lifecycle index version)
//	"sk" "master"           → id of the SSE master key (encryption.go)
//	TagChunk: chunk id, 8-byte chunk number → data
//
// With Config.Blobs (a storage.BlobStore: local files, or any store that keeps its
// contract), an object of Config.BlobMinSize bytes or more (and any object larger than
// one chunk) keeps its data in one blob named by its chunk id instead of chunk records:
// committed (durable) before the manifest switches to it, removed by the collector like
// chunks. A manifest names its blobs by id only (Manifest.Blob, Extent.Blob), never by
// where the store keeps them.
//
// An encrypted object (Manifest.SSE) keeps the same layout with sealed data (see
// encryption.go and core/s3/sse): in format 2 each part sealed bound to its part number
// (Extent.Part) and the ordered extents authenticated by Encryption.Layout.
//
// A PUT writes its chunks under a fresh chunk id, then switches the object's manifest to
// it in one synced batch that also queues the previous version's chunks for collection.
// A multi-chunk PUT first records its chunk id under "w"; at start every "w" record is
// a write a crash interrupted, and its chunks are collected. So a crash leaves either the
// old or the new object, whole, and no chunk behind.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/storage"
)

// Defaults of Config.
const (
	DefaultChunkSize     = 1 << 20
	DefaultMaxObjectSize = 5 << 30
	DefaultMaxBuckets    = 100
	DefaultUploadTTL     = 7 * 24 * time.Hour
	// DefaultBlobMinSize is Config.BlobMinSize's default: objects from 256 KiB go to
	// blob files (see docs/rationale.md, "Objects from 256 KiB are blob files").
	DefaultBlobMinSize = 256 << 10
	// MaxKeyLength is the longest object key, in bytes.
	MaxKeyLength = 1024
	// MaxMetaSize bounds the user metadata of an object (names plus values), in bytes.
	MaxMetaSize = 2048
)

// Config configures the service.
type Config struct {
	// ChunkSize is the size of a data chunk (0: DefaultChunkSize).
	ChunkSize int
	// MaxObjectSize bounds an object (0: DefaultMaxObjectSize).
	MaxObjectSize int64
	// MaxBuckets bounds the buckets of one user (0: DefaultMaxBuckets).
	MaxBuckets int
	// Region is the location buckets report.
	Region string
	// MinPartSize is the smallest part but the last of a multipart upload (0:
	// DefaultMinPartSize).
	MinPartSize int
	// UploadTTL is how long a multipart upload may stay incomplete before the
	// collector aborts it (0: DefaultUploadTTL).
	UploadTTL time.Duration
	// Blobs, if set, holds the data of objects larger than one chunk, one file per
	// version (written in ChunkSize pieces); without it every chunk is a DB record.
	// It is a storage.BlobStore: manifests name blobs by id only.
	Blobs  storage.BlobStore
	Logger *slog.Logger
	// BlobMinSize is the size from which, with Blobs, an object's data is a blob file
	// rather than DB records (0: DefaultBlobMinSize). Objects larger than one chunk are
	// blobs whatever it says.
	BlobMinSize int64
	// LifecycleInterval is how often the lifecycle worker runs (0:
	// DefaultLifecycleInterval).
	LifecycleInterval time.Duration
	// LifecycleDay is the length of a lifecycle rule's day (0: DefaultLifecycleDay);
	// tests shorten it to run rules of days in seconds.
	LifecycleDay time.Duration
	// MasterKey wraps the data keys of SSE-S3 objects; nil: SSE-S3 (and bucket
	// default encryption) is refused as not implemented.
	MasterKey *sse.MasterKey
	// Node names this node in a cluster (its records of writes in progress carry it,
	// see recoverWrites); unused standalone.
	Node string
}

// Service is the object-storage service. It is safe for concurrent use.
//
// Every change of a record (manifest, bucket, user, upload, part) is read → compute →
// conditional commit, retried on conflict (see update), so that correctness never
// rests on the service's locks: several Services may share one store (as the nodes of
// a cluster share a replicated one). The locks below only keep this service's own
// writers from conflicting with one another. The caches follow the store's change
// notifications.
type Service struct {
	db storage.Store
	// owner is db when it is a replicated store whose background work on a key is one
	// node's (storage.Owner); nil: this node does all of it.
	owner storage.Owner
	cfg   Config
	log   *slog.Logger
	// unsubscribe stops the change notifications that keep the caches coherent.
	unsubscribe func()

	// usersMu serialises this service's user creations and updates (a fast path: the
	// commits are conditional).
	usersMu sync.Mutex
	users   userCache
	// adminKey is the administrator's key id, set once by EnsureAdmin before serving.
	adminKey string

	// bucketsMu orders this service's bucket changes and object commits (a fast path:
	// the commits are conditional on the bucket record): bucket creation, deletion and
	// record changes take it exclusively, object commits shared.
	bucketsMu sync.RWMutex
	buckets   bucketCache

	// keyLocks serialise this service's manifest switches of one object key (by hash
	// stripe).
	keyLocks [256]sync.Mutex
	// uploadLocks serialise part commits, completion and abort of one multipart
	// upload (by hash stripe). Taken before a keyLocks stripe, never after.
	uploadLocks [64]sync.Mutex
	seed        maphash.Seed

	gc *collector

	// blobMu guards readers, the count of open Objects per blob id (hex), and
	// deferred, the pinned blobs the collector skipped. Opening an object pins its
	// manifest's blobs under it; the collector removes only unpinned blobs, under it,
	// and the last reader of a deferred blob wakes it. Objects without blobs never
	// take it.
	blobMu   sync.Mutex
	readers  map[string]int
	deferred map[string]bool
	// conflicts counts the conditional commits that conflicted (and were retried).
	conflicts atomic.Int64
	// blobsRemoved counts the blobs the collector has removed (incremented under
	// blobMu): a reader compares it before and after opening (see tryOpen).
	blobsRemoved atomic.Int64

	// lifecycle runs the lifecycle rules (lifecycleworker.go); lc is its state.
	lifecycle *lifecycleWorker
	lc        lifecycleState
}

// New opens the service on db: it queues the chunks of writes a crash interrupted for
// collection, subscribes to the store's changes for its caches and starts the
// collector. Close stops them.
func New(db storage.Store, cfg Config) (*Service, error) {
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = DefaultChunkSize
	}
	if cfg.MaxObjectSize <= 0 {
		cfg.MaxObjectSize = DefaultMaxObjectSize
	}
	if cfg.BlobMinSize <= 0 {
		cfg.BlobMinSize = DefaultBlobMinSize
	}
	cfg.BlobMinSize = min(cfg.BlobMinSize, int64(cfg.ChunkSize)+1)
	if cfg.MaxBuckets <= 0 {
		cfg.MaxBuckets = DefaultMaxBuckets
	}
	if cfg.MinPartSize <= 0 {
		cfg.MinPartSize = DefaultMinPartSize
	}
	if cfg.UploadTTL <= 0 {
		cfg.UploadTTL = DefaultUploadTTL
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, cfg: cfg, log: cfg.Logger, seed: maphash.MakeSeed(),
		readers: map[string]int{}, deferred: map[string]bool{}}
	s.owner, _ = db.(storage.Owner)
	s.users.init()
	s.buckets.m = map[string]cachedBucket{}
	db.RegisterDerive(storage.TagS3, deriveS3) // the lifecycle indexes (lifecycleindex.go)
	n, err := s.recoverWrites()
	switch {
	case errors.Is(err, storage.ErrNoSpace):
		// Started on a full disk: serve reads; the next start collects these writes.
		s.log.Warn("s3: the chunks of interrupted writes stay uncollected: the disk is full", "err", err)
	case err != nil:
		return nil, err
	case n > 0:
		s.log.Info("s3: collecting the chunks of interrupted writes", "writes", n)
	}
	if err := s.recordMasterKey(context.Background()); err != nil {
		return nil, err
	}
	s.gc = startCollector(s)
	s.unsubscribe = db.Subscribe(s.observe)
	s.lifecycle = startLifecycle(s)
	return s, nil
}

// Close stops the collector (work left is resumed at the next start) and the change
// notifications.
func (s *Service) Close() error {
	if s.unsubscribe != nil { // first: observe wakes the collector
		s.unsubscribe()
		s.unsubscribe = nil
	}
	if s.lifecycle != nil { // before the collector: an expiration wakes it
		s.lifecycle.close()
		s.lifecycle = nil
	}
	if s.gc != nil {
		s.gc.close()
		s.gc = nil
	}
	return nil
}

// Prefixes of the tables whose records the service caches.
var (
	bucketTable = storage.KeyString(storage.TagS3, "b")
	userTable   = storage.KeyString(storage.TagS3, "u")
	// garbageTable holds the "g" records of the collector (gc.go).
	garbageTable = storage.KeyString(storage.TagS3, "g")
)

// observe drops the cached records that a commit changed, whoever made it, and wakes
// the collector for garbage records in a cluster. It runs
// in the store's commit path, for every commit: it only compares prefixes, and decodes
// the keys of the two cached tables.
func (s *Service) observe(changes []storage.Change) {
	for _, c := range changes {
		var cache func(string)
		switch {
		case bytes.HasPrefix(c.Key, bucketTable):
			cache = s.buckets.drop
		case bytes.HasPrefix(c.Key, userTable):
			cache = s.users.drop
		case s.owner != nil && bytes.HasPrefix(c.Key, garbageTable):
			// In a cluster another node's write may have queued garbage this node
			// owns (storage.Owner): its collector looks.
			s.gc.wake()
			continue
		default:
			continue
		}
		if _, comps, err := storage.DecodeKey(c.Key); err == nil && len(comps) == 2 {
			cache(string(comps[1]))
		}
	}
}

func (s *Service) keyLock(bucket, key string) *sync.Mutex {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(bucket)
	h.WriteByte(0)
	h.WriteString(key)
	return &s.keyLocks[h.Sum64()%uint64(len(s.keyLocks))]
}

// userCache keeps decoded users by key id: every signed request looks its user up.
//
// A reader that misses the cache reads the record from the store and then fills the
// cache; an update may write and drop the entry in between. So a reader takes the
// generation before it reads the store, and fill stores its record only if no drop has
// happened since: a record read before an update can never outlive the update's drop.
type userCache struct {
	mu  sync.RWMutex // guards m and gen
	m   map[string]*User
	gen uint64 // incremented by every drop
}

func (c *userCache) init() { c.m = map[string]*User{} }

// get returns the cached user (nil if none) and the current generation, which a
// caller that misses passes to fill.
func (c *userCache) get(keyID string) (*User, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[keyID], c.gen
}

// fill caches u if no drop has happened since get returned gen.
func (c *userCache) fill(u *User, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.m) >= 4096 {
		clear(c.m)
	}
	c.m[u.KeyID] = u
}

// drop forgets the user with keyID and invalidates every fill in flight.
func (c *userCache) drop(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, keyID)
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("s3: "+format+": %w", append(args, err)...)
}
