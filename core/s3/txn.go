package s3

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnkv/cairn/core/storage"
)

// maxCommitAttempts bounds how often an update reads, computes and commits again after
// its conditional commit conflicted with another writer's (another Service over the
// same store, or a replica). The service's own locks keep its writers from conflicting
// with one another, so a conflict means another writer: 32 attempts with backoff
// outlast any plausible burst on one record.
const maxCommitAttempts = 32

// errAgain, returned by an update's function, makes the update start again after a
// pause, as a conflict does: something it read is in a transition that another writer
// is about to finish.
var errAgain = fmt.Errorf("s3: a record is in transition: %w", storage.ErrConflict)

// errContended is returned when an update conflicted maxCommitAttempts times.
var errContended = Errorf(ServiceUnavailable, "The resource is being changed by too many concurrent requests; please try again.")

// testHookCommit, set by tests, runs in update just before a commit: where another
// writer may overtake it.
var testHookCommit func(s *Service, what string)

// txn is one attempt of an update: what it reads through get makes its batch
// conditional on the record being unchanged when the batch commits.
type txn struct {
	ctx context.Context
	st  storage.Store
	b   storage.Batch
}

// get reads key and requires it unchanged at commit (absent: still absent). A missing
// key is an error wrapping storage.ErrNotFound, as storage.Store.Get's.
func (t *txn) get(key []byte) ([]byte, error) {
	it, err := t.st.Read(t.ctx, key)
	if err != nil {
		return nil, err
	}
	t.b.Require(key, it.Rev)
	if !it.Rev.Exists() {
		return nil, errAbsent
	}
	return it.Value, nil
}

// errAbsent is txn.get's error for an absent key (one value: a PUT of a new key meets
// it twice, and the callers only test it with errors.Is).
var errAbsent = fmt.Errorf("s3: absent: %w", storage.ErrNotFound)

// update runs fn in a new txn and commits its batch, synced, if fn wrote anything;
// when the commit conflicts it runs fn again on fresh reads, at most
// maxCommitAttempts times, pausing a little more each time, while ctx lasts. An error
// of fn ends it and is returned as is; what names the update in other errors.
func (s *Service) update(ctx context.Context, what string, fn func(t *txn) error) error {
	err := storage.RetryConflicts(ctx, maxCommitAttempts, func() error {
		err := s.attempt(ctx, what, fn)
		if errors.Is(err, storage.ErrConflict) {
			s.conflicts.Add(1)
		}
		return err
	})
	if errors.Is(err, storage.ErrConflict) {
		s.log.Warn("s3: an update kept conflicting", "update", what, "attempts", maxCommitAttempts)
		return errContended
	}
	return err
}

// attempt runs fn once and commits what it wrote. A conflict is returned as the
// store's error (wrapping storage.ErrConflict), other store errors wrapped with what.
func (s *Service) attempt(ctx context.Context, what string, fn func(t *txn) error) error {
	t := &txn{ctx: ctx, st: s.db}
	if err := fn(t); err != nil || t.b.Len() == 0 {
		return err
	}
	if testHookCommit != nil {
		testHookCommit(s, what)
	}
	err := s.db.Commit(ctx, &t.b, true)
	if err != nil && !errors.Is(err, storage.ErrConflict) {
		return wrapf(err, "%s", what)
	}
	return err
}

// writes are puts and deletes to add to every attempt's batch of an update (the data
// records of a PUT, computed once).
type writes struct {
	w []write
}

// write is one put (value not nil) or delete.
type write struct {
	key, value []byte
	del        bool
}

// put records storing value under key; both are kept, not copied.
func (w *writes) put(key, value []byte) { w.w = append(w.w, write{key: key, value: value}) }

// delete records removing key.
func (w *writes) delete(key []byte) { w.w = append(w.w, write{key: key, del: true}) }

// addTo adds the writes to b.
func (w *writes) addTo(b *storage.Batch) {
	for _, x := range w.w {
		if x.del {
			b.Delete(x.key)
		} else {
			b.Put(x.key, x.value)
		}
	}
}
