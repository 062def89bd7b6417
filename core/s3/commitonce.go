package s3

import (
	"encoding/hex"
	"errors"

	"github.com/cairnkv/cairn/core/storage"
)

// A replicated store may answer a conditional commit with a conflict although it
// applied it: in a cluster, a stream leader deposed while its node was paused still
// answers for a moment, refusing on its stale state a commit that the new leader
// stores, and its answer may come first (docs/rationale.md, "A PUT's retry meets its
// own write"). The retry of a PUT's commit must then not replace the version it
// finds, which is its own: that would queue its own data for collection and leave the
// object's manifest without its data. appliedEarlier tells such a retry.

// appliedEarlier reports whether an earlier attempt of the commit of m, a PUT's new
// version of bucket/key, was applied, as read in t (a retry's attempt): the key's
// current version is m's data (m.UUID is the random id of this request's data, which
// no other write names); or, for data stored before the commit (upFront: a blob or
// chunks owned by a "w" record, which only the commit deletes), its "w" record is
// gone; or m is a version of the key, no longer current (versionKept); or m's data is
// queued for collection (applied, then replaced by another writer's version). When the current version is m's, m takes its version id and
// time, which the client is answered with. The reads are conditions of t, but for
// the "g" record: only a writer that replaced the current version, which t's
// condition on it sees, queues one.
func (s *Service) appliedEarlier(t *txn, bucket, key string, m *Manifest, upFront bool) (bool, error) {
	id, err := hex.DecodeString(m.UUID)
	if err != nil || len(id) == 0 {
		return false, nil
	}
	cur, err := s.manifest(t.get, bucket, key)
	switch {
	case err == nil:
		if cur.UUID == m.UUID {
			m.VersionID, m.LastModified = cur.VersionID, cur.LastModified
			return true, nil
		}
	case !IsCode(err, NoSuchKey):
		return false, err
	}
	if upFront {
		_, err := t.get(writingKey(id))
		return absent(err, "write record")
	}
	if kept, err := s.versionKept(t, bucket, key, m); err != nil || kept {
		return kept, err
	}
	_, err = t.st.Get(garbageKey(id))
	queued, err := absent(err, "collection record")
	return !queued && err == nil, err
}

// versionKept reports whether m, given a version id by an earlier attempt in a
// versioned bucket, is stored as that version (no longer the current one).
func (s *Service) versionKept(t *txn, bucket, key string, m *Manifest) (bool, error) {
	if m.VersionID == "" {
		return false, nil
	}
	slot, err := parseSlot(m.VersionID)
	if err != nil {
		return false, nil
	}
	v, err := readManifest(t.get, versionKey(bucket, key, slot), errAbsent, bucket, key)
	switch {
	case errors.Is(err, errAbsent):
		return false, nil
	case err != nil:
		return false, err
	}
	return v.UUID == m.UUID, nil
}

// absent reports whether err, a read's, says the record is absent (what names the
// record in other errors).
func absent(err error, what string) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, storage.ErrNotFound):
		return true, nil
	default:
		return false, wrapf(err, "read %s", what)
	}
}

// storedUpFront reports whether the data of e, a PUT's, is stored before its commit
// (a blob, or chunks owned by a "w" record) rather than in the commit's batch.
func (s *Service) storedUpFront(e Extent) bool {
	return e.Blob || e.storedSize() > int64(s.cfg.ChunkSize)
}
