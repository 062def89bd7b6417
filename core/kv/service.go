package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/vclock"
)

// Config configures a Service. Zero values take the documented defaults.
type Config struct {
	// NodeID is this node's actor id in clocks. Empty: read from the data directory, or
	// created there on first start, so that it survives restarts.
	NodeID string
	// NodeName is the node's name as /stats and bucket-type props show it
	// (default "cairn@127.0.0.1").
	NodeName string
	// Dialect is "store" or "riak": it names the stock chash_keyfun and linkfun modules in
	// default bucket properties (default "store").
	Dialect string
	// ReapDelay is how long a tombstone stays visible after a delete (default 3s).
	ReapDelay time.Duration
	// MaxValueSize bounds a stored value in bytes (default 50 MiB).
	MaxValueSize int64
	// ObjectCacheSize is the byte budget of the in-memory cache of object records in front
	// of storage (0: DefaultObjectCacheSize; negative: no cache).
	ObjectCacheSize int64
	// Logger receives background errors (default slog.Default()).
	Logger *slog.Logger
	// Observer, if set, is told about every get, put and delete.
	Observer Observer
	// Now is the clock (default time.Now); tests replace it.
	Now func() time.Time
	// Hooks resolves the extension functions that bucket properties name. Nil: hooks
	// are not run and hook properties are only checked for shape.
	Hooks *hooks.Registry
	// PostcommitWorkers and PostcommitQueue size the postcommit pool (defaults
	// DefaultPostcommitWorkers and DefaultPostcommitQueue).
	PostcommitWorkers, PostcommitQueue int
	// MaxMetaEntries bounds the user metadata entries of one value (default
	// DefaultMaxMetaEntries); MaxHeaderBytes bounds the bytes of its content type,
	// charset, encoding, user metadata, index entries and links (default
	// DefaultMaxHeaderBytes).
	MaxMetaEntries int
	MaxHeaderBytes int64
	// ReadOnly is for a store opened read-only (cairn check): the service writes
	// nothing, so the tombstone reaper does not run and a node id missing from the store
	// is made up for this run instead of stored.
	ReadOnly bool
}

// Defaults of the per-value header limits (Config).
const (
	DefaultMaxMetaEntries = 1000
	DefaultMaxHeaderBytes = 64 << 10
)

// Observer receives per-operation measurements, e.g. for /stats.
type Observer interface {
	RecordGet(d time.Duration, size, siblings int)
	RecordPut(d time.Duration, size int)
	RecordDelete(d time.Duration)
}

// Service is the key-value service. It is safe for concurrent use; Close stops its
// background reaper.
type Service struct {
	db storage.Store
	// fresh is db when it is a replicated store with a lagging local replica.
	fresh storage.Freshener
	// owner is db when it is a replicated store whose background work on a key is one
	// node's (storage.Owner); nil: this node does all of it.
	owner storage.Owner
	// reapFrom is where ReapDue's next scan starts (nil: the queue's start); reapMu
	// guards it.
	reapMu   sync.Mutex
	reapFrom []byte
	cfg      Config
	nodeID   string
	now      func() time.Time
	log      *slog.Logger

	// locks serialise this service's read-modify-writes of the keys hashing to each
	// stripe: a fast path that spares them conflicts with each other. Correctness does
	// not rest on them: every write commits on the revision it read (see write).
	locks [lockStripes]sync.Mutex
	cache *objectCache // nil when disabled; kept coherent by the store's notifications
	seed  maphash.Seed
	// unsubscribe cancels the subscription to the store's changes (applyChanges).
	unsubscribe func()

	propsMu    sync.RWMutex // guards propsCache and propsGen
	propsCache map[propsKey]*core.BucketProps
	// propsGen counts invalidations: a read of stored properties that began before the
	// latest one must not fill the cache, or it would bring back the old values.
	propsGen uint64
	// propsWriteMu serialises this service's read-merge-writes of bucket and type
	// property records (a fast path: they commit on the revision they read).
	propsWriteMu sync.Mutex

	post *postcommitPool
	// postMu guards postClosed: queueing holds it for reading so that Close does not
	// close the queue under a sender.
	postMu     sync.RWMutex
	postClosed bool

	expiry       expiryStats  // what the expiry reaper removed (ReapExpired)
	expiryCursor expiryCursor // where the expiry reaper's next scan starts

	stop chan struct{}
	done chan struct{}
}

const lockStripes = 4096

// DefaultObjectCacheSize is the object cache's default byte budget.
const DefaultObjectCacheSize = 128 << 20

// propsKey names a bucket in the properties cache.
type propsKey struct{ typ, bucket string }

