package s3

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

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
// no other write names; m then takes its version id and time, which the client is
// answered with); or m is a version of the key, no longer current (versionKept); or
// m's data is queued for collection (applied, then replaced by another writer's
// version); or, for data stored before the commit (upFront: a blob or chunks owned by a
// "w" record), the "w" record is gone, which only the commit does, unless a node's
// restart recovered it as an interrupted write (recoverWrites, which queues the data):
// a "w" record gone with the data queued is errDataQueued, since a write applied and
// replaced cannot be told from one recovered. The reads are conditions of t, but for
// the "g" record: only a writer that replaced the current version, which t's condition
// on it sees, or a recovery, which deletes the "w" record t reads, queues one.
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
	if kept, err := s.versionKept(t, bucket, key, m); err != nil || kept {
		return kept, err
	}
	_, err = t.st.Get(garbageKey(id))
	notQueued, err := absent(err, "collection record")
	if err != nil {
		return false, err
	}
	if !upFront {
		return !notQueued, nil
	}
	_, err = t.get(writingKey(id))
	switch gone, err := absent(err, "write record"); {
	case err != nil || !gone:
		return false, err
	case !notQueued:
		return false, errDataQueued
	}
	return true, nil
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

// errDataQueued refuses the commit of a PUT whose data, stored before the commit, lost
// its "w" record before the first attempt: the data is queued for collection (the
// write was abandoned, or recovered by a node's restart) and no manifest may name it.
var errDataQueued = Errorf(InternalError, "The object's data was discarded before it was committed; please send the object again.")

// requireWriting adds to t, the first attempt of the commit of m, a PUT's version
// whose data was stored before the commit, the condition that the "w" record of its
// data id still exists (errDataQueued when it does not): the commit then cannot apply
// after the write was abandoned (abandonUnapplied).
func requireWriting(t *txn, m *Manifest) error {
	id, err := hex.DecodeString(m.UUID)
	if err != nil {
		return wrapf(err, "data id")
	}
	_, err = t.get(writingKey(id))
	gone, err := absent(err, "write record")
	if err == nil && gone {
		return errDataQueued
	}
	return err
}

// abandonTimeout bounds the queuing of a failed PUT's data (abandonUnapplied).
const abandonTimeout = 10 * time.Second

// abandonUnapplied queues for collection the data of a PUT whose commit failed, stored
// before the commit (its "w" record), unless the commit was applied all the same: a
// store may fail a commit it applied (a conflict answered for it, an unknown outcome,
// a context ended while it was in flight), and the commit deletes the "w" record. The
// record is read as a condition, so a commit applied meanwhile makes this conflict and
// read again; if that cannot be settled the record stays (its data leaks until a
// restart recovers it, which is better than an object without data).
func (s *Service) abandonUnapplied(id []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), abandonTimeout)
	defer cancel()
	err := s.update(ctx, "abandon "+hex.EncodeToString(id), func(t *txn) error {
		_, err := t.get(writingKey(id))
		if gone, err := absent(err, "write record"); err != nil || gone {
			return err
		}
		t.b.Delete(writingKey(id))
		t.b.Put(garbageKey(id), nil)
		return nil
	})
	if err != nil {
		s.log.Warn("s3: queue the data of a failed write", "err", err)
		return
	}
	s.gc.wake()
}
