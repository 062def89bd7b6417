// Package kv is Cairn's key-value service: fetching, storing and deleting objects with
// vector clocks and siblings, bucket and bucket-type properties, and the reaping of
// tombstones. It knows nothing of HTTP: core/kvapi translates requests into calls here.
//
// # Writes
//
// A write to one key is a read-modify-write serialised by a striped per-key lock, so
// writes to different keys proceed in parallel. Under the lock the service reads the
// stored record, resolves the incoming value against it (see resolve), computes the
// secondary-index postings to add and remove, and commits the record, the postings and
// any tombstone reap entry in one storage batch, fsynced when the write's dw asks for
// durability. goleveldb merges concurrent batches into one journal write, so concurrent
// durable writers share fsyncs (group commit).
//
// # Clocks and siblings
//
// Every write coordinated here increments this node's entry in the object's clock and
// stamps the new value with that event (a dot). A write whose causal context (the clock
// the client read) covers a stored value's dot supersedes that value; values it has not
// seen stay as siblings when the bucket allows multiple values. See resolve for the full
// rule, including dvv_enabled=false and last_write_wins.
package kv
