package jsvm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// newRuntime starts a Runtime for a test and closes it at the end. Timeouts are
// generous unless cfg sets them: the race detector slows the engine down a lot.
func newRuntime(t testing.TB, cfg Config) *Runtime {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.HookTimeout == 0 {
		cfg.HookTimeout = 20 * time.Second
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = 20 * time.Second
	}
	if cfg.PoolWait == 0 {
		cfg.PoolWait = 60 * time.Second
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

// sourceDir writes files into a new directory and returns it.
func sourceDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, code := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// object returns a stored-looking object whose one value is data.
func object(bucket, key, contentType, data string) *core.Object {
	return &core.Object{
		Type: core.DefaultType, Bucket: bucket, Key: key, VClock: []byte("clock"),
		Siblings: []core.Sibling{{
			Value: []byte(data), ContentType: contentType, VTag: "vt1",
			LastModified: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
			Meta:         []core.MetaEntry{{Name: "Color", Value: "blue"}},
			Indexes:      []core.IndexEntry{{Field: "age_int", Value: "42"}},
		}},
	}
}

func namedMap(t testing.TB, r *Runtime, name string) hooks.Map {
	t.Helper()
	f, err := r.Lookup("", name, hooks.PointMap)
	if err != nil {
		t.Fatal(err)
	}
	return f.(hooks.Map)
}

func namedReduce(t testing.TB, r *Runtime, name string) hooks.Reduce {
	t.Helper()
	f, err := r.Lookup("", name, hooks.PointReduce)
	if err != nil {
		t.Fatal(err)
	}
	return f.(hooks.Reduce)
}

func sourceMap(t testing.TB, r *Runtime, src string) hooks.Map {
	t.Helper()
	f, err := r.FromSource(context.Background(), src, hooks.PointMap)
	if err != nil {
		t.Fatal(err)
	}
	return f.(hooks.Map)
}

func sourceReduce(t testing.TB, r *Runtime, src string) hooks.Reduce {
	t.Helper()
	f, err := r.FromSource(context.Background(), src, hooks.PointReduce)
	if err != nil {
		t.Fatal(err)
	}
	return f.(hooks.Reduce)
}

// rawList parses a JSON array into its elements.
func rawList(t testing.TB, s string) []json.RawMessage {
	t.Helper()
	if s == "" {
		return nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return l
}

// joined writes values as one JSON array, compacted.
func joined(t testing.TB, vals []json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := json.Compact(&b, v); err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// callErr asserts that err is a *hooks.CallError of kind whose text contains want.
func callErr(t testing.TB, err error, kind hooks.CallErrorKind, want string) *hooks.CallError {
	t.Helper()
	var ce *hooks.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *hooks.CallError", err, err)
	}
	if ce.Kind != kind || !strings.Contains(ce.Error(), want) {
		t.Fatalf("error %q (kind %v), want kind %v containing %q", ce.Error(), ce.Kind, kind, want)
	}
	return ce
}

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }
