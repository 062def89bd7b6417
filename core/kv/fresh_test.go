package kv

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/storage"
)

// syncSpy is a store whose local replica "lags": it records the keys Sync is asked
// for, and fails Sync with err when set.
type syncSpy struct {
	*storage.DB
	keys []string
	err  error
}

func (s *syncSpy) Sync(_ context.Context, key []byte) error {
	s.keys = append(s.keys, string(key))
	return s.err
}

// TestPreconditionSyncsReplica: a write with a precondition (If-Match...) first brings
// a lagging replica up to date with the key, so that a condition on a version read on
// another node is judged against it (503 when it cannot); a plain write does not wait.
func TestPreconditionSyncsReplica(t *testing.T) {
	always := func(*core.Object) error { return nil }
	cases := []struct {
		name      string
		pre       func(*core.Object) error
		syncErr   error
		wantSyncs int
		wantErr   bool
	}{
		{"plain write", nil, nil, 0, false},
		{"conditional write", always, nil, 1, false},
		{"replica cannot catch up", always, errors.New("no leader"), 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spy := &syncSpy{DB: openTestDB(t), err: c.syncErr}
			s, err := New(spy, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k",
				Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}, Options: PutOptions{Precondition: c.pre}})
			if (err != nil) != c.wantErr || (c.wantErr && !errors.Is(err, c.syncErr)) {
				t.Fatalf("put: %v, want error %v", err, c.syncErr)
			}
			var ce *core.Error
			if c.wantErr && (!errors.As(err, &ce) || ce.Code != core.EUNAVAILABLE) {
				t.Errorf("put: %v, want a %s error (503)", err, core.EUNAVAILABLE)
			}
			if len(spy.keys) != c.wantSyncs {
				t.Errorf("Sync called for %q, want %d calls", spy.keys, c.wantSyncs)
			}
		})
	}
}

// TestQuorumReadSyncFailureIsUnavailable: a read with r > 1 whose replica cannot be
// synced answers 503 (EUNAVAILABLE), not an internal error; r=1 does not sync.
func TestQuorumReadSyncFailureIsUnavailable(t *testing.T) {
	spy := &syncSpy{DB: openTestDB(t), err: errors.New("JetStream system temporarily unavailable")}
	s, err := New(spy, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Get(ctx, core.DefaultType, "b", "k", GetOptions{R: core.QuorumQuorum})
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.EUNAVAILABLE || !errors.Is(err, spy.err) {
		t.Errorf("r=quorum get: %v, want a %s error wrapping the cause", err, core.EUNAVAILABLE)
	}
	_, err = s.Get(ctx, core.DefaultType, "b", "k", GetOptions{R: core.QuorumOne})
	if errors.As(err, &ce) && ce.Code == core.EUNAVAILABLE || len(spy.keys) != 1 {
		t.Errorf("r=1 get: %v, syncs %q; want it served by the replica alone", err, spy.keys)
	}
}
