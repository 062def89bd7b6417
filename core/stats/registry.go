package stats

import (
	"sort"
	"sync"
	"time"
)

// Defaults for Config fields left empty.
const (
	DefaultNodeName       = "cairn@127.0.0.1"       // Config.NodeName
	DefaultVersion        = "dev"                   // Config.Version
	DefaultDialect        = "store"                 // Config.Dialect
	DefaultStorageBackend = "cairn_leveldb_backend" // Config.StorageBackend
	DefaultRingSize       = 64                      // Config.RingSize
)

// Config describes the node to a Registry. Zero fields take the defaults above.
type Config struct {
	// NodeName is reported as nodename and the only ring member.
	NodeName string
	// Version is Cairn's version, reported as cairn_version and as the version of the
	// dialect's kv, core and api applications.
	Version string
	// Dialect is the default prefix of the application version keys: "store" gives
	// store_kv_version, "riak" gives riak_kv_version (real clients check for
	// riak_core_version). Report may override it per call.
	Dialect string
	// StorageBackend is reported as storage_backend.
	StorageBackend string
	// RingSize is reported as ring_num_partitions and ring_creation_size.
	RingSize int
	// Clock returns the current time; nil means time.Now. Tests inject a fake clock to
	// drive the one-minute windows.
	Clock func() time.Time
	// ProcDir is where /proc/loadavg and /proc/meminfo are read; "" means "/proc".
	ProcDir string
}

