package s3

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// TestUpdateBounds: an update whose record another writer changes before every commit
// gives up after maxCommitAttempts with 503 ServiceUnavailable and writes nothing; one
// whose context ends while it retries returns the context's error; one that conflicts
// a few times succeeds on fresh reads; an error of its function ends it at once.
func TestUpdateBounds(t *testing.T) {
	key := storage.KeyString(storage.TagS3, "test", "k")
	for _, c := range []struct {
		name      string
		overtakes int  // how many commits another writer overtakes
		cancel    bool // the context ends at the first overtake
		fnErr     error
		wantCalls int
		wantCode  Code
		wantErr   error
	}{
		{name: "no conflict", wantCalls: 1},
		{name: "three conflicts", overtakes: 3, wantCalls: 4},
		{name: "always overtaken", overtakes: 1 << 30, wantCalls: maxCommitAttempts, wantCode: ServiceUnavailable},
		{name: "canceled while retrying", overtakes: 1 << 30, cancel: true, wantCalls: 1, wantErr: context.Canceled},
		{name: "function fails", fnErr: errNoSuchKey, wantCalls: 1, wantCode: NoSuchKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, db := newTestService(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			overtaken := 0
			testHookCommit = func(_ *Service, what string) {
				if what != "test" || overtaken == c.overtakes {
					return
				}
				overtaken++
				if err := db.Put(key, []byte{byte(overtaken)}, false); err != nil {
					t.Fatal(err)
				}
				if c.cancel {
					cancel()
				}
			}
			defer func() { testHookCommit = nil }()
			calls := 0
			err := s.update(ctx, "test", func(tx *txn) error {
				calls++
				if _, err := tx.get(key); err != nil && !errors.Is(err, storage.ErrNotFound) {
					return err
				}
				tx.b.Put(key, []byte("mine"))
				return c.fnErr
			})
			switch {
			case calls != c.wantCalls:
				t.Fatalf("%d attempts, want %d (%v)", calls, c.wantCalls, err)
			case c.wantCode != "":
				wantCode(t, err, c.wantCode)
			case c.wantErr != nil && !errors.Is(err, c.wantErr), c.wantErr == nil && err != nil:
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			v, _ := db.Get(key)
			if mine := string(v) == "mine"; mine != (err == nil) {
				t.Fatalf("stored %q after %v", v, err)
			}
		})
	}
}
