// Package storage is Cairn's storage engine: one embedded LevelDB
// (github.com/syndtr/goleveldb) per data directory. It is the only package that
// imports goleveldb; everything above it sees byte keys, byte values, atomic batches,
// ordered iteration and snapshots.
//
// # The seam
//
// Services use storage through the Store interface (store.go), which *DB implements
// and which a replicated log in front of a local LevelDB can implement too. Its
// contract, checked for every implementation by the conformance suite in
// core/storage/storagetest:
//
//   - Read returns a value with its Revision, an opaque comparable value; an absent key
//     has NoRevision.
//   - Commit applies a Batch atomically, and only if each of its conditions
//     (Batch.Require, Batch.RequireItem: key, revision read) still holds; otherwise it
//     fails with ErrConflict and writes nothing. Writers read, merge, commit, and retry
//     on conflict: correctness never rests on process-local locks.
//   - Derived writes (secondary-index postings, reap-queue entries) are computed by the
//     one DeriveFunc registered for a table (RegisterDerive) from the value committed
//     before and the value being committed, and applied in the same batch; so a replica
//     applying a record it did not write recomputes them.
//   - Subscribe reports every commit's keys, values and revisions, in commit order,
//     before the writer is acknowledged: caches follow it. A change's bytes are lent
//     for the call, unless its writer handed its batch over (Batch.HandOver): then
//     Change.Owned lets a cache keep them without a copy.
//   - Snapshots and iterators read a consistent, ordered view.
//
// The LevelDB's revision of a value is a hash of its bytes (nothing is stored, so the
// on-disk format is unchanged); conditions are checked in the goroutine that writes
// each group commit, against the DB and the group's earlier writes (seam.go).
// OpenStore opens the store of a data directory. docs/rationale.md ("The storage
// seam") records the choices.
//
// # Keyspace
//
// Every key starts with a one-byte table tag (TagObject, TagIndex, TagProps, TagType,
// TagModule, TagS3, TagChunk, TagReap, TagExpiry, TagMeta, TagGrant) followed by
// components. Each
// component is escaped so that any byte may appear in it: a 0x00 byte inside a component
// is written as 0x00 0xFF and every component ends with 0x00 0x01. This encoding is
//
//   - order-preserving: bytes.Compare of two keys equals the lexicographic order of
//     their (tag, component...) tuples, so a bucket's keys, an index's terms and the reap
//     queue's deadlines iterate in order;
//   - prefix-exact: Key(tag, c1, ..., ck) is a byte prefix of exactly the keys whose
//     first k components are c1..ck, so IteratePrefix(Key(TagObject, typ, bucket)) lists
//     one bucket and never a bucket whose name merely starts with the same bytes;
//   - reversible: DecodeKey recovers the components.
//
// Listing buckets seeks from one bucket prefix to PrefixEnd of it, the first key past
// every key of that bucket, without scanning the bucket's keys.
//
// Two tables are queues keyed by time: TagReap (tombstones, by the deadline after which
// they may be removed) and TagExpiry (objects with a TTL, by their absolute expiry time,
// which the object record holds). Both are derived writes of TagObject records
// (RegisterDerive): a replica that applies a record computes the same entries, and a
// reaper finds what is due with one scan up to the current time, never scanning the
// objects.
//
// Values are opaque to this package; the record formats belong to the packages that
// own each table (core/kv for objects and index postings, core/s3 for TagS3 and
// TagChunk, and so on). The TagMeta key "schema" holds SchemaVersion; Open stamps new
// directories with it and refuses directories written by a newer schema.
//
// # Durability
//
// Every write goes to the LevelDB journal (write-ahead log) before it is applied, so an
// acknowledged write survives a crash of the process. Only a write made with sync=true
// has also been fsynced, and only those survive a crash of the machine or a power loss.
// A Batch is atomic: after any crash either all of its operations are visible or none.
// Concurrent writers are group-committed: writes that queue while another is being
// journaled are merged into the next journal write, and one fsync covers every merged
// write that asked for sync. A busy server therefore pays roughly one fsync per group,
// not per request (see TUNING.md for the measured effect).
//
// The data directory is locked with flock(2) on its LOCK file while open; a second Open,
// from this or any other process, fails with ErrLocked. The directory is 0700 and every
// file in it 0600 (goleveldb's own 0644 files are narrowed as they are created): the
// journal and the tables hold every value in clear.
//
// # A full disk
//
// goleveldb keeps the first error of its journal writer (and of its manifest writer)
// for good: after one failed write on a full disk, every write fails until the files
// are reopened. So a write that fails with an I/O error suspends writes: they fail at
// once with an error wrapping ErrNoSpace (a full device; it carries the core.ENOSPACE
// code) or ErrWritesSuspended, while reads go on. A recovery goroutine waits until the
// device has room for what reopening writes, lets the open iterators and snapshots
// finish (after a grace period it interrupts them: ErrInterrupted), closes the LevelDB
// and opens it again; the open replays the journals, so no acknowledged write is lost,
// and writes resume. Writes run one goleveldb write at a time (group commit is done
// here, not by goleveldb) and the journal's bytes are observed, so a failed write is
// known exactly: it was not applied, and its partial record is cut off the journal so
// that it never comes back; a write goleveldb journaled before failing (a memtable
// rotation that failed after it) is acknowledged. Open on a full disk opens read-only
// with writes suspended, and recovers the same way.
//
// # Concurrency
//
// DB and Snapshot are safe for concurrent use. Iterator and Batch are not; each belongs
// to one goroutine. Iterators and snapshots pin old data until released.
//
// # Tuning
//
// The zero Options are the production defaults. They differ from goleveldb's own: a
// bloom filter on every table, a larger write buffer, larger tables and level-1 size,
// a larger block cache and later level-0 write throttling, and no read-triggered
// compactions. TUNING.md explains each choice and records the benchmark numbers behind
// it (bench_test.go).
package storage
