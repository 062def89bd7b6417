package storage

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/syndtr/goleveldb/leveldb"
)

// writeLog lets the commit goroutine check a condition made from a Read (Batch.
// RequireItem) without reading the key again: it numbers the groups it writes and
// remembers, in a fixed table of buckets by key hash, the number of the last group that
// wrote any key of each bucket. A key read when seq was s is unchanged if its bucket's
// number is at most s: no group after s wrote it. Keys sharing a bucket only make the
// answer "maybe changed", and the condition is then checked by reading the key, as
// without the log; so the table's size bounds memory, not correctness.
//
// seq is read by any goroutine (Read stamps items with it); everything else belongs to
// the goroutine holding the committer's token.
type writeLog struct {
	seq atomic.Uint64 // groups written (and recorded) so far
	// floor is the first seq whose stamps the log may vouch for: a failed write (which
	// may or may not have applied, and may lead to a recovery) raises it past every
	// earlier stamp.
	floor uint64
	last  [writeLogBuckets]uint64 // the seq of the last group that wrote a key of each bucket
	// replay notes a group's keys (record); a field, so that replaying into it does not
	// allocate.
	replay logReplay
}

// writeLogBuckets is the size of the table: 512 KiB of group numbers. With a read's
// commit a millisecond after it and 20,000 writes per second, a bucket shared with a
// key written meanwhile is a 1-in-3000 event.
const writeLogBuckets = 1 << 16

// stampSeed hashes keys into buckets; per process, like revSeed.
var stampSeed = maphash.MakeSeed()

func keyBucket(key []byte) uint64 { return maphash.Bytes(stampSeed, key) % writeLogBuckets }

// readStamp is what Read knew about the log when it read a key: the log (its DB), the
// number of groups already written, the key's bucket (to check that a condition is made
// from the key's own item), and the generation of files read (a recovery in between
// voids the stamp).
type readStamp struct {
	log    *writeLog
	seq    uint64
	bucket uint64
	gen    uint64 // generation.id
}

// stamp returns the stamp of a read of key that begins now (before the read).
func (l *writeLog) stamp(key []byte) readStamp {
	return readStamp{log: l, seq: l.seq.Load(), bucket: keyBucket(key)}
}

// unchanged reports whether key is known to hold what a read stamped s found: the
// stamp is this log's and of key, and no group since wrote a key of its bucket. Call
// with the committer's token.
func (l *writeLog) unchanged(key []byte, s readStamp) bool {
	if s.log != l || s.seq < l.floor {
		return false
	}
	b := keyBucket(key)
	return b == s.bucket && l.last[b] <= s.seq
}

// record numbers a written group, notes the keys of b (every put and delete, the
// derived writes included), and stamps the group's changes with its number: a change
// is what a read right after the group finds. Call with the committer's token, after
// the write of b to generation gen: a read stamped with the new number began after the
// group was visible.
func (l *writeLog) record(b *leveldb.Batch, changes []Change, gen uint64) {
	seq := l.seq.Load() + 1
	l.replay = logReplay{l, seq}
	_ = b.Replay(&l.replay)
	for i := range changes {
		changes[i].stamp = readStamp{log: l, seq: seq, bucket: keyBucket(changes[i].Key), gen: gen}
	}
	l.seq.Store(seq)
}

// fail makes every stamp taken so far useless: after a write error nothing is known
// about what the store holds. Call with the committer's token.
func (l *writeLog) fail() {
	seq := l.seq.Load() + 1
	l.floor = seq
	l.seq.Store(seq)
}

// logReplay notes the keys of a replayed batch in the log.
type logReplay struct {
	l   *writeLog
	seq uint64
}

func (r *logReplay) Put(key, _ []byte) { r.l.last[keyBucket(key)] = r.seq }
func (r *logReplay) Delete(key []byte) { r.l.last[keyBucket(key)] = r.seq }