// withDefaults returns c with empty fields filled in.
func (c Config) withDefaults() Config {
	if c.NodeName == "" {
		c.NodeName = DefaultNodeName
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.Dialect == "" {
		c.Dialect = DefaultDialect
	}
	if c.StorageBackend == "" {
		c.StorageBackend = DefaultStorageBackend
	}
	if c.RingSize <= 0 {
		c.RingSize = DefaultRingSize
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	return c
}

// Names of the counters a Registry always has. Other packages may add their own with
// Counter; each is reported as NAME (last minute) and NAME_total (since start).
const (
	NodeGets                  = "node_gets"                    // coordinated GETs (RecordGet)
	NodePuts                  = "node_puts"                    // coordinated PUTs and DELETEs
	PrecommitFail             = "precommit_fail"               // precommit hook refusals and failures
	PostcommitFail            = "postcommit_fail"              // postcommit hook failures
	VnodeIndexReads           = "vnode_index_reads"            // 2i queries (RecordIndexRead)
	VnodeIndexWrites          = "vnode_index_writes"           // writes adding 2i postings
	VnodeIndexWritesPostings  = "vnode_index_writes_postings"  // 2i postings added
	VnodeIndexDeletes         = "vnode_index_deletes"          // writes removing 2i postings
	VnodeIndexDeletesPostings = "vnode_index_deletes_postings" // 2i postings removed
	IndexFSMCreate            = "index_fsm_create"             // 2i queries started
	IndexFSMCreateError       = "index_fsm_create_error"       // 2i queries that failed to start
	ListFSMCreate             = "list_fsm_create"              // key and bucket listings started
	ListFSMCreateError        = "list_fsm_create_error"        // listings that failed to start
	ReadRepairs               = "read_repairs"                 // always 0 on one node; kept for shape
)

// builtinCounters are the counters New creates.
var builtinCounters = []string{
	NodeGets, NodePuts, PrecommitFail, PostcommitFail,
	VnodeIndexReads, VnodeIndexWrites, VnodeIndexWritesPostings,
	VnodeIndexDeletes, VnodeIndexDeletesPostings,
	IndexFSMCreate, IndexFSMCreateError, ListFSMCreate, ListFSMCreateError,
	ReadRepairs,
}

// Registry holds the statistics of one server: the reference's /stats figures and the
// Prometheus metrics. It is safe for concurrent use; the Record and Inc methods are meant
// for the request hot path (lock-free, allocation-free). Create it with New.
type Registry struct {
	cfg   Config
	clock clock

	gets, puts                    *Counter
	precommitFail, postcommitFail *Counter
	idxReads, idxWrites           *Counter
	idxWritePostings              *Counter
	idxDeletes, idxDelPostings    *Counter

	getTime, putTime Window // microseconds
	getSize          Window // bytes
	getSiblings      Window // sibling count

	mu       sync.RWMutex // guards counters, custom and sources
	counters map[string]*Counter
	custom   []string // names of counters added by Counter, sorted
	sources  []func() map[string]any

	prom *promMetrics
}

// New returns a Registry for the node that cfg describes.
func New(cfg Config) *Registry {
	cfg = cfg.withDefaults()
	r := &Registry{
		cfg:      cfg,
		clock:    clock{now: cfg.Clock},
		counters: make(map[string]*Counter, len(builtinCounters)),
	}
	for _, w := range []*Window{&r.getTime, &r.putTime, &r.getSize, &r.getSiblings} {
		w.clock = r.clock
	}
	for _, name := range builtinCounters {
		r.counters[name] = NewCounter(cfg.Clock)
	}
	r.gets = r.counters[NodeGets]
	r.puts = r.counters[NodePuts]
	r.precommitFail = r.counters[PrecommitFail]
	r.postcommitFail = r.counters[PostcommitFail]
	r.idxReads = r.counters[VnodeIndexReads]
	r.idxWrites = r.counters[VnodeIndexWrites]
	r.idxWritePostings = r.counters[VnodeIndexWritesPostings]
	r.idxDeletes = r.counters[VnodeIndexDeletes]
	r.idxDelPostings = r.counters[VnodeIndexDeletesPostings]
	r.prom = newPromMetrics(r)
	return r
}

// RecordGet records one coordinated GET that took d and found an object of size bytes
// with siblings values. siblings == 0 means nothing was found (not found or a tombstone):
// the GET is counted and timed but adds nothing to the size and sibling distributions.
func (r *Registry) RecordGet(d time.Duration, size int, siblings int) {
	sec := r.clock.sec()
	r.gets.addAt(sec, 1)
	r.getTime.observeAt(sec, d.Microseconds())
	if siblings > 0 {
		r.getSize.observeAt(sec, int64(size))
		r.getSiblings.observeAt(sec, int64(siblings))
	}
	r.prom.get.observe(d)
}

// RecordPut records one coordinated PUT of size bytes that took d.
func (r *Registry) RecordPut(d time.Duration, size int) {
	sec := r.clock.sec()
	r.puts.addAt(sec, 1)
	r.putTime.observeAt(sec, d.Microseconds())
	r.prom.put.observe(d)
}

// RecordDelete records one DELETE that took d. As in the reference, where a delete is
// the write of a tombstone through the put path, it counts in node_puts and
// node_put_fsm_time; Prometheus keeps deletes apart (op="delete").
func (r *Registry) RecordDelete(d time.Duration) {
	sec := r.clock.sec()
	r.puts.addAt(sec, 1)
	r.putTime.observeAt(sec, d.Microseconds())
	r.prom.del.observe(d)
}

// RecordIndexWrite records one write that changed secondary-index postings: added new
// postings and removed old ones (vnode_index_writes[_postings], vnode_index_deletes[_postings]).
func (r *Registry) RecordIndexWrite(added, removed int) {
	sec := r.clock.sec()
	if added > 0 {
		r.idxWrites.addAt(sec, 1)
		r.idxWritePostings.addAt(sec, int64(added))
	}
	if removed > 0 {
		r.idxDeletes.addAt(sec, 1)
		r.idxDelPostings.addAt(sec, int64(removed))
	}
}

// RecordIndexRead records one secondary-index query (vnode_index_reads).
func (r *Registry) RecordIndexRead() { r.idxReads.Inc() }

// IncPrecommitFail counts a write refused or failed by a precommit hook.
func (r *Registry) IncPrecommitFail() {
	r.precommitFail.Inc()
	r.prom.precommitFail.Inc()
}

// IncPostcommitFail counts a failed postcommit hook.
func (r *Registry) IncPostcommitFail() {
	r.postcommitFail.Inc()
	r.prom.postcommitFail.Inc()
}

// Counter returns the counter called name, creating it on first use. It is reported as
// name (last minute) and name_total (since start) in Report and as
// cairn_events_total{name="..."} in Prometheus. Names are fixed strings in code, never
// request data. The lookup takes a lock: call Counter once and keep the pointer.
func (r *Registry) Counter(name string) *Counter {
	r.mu.RLock()
	c := r.counters[name]
	r.mu.RUnlock()
	if c != nil {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c = r.counters[name]; c == nil {
		c = NewCounter(r.cfg.Clock)
		r.counters[name] = c
		i := sort.SearchStrings(r.custom, name)
		r.custom = append(r.custom, "")
		copy(r.custom[i+1:], r.custom[i:])
		r.custom[i] = name
	}
	return c
}

// AddSource adds fn to the sources Report merges in; storage, hooks and the like use it
// to add their own keys (e.g. "disk"). fn is called on every Report, must be safe for
// concurrent use and should be quick. Its keys are merged after the built-in ones and
// replace them on a clash; a source that panics is skipped.
func (r *Registry) AddSource(fn func() map[string]any) {
	if fn == nil {
		return
	}
	r.mu.Lock()
	r.sources = append(r.sources, fn)
	r.mu.Unlock()
}

// Config returns the configuration the Registry was built with, defaults filled in.
func (r *Registry) Config() Config { return r.cfg }
