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
// another node is judged against it; a plain write does not wait.
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
			if len(spy.keys) != c.wantSyncs {
				t.Errorf("Sync called for %q, want %d calls", spy.keys, c.wantSyncs)
			}
		})
	}
}
