package kv

import (
	"context"

	"github.com/cairnkv/cairn/core/index"
)

// Index runs a secondary-index query on typ/bucket over the view's snapshot and calls fn
// with each result in order (see index.Run: term and key are only valid during the
// call). An unknown bucket type is a not-found error; an invalid query is an
// *index.QueryError; fn's error and ctx's error are returned as they are.
//
// The built-in fields $bucket and $key read the bucket's object keys with the rule key
// listing uses: a deleted key counts while its tombstone is still visible to reads (the
// reap delay), as the reference system's backends list tombstones until they are
// reaped. Index fields read postings, which a delete removes at once; the postings of an
// expired object are skipped from its expiry on (postingValue).
func (v *View) Index(ctx context.Context, typ, bucket string, q index.Query, fn func(term, key []byte) error) (index.Page, error) {
	if err := v.CheckType(ctx, typ); err != nil {
		return index.Page{}, err
	}
	return index.Run(ctx, v.snap, typ, bucket, q, v.visible, v.livePosting, fn)
}

// livePosting reports whether a posting names an object that has not expired at the
// view's time.
func (v *View) livePosting(value []byte) bool { return postingLive(value, v.now) }
