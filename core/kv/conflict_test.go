package kv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/storage"
)

// conflictingStore is a store whose commits fail with a conflict while inject says so,
// as if another writer always committed first.
type conflictingStore struct {
	storage.Store
	mu      sync.Mutex // guards left and commits
	left    int        // conflicts still to inject; negative: always
	commits int
}

func (c *conflictingStore) Commit(ctx context.Context, b *storage.Batch, sync bool) error {
	c.mu.Lock()
	c.commits++
	inject := c.left != 0
	if c.left > 0 {
		c.left--
	}
	c.mu.Unlock()
	if inject {
		return fmt.Errorf("test: %w", storage.ErrConflict)
	}
	return c.Store.Commit(ctx, b, sync)
}

func (c *conflictingStore) set(left int) {
	c.mu.Lock()
	c.left, c.commits = left, 0
	c.mu.Unlock()
}

// TestWriteRetriesConflicts: a write that conflicts starts again from a fresh read, a
// bounded number of times and within the request's deadline, and its precommit hook
// runs once whatever the retries.
func TestWriteRetriesConflicts(t *testing.T) {
	tests := []struct {
		name      string
		conflicts int
		timeout   time.Duration
		wantCode  string // "" for success
		wantMsg   string
		commits   int // 0: not checked
	}{
		{"a few conflicts", 3, 0, "", "", 4},
		{"always", -1, 0, core.EUNAVAILABLE, "conflicted with concurrent writes 32 times", maxWriteAttempts},
		{"always, with a deadline", -1, 30 * time.Millisecond, core.EUNAVAILABLE, "request timed out", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			var mu sync.Mutex // guards calls
			calls := 0
			prov := &testProvider{mods: map[string]map[string]any{"m": {
				"count": precommitFunc(func(context.Context, hooks.Op, *core.Object) (hooks.Verdict, error) {
					mu.Lock()
					calls++
					mu.Unlock()
					return hooks.Verdict{}, nil
				}),
			}}}
			st := &conflictingStore{Store: db}
			s, err := New(st, Config{Hooks: hooks.NewRegistry(prov)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			setHooks(t, s, "b", `{"precommit":[{"mod":"m","fun":"count"}]}`)
			st.set(tc.conflicts)
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err = s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: "b", Key: "k",
				Value: core.Sibling{Value: []byte("v"), ContentType: "text/plain"}})
			if e := core.AsError(err); core.ErrorCode(err) != tc.wantCode || tc.wantCode != "" && !strings.Contains(e.Message, tc.wantMsg) {
				t.Fatalf("Put: %v, want code %q with %q", err, tc.wantCode, tc.wantMsg)
			}
			if tc.timeout > 0 && time.Since(start) > tc.timeout+time.Second {
				t.Errorf("Put returned %v after a %v deadline", time.Since(start), tc.timeout)
			}
			st.mu.Lock()
			commits := st.commits
			st.mu.Unlock()
			if tc.commits > 0 && commits != tc.commits {
				t.Errorf("%d commits, want %d", commits, tc.commits)
			}
			mu.Lock()
			defer mu.Unlock()
			if calls != 1 {
				t.Errorf("the precommit hook ran %d times, want once", calls)
			}
			st.set(0)
			o, gerr := s.Get(context.Background(), core.DefaultType, "b", "k", GetOptions{})
			if stored := gerr == nil; stored != (tc.wantCode == "") {
				t.Errorf("stored: %v (%v, %v), want %v", stored, o, gerr, tc.wantCode == "")
			}
		})
	}
}