// New returns a Service over db and starts its tombstone reaper. It registers the
// derived writes of object records (postings and reap entries, see derive.go) with db
// and subscribes to db's changes to keep its caches coherent; several services may
// share one store (they must then have the same ReapDelay).
func New(db storage.Store, cfg Config) (*Service, error) {
	if cfg.NodeName == "" {
		cfg.NodeName = "cairn@127.0.0.1"
	}
	if cfg.Dialect == "" {
		cfg.Dialect = "store"
	}
	if cfg.ReapDelay <= 0 {
		cfg.ReapDelay = 3 * time.Second
	}
	if cfg.MaxValueSize <= 0 {
		cfg.MaxValueSize = 50 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxMetaEntries <= 0 {
		cfg.MaxMetaEntries = DefaultMaxMetaEntries
	}
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if cfg.ObjectCacheSize == 0 {
		cfg.ObjectCacheSize = DefaultObjectCacheSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	fresh, _ := db.(storage.Freshener)
	owner, _ := db.(storage.Owner)
	s := &Service{
		db: db, fresh: fresh, owner: owner, cfg: cfg, now: cfg.Now, log: cfg.Logger,
		seed:       maphash.MakeSeed(),
		cache:      newObjectCache(cfg.ObjectCacheSize),
		propsCache: map[propsKey]*core.BucketProps{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	db.RegisterDerive(storage.TagObject, objectDeriver{reapDelay: cfg.ReapDelay}.derive)
	s.unsubscribe = db.Subscribe(s.applyChanges)
	id, err := s.loadNodeID(cfg.NodeID)
	if err != nil {
		s.unsubscribe()
		return nil, err
	}
	s.nodeID = id
	s.startPostcommit()
	if cfg.ReadOnly {
		close(s.done) // no reaper to wait for
	} else {
		go s.reapLoop()
	}
	return s, nil
}

// NodeID returns this node's actor id.
func (s *Service) NodeID() string { return s.nodeID }

// MaxValueSize returns the largest value the service stores.
func (s *Service) MaxValueSize() int64 { return s.cfg.MaxValueSize }

// Close stops the reaper, lets the postcommit workers finish every queued hook, and
// waits for both. It does not close the storage. Shutdown bounds the wait.
func (s *Service) Close() error { return s.Shutdown(context.Background()) }

// Shutdown stops the reaper and lets the postcommit workers run the queued hooks until
// ctx ends; then the running hooks are cancelled and the hooks still queued are dropped,
// counted in PostcommitDropped and logged. It returns within ctx's deadline plus a
// second's grace for hooks to honour their cancellation. It does not close the storage.
func (s *Service) Shutdown(ctx context.Context) error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.unsubscribe()
	return s.stopPostcommit(ctx)
}

// applyChanges keeps the caches coherent with what the store committed, by this service
// or any other writer: object changes are written through to the object cache, and a
// change of bucket or type properties invalidates the properties cache. It runs in the
// store's commit path, before the commit is acknowledged.
func (s *Service) applyChanges(changes []storage.Change) {
	props := false
	for _, c := range changes {
		if len(c.Key) == 0 {
			continue
		}
		switch c.Key[0] {
		case storage.TagObject:
			if c.Value == nil {
				s.cache.markAbsent(c.Key, c.Item(nil))
				continue
			}
			if !s.cache.fits(c.Key, len(c.Value)) {
				s.cache.del(c.Key)
				continue
			}
			if c.Owned { // this service's own writes (writeOnce hands its batch over)
				s.cache.put(c.Key, c.Item(c.Value))
				continue
			}
			buf := make([]byte, len(c.Key)+len(c.Value)) // one allocation for both
			k, v := buf[:len(c.Key):len(c.Key)], buf[len(c.Key):]
			copy(k, c.Key)
			copy(v, c.Value)
			s.cache.put(k, c.Item(v)) // with the stamp that settles a write over it (storage.Batch.RequireItem)
		case storage.TagProps, storage.TagType:
			props = true
		}
	}
	if props {
		s.invalidateProps()
	}
}

var nodeIDKey = storage.KeyString(storage.TagMeta, "node_id")

// loadNodeID returns given, or the node id stored in the store, creating it there on
// first start: the create is conditional on the id's absence, so that services starting
// together on one store agree on the id the first of them stored.
func (s *Service) loadNodeID(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	ctx := context.Background()
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		it, err := s.db.Read(ctx, nodeIDKey)
		if err != nil {
			return "", fmt.Errorf("kv: read node id: %w", err)
		}
		if it.Value != nil {
			return string(it.Value), nil
		}
		id := "n" + core.RandomBase62(11)
		if s.cfg.ReadOnly {
			return id, nil
		}
		var b storage.Batch
		b.Require(nodeIDKey, storage.NoRevision)
		b.Put(nodeIDKey, []byte(id))
		err = s.db.Commit(ctx, &b, true)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, storage.ErrConflict) {
			return "", fmt.Errorf("kv: store node id: %w", err)
		}
	}
	return "", fmt.Errorf("kv: store node id: %w", storage.ErrConflict)
}

func objectKey(typ, bucket, key string) []byte {
	return storage.KeyString(storage.TagObject, typ, bucket, key)
}

func (s *Service) lock(typ, bucket, key string) *sync.Mutex {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(typ)
	h.WriteByte(0)
	h.WriteString(bucket)
	h.WriteByte(0)
	h.WriteString(key)
	return &s.locks[h.Sum64()%lockStripes]
}

// readForWrite returns the stored record (nil when there is none) and the item it
// decoded (its bytes and revision), from the object cache unless fresh. A write
// commits on that revision, so a stale cache entry costs a conflict and a fresh retry,
// never a lost update.
func (s *Service) readForWrite(ctx context.Context, k []byte, fresh bool) (*record, storage.Item, error) {
	it, ok := storage.Item{}, false
	if !fresh {
		it, ok = s.cache.get(k)
	}
	if !ok {
		var err error
		if it, err = s.db.Read(ctx, k); err != nil {
			return nil, it, err
		}
	}
	if it.Value == nil {
		return nil, it, nil
	}
	r, err := decodeRecord(it.Value)
	return r, it, err
}

// readRecordForGet reads a record for a fetch (nil when there is none): a hit is served
// from the object cache. A miss reads storage and, with fill, caches what it read,
// unless a commit reached the cache meanwhile (objectCache.fill): a record older than
// one the store has notified is never cached. A filling miss holds the key's stripe
// lock, so that this service's fills of a key land in the order of their reads: without
// it, a read that saw a commit not yet notified could fill, and a slower read of the
// record before it overwrite that fill. The lock orders this service's cache only;
// coherence with every writer of the store comes from its notifications.
func (s *Service) readRecordForGet(ctx context.Context, typ, bucket, key string, k []byte, fill bool) (*record, error) {
	if it, ok := s.cache.get(k); ok {
		return cachedRecord(it)
	}
	if s.cache == nil || !fill {
		v, err := s.db.Get(k) // no revision needed: nothing is cached
		if errors.Is(err, storage.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return decodeRecord(v)
	}
	mu := s.lock(typ, bucket, key)
	mu.Lock()
	defer mu.Unlock()
	if it, ok := s.cache.get(k); ok {
		return cachedRecord(it)
	}
	gen := s.cache.gen(k)
	it, err := s.db.Read(ctx, k)
	if it.Value == nil || err != nil {
		return nil, err
	}
	s.cache.fill(k, it, gen)
	return decodeRecord(it.Value)
}

// cachedRecord decodes a cached item: nil for an entry that records the key's absence
// (objectCache.markAbsent).
func cachedRecord(it storage.Item) (*record, error) {
	if it.Value == nil {
		return nil, nil
	}
	return decodeRecord(it.Value)
}

// CacheBytes returns the size of the object cache.
func (s *Service) CacheBytes() int64 { return s.cache.bytes() }

// expired reports whether r reads as absent: its TTL ran out, or it is a tombstone
// whose visibility window has passed.
func (s *Service) expired(r *record, now time.Time) bool {
	return expiredAt(r.expiry, now) || r.allDeleted() && now.Sub(r.lastModified()) >= s.cfg.ReapDelay
}

// checkQuorum returns an error when q asks for more replicas than the bucket has.
func checkQuorum(p *core.BucketProps, qs ...core.Quorum) error {
	for _, q := range qs {
		if q.Word == "" && q.N > p.NVal {
			return errQuorumTooLarge(p.NVal)
		}
	}
	return nil
}

// GetOptions are the read parameters of a fetch. They are validated against the bucket
// (a value above n_val is refused); on a single node every replica is local, so a valid
// value is always satisfied.
type GetOptions struct {
	R, PR core.Quorum
	// NoCacheFill makes a read that misses the object cache leave the cache as it is:
	// bulk readers (MapReduce jobs over a whole bucket) use cached records but do not
	// push the hot set out with records read once.
	NoCacheFill bool
}

// Get returns the object stored under typ/bucket/key. A deleted object whose tombstone
// is still visible is returned with every sibling marked Deleted (callers answer "not
// found" but show its clock). A missing or reaped key gives a not-found *core.Error.
func (s *Service) Get(ctx context.Context, typ, bucket, key string, opts GetOptions) (*core.Object, error) {
	start := time.Now()
	p, err := s.Props(ctx, typ, bucket)
	if err != nil {
		return nil, err
	}
	if err := checkQuorum(p, opts.R, opts.PR); err != nil {
		return nil, err
	}
	if err := s.freshen(ctx, p, opts, objectKey(typ, bucket, key)); err != nil {
		return nil, fmt.Errorf("kv: get %s/%s: %w", bucket, key, err)
	}
	r, err := s.readRecordForGet(ctx, typ, bucket, key, objectKey(typ, bucket, key), !opts.NoCacheFill)
	if err != nil {
		return nil, fmt.Errorf("kv: get %s/%s: %w", bucket, key, err)
	}
	if r == nil || s.expired(r, s.now()) {
		return nil, errNotFound()
	}
	o := r.object(typ, bucket, key)
	if s.cfg.Observer != nil {
		size := 0
		for i := range o.Siblings {
			size += len(o.Siblings[i].Value)
		}
		s.cfg.Observer.RecordGet(time.Since(start), size, len(o.Siblings))
	}
	return o, nil
}

// freshen makes a read that asks for more than one replica (r > 1) or for primaries
// (pr > 0) wait, on a replicated store (storage.Freshener), until the local replica has
// applied every write of k acknowledged before: read-your-writes across nodes. On a
// single node every replica is local and nothing waits.
func (s *Service) freshen(ctx context.Context, p *core.BucketProps, opts GetOptions, k []byte) error {
	f := s.fresh
	if f == nil {
		return nil
	}
	r, pr := opts.R, opts.PR
	if r == (core.Quorum{}) {
		r = p.R
	}
	if pr == (core.Quorum{}) {
		pr = p.PR
	}
	if r.Resolve(p.NVal, p.R) <= 1 && pr.Resolve(p.NVal, p.PR) <= 0 {
		return nil
	}
	return errUnsynced(f.Sync(ctx, k))
}

// PutOptions are the write parameters of a store.
type PutOptions struct {
	W, DW, PW core.Quorum
	// Precondition, if set, is called under the key's lock with the current object (nil
	// when the key does not exist; a tombstoned object has Deleted siblings). An error it
	// returns aborts the write and is returned as is.
	Precondition func(current *core.Object) error
	// TTL, if set, is the object's time to live in seconds (0: it never expires; see
	// ParseTTL for the bounds); nil gives it the bucket's ttl property.
	TTL *int64
}

// PutRequest is one store: the object's place, the causal context the client read (the
// encoded clock, nil for none) and the new value.
type PutRequest struct {
	Type, Bucket, Key string
	Context           []byte
	Value             core.Sibling
	Options           PutOptions
}

// Put stores a value and returns the resulting object (which has siblings when the
// write was concurrent with stored values and the bucket allows them).
func (s *Service) Put(ctx context.Context, req *PutRequest) (*core.Object, error) {
	start := time.Now()
	p, err := s.Props(ctx, req.Type, req.Bucket)
	if err != nil {
		return nil, err
	}
	if p.Datatype != "" {
		return nil, errPlainInDatatypeBucket(req.Type)
	}
	o := req.Options
	if err := checkQuorum(p, o.W, o.DW, o.PW); err != nil {
		return nil, err
	}
	if n := int64(len(req.Value.Value)); n > s.cfg.MaxValueSize {
		return nil, errTooLarge(n, s.cfg.MaxValueSize)
	}
	if err := s.CheckHeaders(&req.Value); err != nil {
		return nil, err
	}
	ctxClock, err := decodeReceivedClock(req.Context)
	if err != nil {
		return nil, err
	}
	v := req.Value
	v.Deleted = false
	v.Indexes = index.Normalize(append([]core.IndexEntry(nil), v.Indexes...))
	for _, e := range v.Indexes {
		if _, err := index.EncodeTerm(e.Field, e.Value); err != nil {
			return nil, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf("Could not parse field '%s', value '%s'.\n", e.Field, e.Value)}
		}
	}
	if v, err = s.runPrecommit(ctx, p, hooks.OpPut, req.Type, req.Bucket, req.Key, req.Context, v); err != nil {
		return nil, err
	}
	sync := o.DW.Resolve(p.NVal, p.DW) >= 1
	ttl, err := writeTTL(p, o.TTL)
	if err != nil {
		return nil, err
	}
	obj, err := s.writeTTL(ctx, p, req.Type, req.Bucket, req.Key, ctxClock, v, sync, o.Precondition, ttl)
	if err != nil {
		return nil, err
	}
	s.queuePostcommit(p, hooks.OpPut, obj)
	if s.cfg.Observer != nil {
		s.cfg.Observer.RecordPut(time.Since(start), len(req.Value.Value))
	}
	return obj, nil
}

// writeTTL returns the time to live of an object written with the TTL opt asks for
// (PutOptions.TTL): the bucket's ttl when it asks for none; EINVALID out of bounds.
func writeTTL(p *core.BucketProps, opt *int64) (int64, error) {
	if opt == nil {
		return int64(p.TTL), nil
	}
	if ttl := *opt; ttl < 0 || ttl > MaxTTLSeconds {
		return 0, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf("Invalid TTL %d: must be whole seconds from 0 to %d.\n", ttl, MaxTTLSeconds)}
	}
	return *opt, nil
}

