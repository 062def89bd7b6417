package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/storage"
)

// Where a key replicates, by its table tag.
type placement int

const (
	placeLocal     placement = iota // never published: derived on apply, or this node's own
	placePartition                  // an object: a partition stream
	placeMeta                       // cluster-wide metadata: the META stream
)

// placeOf returns where key replicates.
func placeOf(key []byte) placement {
	if len(key) == 0 {
		return placeLocal
	}
	switch key[0] {
	case storage.TagObject:
		return placePartition
	case storage.TagProps, storage.TagType, storage.TagModule, storage.TagS3, storage.TagGrant, storage.TagChunk:
		return placeMeta
	}
	return placeLocal // TagIndex, TagReap, TagMeta and anything unknown
}

// Stream names and subjects. A stream's token t names it: stream "CAIRN_" + upper(t),
// subjects "cairn.<t>.<suffix>". A key's suffix is the base64url SHA-256 of the key
// (43 characters of [A-Za-z0-9_-], whatever the key holds, so any key makes a valid,
// bounded subject); the record carries the key itself.
const (
	subjectPrefix = "cairn."
	streamPrefix  = "CAIRN_"
	metaToken     = "meta"
	// checkSuffix is the subject of condition checks on keys a batch does not write.
	checkSuffix = "chk"
	// configSuffix is the subject of the cluster's fixed settings (META stream).
	configSuffix = "cfg"
)

// streamRef names one stream.
type streamRef struct {
	token    string // "meta" or "p<partition>r<replicas>"
	replicas int
}

func (s streamRef) name() string { return streamPrefix + strings.ToUpper(s.token) }

func (s streamRef) subjects() string { return subjectPrefix + s.token + ".>" }

func (s streamRef) subject(suffix string) string { return subjectPrefix + s.token + "." + suffix }

// keySubject returns the subject of key in s.
func (s streamRef) keySubject(key []byte) string {
	h := sha256.Sum256(key)
	return s.subject(base64.RawURLEncoding.EncodeToString(h[:]))
}

// partitionStream returns the stream of partition p with replicas r.
func partitionStream(p, r int) streamRef {
	return streamRef{token: "p" + strconv.Itoa(p) + "r" + strconv.Itoa(r), replicas: r}
}

// parseStreamName returns the stream a JetStream stream name names, if it is one of
// Cairn's.
func parseStreamName(name string) (streamRef, bool) {
	t, ok := strings.CutPrefix(name, streamPrefix)
	if !ok {
		return streamRef{}, false
	}
	t = strings.ToLower(t)
	if t == metaToken {
		return streamRef{token: t}, true
	}
	ps, rs, ok := strings.Cut(strings.TrimPrefix(t, "p"), "r")
	if !ok || !strings.HasPrefix(t, "p") {
		return streamRef{}, false
	}
	p, err1 := strconv.Atoi(ps)
	r, err2 := strconv.Atoi(rs)
	if err1 != nil || err2 != nil || p < 0 || r < 1 || partitionStream(p, r).token != t {
		return streamRef{}, false
	}
	return partitionStream(p, r), true
}

// partitionOf returns the partition of an object key among n (a power of two): FNV-1a,
// the same on every node.
func partitionOf(key []byte, n int) int {
	h := fnv.New64a()
	_, _ = h.Write(key)
	return int(h.Sum64() & uint64(n-1))
}

// A record is the body of one message: its kind, then for a put or delete the key
// (uvarint length, bytes) and for a put the value.
const (
	kindPut    byte = 'P'
	kindDelete byte = 'D'
	kindCheck  byte = 'C' // a condition on a key the batch does not write; applies nothing
	kindConfig byte = 'F' // the cluster's fixed settings
)

// Headers of Cairn's messages: a multi-message batch marks each message with the
// batch's id and its position "i/n", so that an applier applies the batch as one local
// commit.
const (
	hdrBatch    = "Cairn-Batch"
	hdrBatchPos = "Cairn-Batch-Pos"
)

// encodeRecord returns the body of a put (del false) or delete of key.
func encodeRecord(key, value []byte, del bool) []byte {
	kind := kindPut
	if del {
		kind, value = kindDelete, nil
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(key)+len(value))
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return append(b, value...)
}

// record is a decoded message body.
type record struct {
	kind       byte
	key, value []byte // value nil for a delete (non-nil, maybe empty, for a put)
}

var errBadRecord = errors.New("cluster: not a Cairn record")

// decodeRecord decodes a message body; the slices point into body.
func decodeRecord(body []byte) (record, error) {
	if len(body) == 0 {
		return record{}, errBadRecord
	}
	r := record{kind: body[0]}
	switch r.kind {
	case kindCheck, kindConfig:
		return r, nil
	case kindPut, kindDelete:
	default:
		return record{}, fmt.Errorf("%w: kind %q", errBadRecord, r.kind)
	}
	n, w := binary.Uvarint(body[1:])
	if w <= 0 || n > uint64(len(body)-1-w) || n == 0 {
		return record{}, fmt.Errorf("%w: bad key length", errBadRecord)
	}
	rest := body[1+w:]
	r.key = rest[:n]
	if r.kind == kindPut {
		r.value = rest[n:]
		if r.value == nil {
			r.value = []byte{}
		}
	} else if len(rest) != int(n) {
		return record{}, fmt.Errorf("%w: a delete with a value", errBadRecord)
	}
	return r, nil
}

// The local side tables (tag v, this node's own): per replicated key, the stream and
// sequence it was last applied from; per stream, the last sequence applied.
var (
	sideKeyPrefix    = storage.Key(storage.TagMeta, []byte("cluster-key"))
	appliedKeyPrefix = storage.Key(storage.TagMeta, []byte("cluster-applied"))
	errBadSideEntry  = errors.New("cluster: bad side-table entry")
)

// appliedKey returns the key of a stream's last applied sequence.
func appliedKey(stream string) []byte {
	return storage.Key(storage.TagMeta, []byte("cluster-applied"), []byte(stream))
}

// isSideKey reports whether key belongs to a side table.
func isSideKey(key []byte) bool {
	return bytes.HasPrefix(key, sideKeyPrefix) || bytes.HasPrefix(key, appliedKeyPrefix)
}

// sideKey returns the side-table key of a replicated key.
func sideKey(key []byte) []byte {
	return storage.Key(storage.TagMeta, []byte("cluster-key"), key)
}

// sideEntry is a replicated key's side-table entry.
type sideEntry struct {
	stream string
	seq    uint64
}

func (e sideEntry) encode() []byte {
	b := binary.AppendUvarint(nil, e.seq)
	return append(b, e.stream...)
}

func decodeSideEntry(v []byte) (sideEntry, error) {
	seq, n := binary.Uvarint(v)
	if n <= 0 || len(v) == n {
		return sideEntry{}, errBadSideEntry
	}
	return sideEntry{seq: seq, stream: string(v[n:])}, nil
}

func encodeSeq(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func decodeSeq(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, errBadSideEntry
	}
	return binary.BigEndian.Uint64(v), nil
}
