// Command changelog is an example Cairn process plugin: a postcommit hook, "append",
// that appends every committed write to a local JSON-lines change log, one line per
// put or delete:
//
//	{"time":"2026-11-22T10:00:00.123Z","op":"put","type":"default","bucket":"users","key":"alice","vtag":"3kQ…","content_type":"application/json","size":17}
//
// The log's path is CHANGELOG_PATH (default changelog.jsonl in the working directory);
// CHANGELOG_SYNC=1 syncs the file after every line. Bucket properties name it
// {"postcommit": [{"mod": "changelog", "fun": "append"}]} when the plugin is configured
// under the name changelog.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func main() {
	path := os.Getenv("CHANGELOG_PATH")
	if path == "" {
		path = "changelog.jsonl"
	}
	l, err := openLog(path, os.Getenv("CHANGELOG_SYNC") == "1")
	if err != nil {
		fmt.Fprintln(os.Stderr, "changelog:", err)
		os.Exit(1)
	}
	defer l.close()
	m := goplugin.NewMux()
	m.Postcommit("append", l.append)
	goplugin.Serve(m)
}

// changeLog is an open change log.
type changeLog struct {
	sync bool

	mu  sync.Mutex // guards f and buf: one line is written at a time
	f   *os.File
	buf []byte
}

func openLog(path string, sync bool) (*changeLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the change log: %w", err)
	}
	return &changeLog{f: f, sync: sync}, nil
}

func (l *changeLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.f.Close()
}

// entry is one line of the log.
type entry struct {
	Time        time.Time `json:"time"`
	Op          string    `json:"op"`
	Type        string    `json:"type"`
	Bucket      string    `json:"bucket"`
	Key         string    `json:"key"`
	VTag        string    `json:"vtag,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	Size        int       `json:"size"`
	Siblings    int       `json:"siblings,omitempty"`
}

// append writes one line for a committed write.
func (l *changeLog) append(_ context.Context, op goplugin.Op, obj *goplugin.Object) error {
	e := entry{Time: time.Now().UTC(), Op: string(op), Type: obj.BucketType, Bucket: obj.Bucket, Key: obj.Key}
	if n := len(obj.Contents); n > 0 {
		c := obj.Contents[0]
		e.VTag, e.ContentType, e.Size = c.VTag, c.ContentType, len(c.Value)
		if n > 1 {
			e.Siblings = n
		}
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode the entry: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(append(l.buf[:0], line...), '\n')
	if _, err := l.f.Write(l.buf); err != nil {
		return fmt.Errorf("write the change log: %w", err)
	}
	if l.sync {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sync the change log: %w", err)
		}
	}
	return nil
}