// decodeReceivedClock decodes the causal context a client sent and checks it against the
// limits on received clocks (vclock.CheckReceived); a bad one is EINVALID.
func decodeReceivedClock(b []byte) (vclock.VClock, error) {
	c, err := vclock.Decode(b)
	if err == nil {
		err = c.CheckReceived()
	}
	if err != nil {
		return nil, errBadClock(err)
	}
	return c, nil
}

// CheckHeaders refuses (EINVALID) a value whose headers are above the service's limits:
// more than MaxMetaEntries user metadata entries, or more than MaxHeaderBytes in its
// content type, charset, encoding, user metadata, index entries and links.
func (s *Service) CheckHeaders(v *core.Sibling) error {
	if n := len(v.Meta); n > s.cfg.MaxMetaEntries {
		return errTooManyMeta(n, s.cfg.MaxMetaEntries)
	}
	if n := headerBytes(v); n > s.cfg.MaxHeaderBytes {
		return errHeadersTooLarge(n, s.cfg.MaxHeaderBytes)
	}
	return nil
}

// headerBytes is the size of a value's headers: its content type, charset and encoding,
// and the names and values of its user metadata, index entries and links.
func headerBytes(v *core.Sibling) int64 {
	n := len(v.ContentType) + len(v.Charset) + len(v.Encoding)
	for _, m := range v.Meta {
		n += len(m.Name) + len(m.Value)
	}
	for _, e := range v.Indexes {
		n += len(e.Field) + len(e.Value)
	}
	for _, l := range v.Links {
		n += len(l.Bucket) + len(l.Key) + len(l.Tag)
	}
	return int64(n)
}

