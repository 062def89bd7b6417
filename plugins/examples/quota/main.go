// Command quota is an example Cairn process plugin: a precommit hook, "check", that
// rejects writes to a bucket an external quota file says is full. Another system (a
// billing job, an operator) maintains the file; the plugin re-reads it whenever it
// changes. Its path is QUOTA_FILE (default quota.json in the working directory):
//
//	{"buckets": {"photos": {"full": true, "message": "photos is over its 10 GiB plan"}}}
//
// A write (put) to a full bucket is rejected with the message (403 to the client;
// "bucket B is full" when none is given). Deletes are always accepted: they free space.
// A missing file means no bucket is full; a file that does not parse is reported on
// standard error and the last good one stays in force. Bucket properties name it
// {"precommit": [{"mod": "quota", "fun": "check"}]} when the plugin is configured
// under the name quota.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func main() {
	path := os.Getenv("QUOTA_FILE")
	if path == "" {
		path = "quota.json"
	}
	q := &quotas{path: path}
	m := goplugin.NewMux()
	m.Precommit("check", q.check)
	goplugin.Serve(m)
}

// file is the quota file's shape.
type file struct {
	Buckets map[string]bucketQuota `json:"buckets"`
}

// bucketQuota is one bucket's entry.
type bucketQuota struct {
	Full    bool   `json:"full"`
	Message string `json:"message"`
}

// quotas is the quota file as last read.
type quotas struct {
	path string

	mu      sync.Mutex // guards the fields below
	modTime time.Time
	size    int64
	read    bool // the file has been read at least once at modTime/size
	current map[string]bucketQuota
}

// check is the precommit: it rejects puts into full buckets.
func (q *quotas) check(_ context.Context, op goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
	if op == goplugin.OpDelete {
		return goplugin.Verdict{}, nil
	}
	b, ok := q.lookup(obj.Bucket)
	if !ok || !b.Full {
		return goplugin.Verdict{}, nil
	}
	msg := b.Message
	if msg == "" {
		msg = "bucket " + obj.Bucket + " is full"
	}
	return goplugin.Verdict{Reject: true, Reason: msg}, nil
}

// lookup returns bucket's entry, re-reading the file when its size or modification
// time changed since the last read.
func (q *quotas) lookup(bucket string) (bucketQuota, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st, err := os.Stat(q.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		q.current, q.read = nil, false
	case err != nil:
		fmt.Fprintln(os.Stderr, "quota: stat the quota file:", err)
	case !q.read || !st.ModTime().Equal(q.modTime) || st.Size() != q.size:
		q.reload(st)
	}
	b, ok := q.current[bucket]
	return b, ok
}

// reload reads the file; a file that does not parse leaves the last good one in force.
func (q *quotas) reload(st fs.FileInfo) {
	data, err := os.ReadFile(q.path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quota: read the quota file:", err)
		return
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		fmt.Fprintf(os.Stderr, "quota: %s does not parse, keeping the last good one: %v\n", q.path, err)
		q.modTime, q.size, q.read = st.ModTime(), st.Size(), true
		return
	}
	q.current, q.modTime, q.size, q.read = f.Buckets, st.ModTime(), st.Size(), true
}