// objectSize is what the size guards measure: the values and headers of every sibling
// of r (0 for none). Clocks, vtags and timestamps are left out.
func objectSize(r *record) int64 {
	if r == nil {
		return 0
	}
	var n int64
	for i := range r.siblings {
		n += int64(len(r.siblings[i].Value)) + headerBytes(&r.siblings[i].Sibling)
	}
	return n
}

// checkGuards applies the bucket's object guards to the record a write would store over
// cur (nil when the key is absent): more siblings than max_siblings, or more bytes than
// max_object_size plus one value's worth of headers (MaxHeaderBytes, so that a lone
// value the per-value limits admit always fits), refuse the write, unless it leaves no
// more siblings (or bytes) than the key already has, so that a write resolving siblings
// is always possible. Above the warn_ levels it logs a warning, as Riak does.
func (s *Service) checkGuards(p *core.BucketProps, bucket, key string, cur, next *record) error {
	n, size := len(next.siblings), objectSize(next)
	curN, curSize := 0, objectSize(cur)
	if cur != nil {
		curN = len(cur.siblings)
	}
	if n > p.MaxSiblings && n > curN {
		return errTooManySiblings(n, p.MaxSiblings)
	}
	if size > p.MaxObjectSize+s.cfg.MaxHeaderBytes && size > curSize {
		return errObjectTooLarge(size, p.MaxObjectSize, s.cfg.MaxHeaderBytes)
	}
	if n > p.WarnSiblings {
		s.log.Warn("kv: too many siblings", "bucket", bucket, "key", key, "siblings", n, "warn_siblings", p.WarnSiblings)
	}
	if size > p.WarnObjectSize {
		s.log.Warn("kv: writing a very large object", "bucket", bucket, "key", key, "bytes", size, "warn_object_size", p.WarnObjectSize)
	}
	return nil
}

// DeleteOptions are the parameters of a delete.
type DeleteOptions struct {
	RW, R, PR, W, DW, PW core.Quorum
	// Context is the encoded clock the client read; nil means "supersede everything
	// stored" (the current clock is used).
	Context      []byte
	Precondition func(current *core.Object) error
}

// Delete writes a tombstone for typ/bucket/key. It returns a not-found *core.Error when
// the key does not exist; when the key is already deleted it also returns the
// tombstoned object so callers can show its clock.
func (s *Service) Delete(ctx context.Context, typ, bucket, key string, opts DeleteOptions) (*core.Object, error) {
	start := time.Now()
	p, err := s.Props(ctx, typ, bucket)
	if err != nil {
		return nil, err
	}
	if err := checkQuorum(p, opts.RW, opts.R, opts.PR, opts.W, opts.DW, opts.PW); err != nil {
		return nil, err
	}
	var ctxClock vclock.VClock
	if opts.Context != nil {
		if ctxClock, err = decodeReceivedClock(opts.Context); err != nil {
			return nil, err
		}
	}
	tomb := core.Sibling{Deleted: true}
	if _, err := s.runPrecommit(ctx, p, hooks.OpDelete, typ, bucket, key, opts.Context, tomb); err != nil {
		return nil, err
	}
	sync := opts.DW.Resolve(p.NVal, p.DW) >= 1
	obj, err := s.write(ctx, p, typ, bucket, key, ctxClock, tomb, sync, opts.Precondition, opts.Context == nil, nil)
	if err == nil {
		s.queuePostcommit(p, hooks.OpDelete, obj)
		if s.cfg.Observer != nil {
			s.cfg.Observer.RecordDelete(time.Since(start))
		}
	}
	return obj, err
}

// updateFunc computes a write's value from the current object (nil when the key is
// absent or its tombstone has expired) under the key's lock. keep lists the current
// siblings (indexes into current.Siblings) that stay next to the new value; the write
// supersedes the others (it is made with the stored clock as its context). An error
// aborts the write and is returned as is.
type updateFunc func(current *core.Object) (v core.Sibling, keep []int, err error)

// maxWriteAttempts bounds the attempts of one write that keeps conflicting with other
// writers of the store (errContended).
const maxWriteAttempts = 32

// writeOp is one write's parameters (see write).
type writeOp struct {
	p                *core.BucketProps
	typ, bucket, key string
	k                []byte
	ctxClock         vclock.VClock
	v                core.Sibling
	sync             bool
	pre              func(*core.Object) error
	useStored        bool
	update           updateFunc
	// ttl is the written object's time to live in seconds (0: none; ignored by a delete).
	ttl int64
}

// write is the read-modify-write shared by Put, Delete and CounterAdd. For a delete
// (v.Deleted) the key must hold a live object; useStored makes the stored clock the
// context. update, when set, replaces v by the value it computes from what is stored.
//
// It reads the stored record with its revision, resolves clocks and siblings, and
// commits the new record on that revision (the store derives its index postings and
// reap entry, see derive.go). When another writer of the store committed the key in
// between, the commit is a conflict and the write starts again from a fresh read, up to
// maxWriteAttempts times while ctx lasts. pre and update run again on each attempt, on
// what is then stored: they are pure functions of it. The precommit chain is not part
// of write: it ran once before, on the client's value, which a retry does not change,
// so a hook's side effects are never repeated by a retry. The key's stripe lock makes
// this service's own writers of a key take turns, so they do not conflict with each
// other; it is not needed for correctness.
func (s *Service) write(ctx context.Context, p *core.BucketProps, typ, bucket, key string, ctxClock vclock.VClock,
	v core.Sibling, sync bool, pre func(*core.Object) error, useStored bool, update updateFunc) (*core.Object, error) {
	op := writeOp{p: p, typ: typ, bucket: bucket, key: key, k: objectKey(typ, bucket, key), ctxClock: ctxClock,
		v: v, sync: sync, pre: pre, useStored: useStored, update: update, ttl: int64(p.TTL)}
	return s.runWrite(ctx, op)
}

// writeTTL is write for a PUT whose object lives ttl seconds (0: forever).
func (s *Service) writeTTL(ctx context.Context, p *core.BucketProps, typ, bucket, key string, ctxClock vclock.VClock,
	v core.Sibling, sync bool, pre func(*core.Object) error, ttl int64) (*core.Object, error) {
	op := writeOp{p: p, typ: typ, bucket: bucket, key: key, k: objectKey(typ, bucket, key), ctxClock: ctxClock,
		v: v, sync: sync, pre: pre, ttl: ttl}
	return s.runWrite(ctx, op)
}

// runWrite runs op under its key's lock, retrying on conflicts (see write).
func (s *Service) runWrite(ctx context.Context, op writeOp) (*core.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, errTimeout()
	}
	typ, bucket, key := op.typ, op.bucket, op.key
	mu := s.lock(typ, bucket, key)
	mu.Lock()
	defer mu.Unlock()
	// A precondition (If-Match, If-None-Match...) judges the stored object: on a
	// replicated store, first bring the local replica up to date with the key, so that
	// a condition naming a version read on another node is not refused by a stale one.
	synced := false
	if op.pre != nil && s.fresh != nil {
		if err := errUnsynced(s.fresh.Sync(ctx, op.k)); err != nil {
			return nil, fmt.Errorf("kv: put %s/%s: %w", bucket, key, err)
		}
		synced = true
	}
	for attempt := 0; ; attempt++ {
		obj, err := s.writeOnce(ctx, op, synced || attempt > 0)
		if !errors.Is(err, storage.ErrConflict) {
			return obj, err
		}
		if attempt+1 >= maxWriteAttempts {
			return nil, errContended(bucket, key)
		}
		if err := backoff(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// backoff waits before the retry of a write that conflicted attempt+1 times: not at all
// the first time, then a random time up to 50 µs doubled per attempt (at most 12.8 ms),
// so that writers contending for one key spread out. It returns errTimeout when ctx
// ends first.
func backoff(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	d := time.Duration(rand.Int64N(int64(50*time.Microsecond) << min(attempt, 8)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errTimeout()
	case <-t.C:
		return nil
	}
}

// writeOnce is one attempt of write. fresh reads the stored record from storage, not
// the object cache (a retry). A conflict is returned as an error wrapping
// storage.ErrConflict.
func (s *Service) writeOnce(ctx context.Context, op writeOp, fresh bool) (*core.Object, error) {
	typ, bucket, key, v := op.typ, op.bucket, op.key, op.v
	cur, read, err := s.readForWrite(ctx, op.k, fresh)
	var stored vclock.VClock
	if err == nil && cur != nil {
		stored, err = cur.clockValue()
	}
	if err != nil {
		return nil, fmt.Errorf("kv: put %s/%s: %w", bucket, key, err)
	}
	now := s.now()
	if cur != nil && s.expired(cur, now) {
		cur, stored = nil, nil // a reaped-in-all-but-name tombstone: the key is gone
	}
	// The stored object is built only for those who look at it (a delete's answer, the
	// precondition, an update): a plain PUT does not pay for it.
	var curObj *core.Object
	if cur != nil && (v.Deleted || op.pre != nil || op.update != nil) {
		curObj = cur.object(typ, bucket, key)
	}
	if v.Deleted {
		if cur == nil {
			return nil, errNotFound()
		}
		if cur.allDeleted() {
			return curObj, errNotFound()
		}
	}
	if op.pre != nil {
		if err := op.pre(curObj); err != nil {
			return nil, err
		}
	}
	ctxClock, useStored := op.ctxClock, op.useStored
	var kept []storedSibling
	if op.update != nil {
		nv, keep, err := op.update(curObj)
		if err != nil {
			return nil, err
		}
		v, useStored = nv, true // the value was computed from everything stored
		for _, i := range keep {
			kept = append(kept, cur.siblings[i])
		}
	}
	if useStored && cur != nil {
		ctxClock = stored
	}
	v.VTag = core.NewVTag()
	v.LastModified = now.UTC()
	next := resolve(cur, stored, ctxClock, v, op.p, s.nodeID, now, s.pruneOptions(op.p))
	if len(kept) > 0 {
		next.siblings = append(kept, next.siblings...)
	}
	if !v.Deleted {
		next.expiry = expiryOf(op.ttl, now)
	}
	if err := s.checkGuards(op.p, bucket, key, cur, next); err != nil {
		return nil, err
	}
	var b storage.Batch
	b.RequireItem(op.k, read) // the store derives the old postings from what was read
	putRecord(&b, op.k, next)
	b.HandOver() // b is not used again: the object cache keeps the committed bytes as they are
	if err := s.db.Commit(ctx, &b, op.sync); err != nil {
		switch {
		case errors.Is(err, storage.ErrConflict):
			return nil, err
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return nil, errTimeout()
		}
		return nil, fmt.Errorf("kv: put %s/%s: %w", bucket, key, err)
	}
	return next.object(typ, bucket, key), nil
}

// putRecord records storing next under k in b. The record is encoded in a recycled
// buffer, since b.Put copies it: a PUT's only garbage of the record's size is then the
// batch's copy. next.rawClock, which pointed into the buffer, gets a copy of its own.
func putRecord(b *storage.Batch, k []byte, next *record) {
	buf := encodeBufs.Get().(*[]byte)
	enc := next.appendEncode((*buf)[:0])
	b.Put(k, enc)
	next.rawClock = bytes.Clone(next.rawClock)
	if cap(enc) <= maxPooledEncode {
		*buf = enc[:0]
		encodeBufs.Put(buf)
	}
}

// encodeBufs recycles the buffers of putRecord.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledEncode is the largest buffer kept in encodeBufs: larger records (large
// values) are rare enough to allocate.
const maxPooledEncode = 64 << 10

// resolve computes the record after writing value v with causal context ctxClock over
// the stored record cur (nil when absent) whose decoded clock is stored:
//
//   - The new clock is the merge of the stored clock and the context, with this node's
//     counter incremented; v gets that event as its dot. It is pruned by the bucket's
//     rules, then limited to vclock.MaxStoredEntries entries (never dropping this
//     node's), so that it always decodes.
//   - last_write_wins: v replaces every stored value.
//   - Otherwise a stored value survives when the context has not seen it: with
//     dvv_enabled, when its dot is not covered by the context; without, when the context
//     does not descend the stored clock (then every stored value survives).
//   - allow_mult=false collapses the result to v alone: a plain write always wins, and
//     the merged clock still records everything it superseded.
//
// A write that carries no clock therefore never destroys a value it has not seen when
// allow_mult is true.
func resolve(cur *record, stored, ctxClock vclock.VClock, v core.Sibling, p *core.BucketProps, node string, now time.Time, prune vclock.PruneOptions) *record {
	merged := vclock.Merge(stored, ctxClock)
	clock, dot := merged.Increment(node, now)
	clock = clock.Prune(now, prune).Limit(vclock.MaxStoredEntries, node)
	next := &record{clock: clock}
	if cur != nil && p.AllowMult && !p.LastWriteWins {
		descends := ctxClock.Descends(stored)
		for _, s := range cur.siblings {
			var seen bool
			if p.DVVEnabled {
				seen = ctxClock.Covers(s.dot)
			} else {
				seen = descends
			}
			if !seen {
				next.siblings = append(next.siblings, s)
			}
		}
	}
	next.siblings = append(next.siblings, storedSibling{Sibling: v, dot: dot})
	return next
}

// Props returns the effective properties of a bucket: the type's defaults, then the
// type's settings, then the bucket's own. An unknown bucket type is a not-found error.
func (s *Service) Props(ctx context.Context, typ, bucket string) (*core.BucketProps, error) {
	ck := propsKey{typ, bucket}
	s.propsMu.RLock()
	p := s.propsCache[ck]
	gen := s.propsGen
	s.propsMu.RUnlock()
	if p != nil {
		return p, nil
	}
	raw, err := s.effectiveRaw(typ, bucket)
	if err != nil {
		return nil, err
	}
	p = s.typedProps(bucket, raw)
	s.propsMu.Lock()
	if s.propsGen == gen {
		if len(s.propsCache) >= 100_000 {
			clear(s.propsCache)
		}
		s.propsCache[ck] = p
	}
	s.propsMu.Unlock()
	return p, nil
}

func (s *Service) effectiveRaw(typ, bucket string) (map[string]json.RawMessage, error) {
	raw, err := s.typeRaw(typ)
	if err != nil {
		return nil, err
	}
	bp, err := s.readJSONMap(storage.KeyString(storage.TagProps, typ, bucket))
	if err != nil {
		return nil, err
	}
	for k, v := range bp {
		raw[k] = v
	}
	return raw, nil
}

// typeRaw returns a bucket type's effective properties: its defaults, then its settings.
// An unknown type is a not-found error.
func (s *Service) typeRaw(typ string) (map[string]json.RawMessage, error) {
	tp, err := s.readJSONMap(storage.KeyString(storage.TagType, typ))
	if err != nil {
		return nil, err
	}
	if tp == nil && typ != core.DefaultType {
		return nil, errUnknownType(typ)
	}
	raw := s.propsDefaults(typ)
	for k, v := range tp {
		raw[k] = v
	}
	return raw, nil
}

// readJSONMap reads a stored JSON object; nil, nil when the key is absent.
func (s *Service) readJSONMap(k []byte) (map[string]json.RawMessage, error) {
	m, _, err := s.readJSONRev(context.Background(), k)
	return m, err
}

// readJSONRev reads a stored JSON object and its revision; nil when the key is absent.
func (s *Service) readJSONRev(ctx context.Context, k []byte) (map[string]json.RawMessage, storage.Revision, error) {
	it, err := s.db.Read(ctx, k)
	if err != nil {
		return nil, it.Rev, fmt.Errorf("kv: read properties: %w", err)
	}
	if it.Value == nil {
		return nil, it.Rev, nil
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(it.Value, &m); err != nil {
		return nil, it.Rev, fmt.Errorf("kv: corrupt stored properties: %w", err)
	}
	return m, it.Rev, nil
}

// SetProps merges changes into a bucket's properties after validating them. Invalid
// values give an EINVALID *core.Error whose Reasons map each bad property to the
// reference system's reason.
func (s *Service) SetProps(ctx context.Context, typ, bucket string, changes map[string]json.RawMessage) error {
	return s.setProps(ctx, storage.KeyString(storage.TagProps, typ, bucket), func() (map[string]json.RawMessage, error) {
		return s.effectiveRaw(typ, bucket)
	}, changes)
}

// ResetProps removes a bucket's own properties, so that it has its type's again.
func (s *Service) ResetProps(ctx context.Context, typ, bucket string) error {
	if _, err := s.Props(ctx, typ, bucket); err != nil {
		return err
	}
	s.propsWriteMu.Lock()
	defer s.propsWriteMu.Unlock()
	if err := storage.Delete(ctx, s.db, storage.KeyString(storage.TagProps, typ, bucket), true); err != nil {
		return fmt.Errorf("kv: reset props %s: %w", bucket, err)
	}
	return nil // the store's notification invalidated the properties cache
}

// TypeProps returns the properties of a bucket type (its defaults and settings).
func (s *Service) TypeProps(ctx context.Context, typ string) (*core.BucketProps, error) {
	raw, err := s.typeRaw(typ)
	if err != nil {
		return nil, err
	}
	p := s.typedProps(typ, raw)
	delete(p.Raw, core.PropName)
	return p, nil
}

// SetTypeProps merges changes into an existing bucket type's properties.
func (s *Service) SetTypeProps(ctx context.Context, typ string, changes map[string]json.RawMessage) error {
	return s.setProps(ctx, storage.KeyString(storage.TagType, typ), func() (map[string]json.RawMessage, error) {
		return s.typeRaw(typ)
	}, changes)
}

// CreateType creates (or re-creates with new settings) a bucket type. "default" always
// exists and cannot be created. Invalid properties are refused and nothing is written.
func (s *Service) CreateType(ctx context.Context, typ string, props map[string]json.RawMessage) error {
	if typ == "" || typ == core.DefaultType {
		return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf("bucket type %q cannot be created\n", typ)}
	}
	norm, reasons := s.validateChanges(props, s.propsDefaults(typ))
	checkDatatype(norm, s.propsDefaults(typ), true, reasons)
	s.checkHooks(norm, reasons)
	if len(reasons) > 0 {
		return &core.Error{Code: core.EINVALID, Message: "invalid bucket type properties", Reasons: reasons}
	}
	b, err := json.Marshal(norm)
	if err != nil {
		return fmt.Errorf("kv: encode type props: %w", err)
	}
	s.propsWriteMu.Lock()
	defer s.propsWriteMu.Unlock()
	if err := storage.Put(ctx, s.db, storage.KeyString(storage.TagType, typ), b, true); err != nil {
		return fmt.Errorf("kv: create type %s: %w", typ, err)
	}
	return nil // the store's notification invalidated the properties cache
}

// setProps validates changes against the effective properties that current loads, and
// merges them into the record stored under k (a bucket's or a type's own settings),
// committing on the revision of the record it merged into; on a conflict with another
// writer of the store it starts again from the reads. The store's notification of the
// commit invalidates the properties cache (applyChanges).
func (s *Service) setProps(ctx context.Context, k []byte, current func() (map[string]json.RawMessage, error),
	changes map[string]json.RawMessage) error {
	s.propsWriteMu.Lock()
	defer s.propsWriteMu.Unlock()
	for attempt := 0; ; attempt++ {
		err := s.setPropsOnce(ctx, k, current, changes)
		if !errors.Is(err, storage.ErrConflict) {
			return err
		}
		if attempt+1 >= maxWriteAttempts {
			return &core.Error{Code: core.EUNAVAILABLE, Message: "Properties changed concurrently too many times; try again\n"}
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// setPropsOnce is one attempt of setProps.
func (s *Service) setPropsOnce(ctx context.Context, k []byte, current func() (map[string]json.RawMessage, error),
	changes map[string]json.RawMessage) error {
	cur, err := current()
	if err != nil {
		return err
	}
	norm, reasons := s.validateChanges(changes, cur)
	checkDatatype(norm, cur, false, reasons)
	s.checkHooks(norm, reasons)
	if len(reasons) > 0 {
		return &core.Error{Code: core.EINVALID, Message: "invalid bucket properties", Reasons: reasons}
	}
	own, rev, err := s.readJSONRev(ctx, k)
	if err != nil {
		return err
	}
	if own == nil {
		own = map[string]json.RawMessage{}
	}
	for name, v := range norm {
		own[name] = v
	}
	enc, err := json.Marshal(own)
	if err != nil {
		return fmt.Errorf("kv: encode props: %w", err)
	}
	var b storage.Batch
	b.Require(k, rev)
	b.Put(k, enc)
	if err := s.db.Commit(ctx, &b, true); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return err
		}
		return fmt.Errorf("kv: set props: %w", err)
	}
	return nil
}

func (s *Service) invalidateProps() {
	s.propsMu.Lock()
	clear(s.propsCache)
	s.propsGen++
	s.propsMu.Unlock()
}
