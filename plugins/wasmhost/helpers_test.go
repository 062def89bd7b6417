package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// fixture returns the bytes of testdata/name.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newHost returns a Host closed at the end of the test.
func newHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	h, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// load installs testdata/file.wasm as name.
func load(t testing.TB, h *Host, name, file string) hooks.ModuleInfo {
	t.Helper()
	info, err := h.Load(context.Background(), name, fixture(t, file))
	if err != nil {
		t.Fatalf("Load %s: %v", file, err)
	}
	return info
}

// callKind returns the kind of a *hooks.CallError, or -1 for another error.
func callKind(err error) hooks.CallErrorKind {
	var ce *hooks.CallError
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return -1
}

// logRecord is one captured log line.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// captureHandler is a slog.Handler that keeps records.
type captureHandler struct {
	mu      *sync.Mutex // guards records
	records *[]logRecord
	attrs   []slog.Attr
}

func newCapture() (*slog.Logger, func() []logRecord) {
	h := &captureHandler{mu: &sync.Mutex{}, records: &[]logRecord{}}
	return slog.New(h), func() []logRecord {
		h.mu.Lock()
		defer h.mu.Unlock()
		return append([]logRecord(nil), *h.records...)
	}
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *captureHandler) WithGroup(string) slog.Handler { return h }

// TestFixturesUpToDate rebuilds every WAT fixture with wat2wasm, when it is installed,
// and compares the result with the committed .wasm.
func TestFixturesUpToDate(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("wat2wasm (wabt) is not installed and CAIRN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip("wat2wasm (wabt) is not installed; the committed .wasm fixtures are used as they are")
	}
	wats, _ := filepath.Glob(filepath.Join("testdata", "*.wat"))
	if len(wats) == 0 {
		t.Fatal("no fixtures")
	}
	dir := t.TempDir()
	for _, wat := range wats {
		base := strings.TrimSuffix(filepath.Base(wat), ".wat")
		out := filepath.Join(dir, base+".wasm")
		if msg, err := exec.Command("wat2wasm", wat, "-o", out).CombinedOutput(); err != nil {
			t.Errorf("wat2wasm %s: %v\n%s", wat, err, msg)
			continue
		}
		got, _ := os.ReadFile(out)
		want, err := os.ReadFile(strings.TrimSuffix(wat, ".wat") + ".wasm")
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s.wasm is not the build of %s: run (cd plugins/wasmhost/testdata && wat2wasm %s.wat -o %s.wasm)",
				base, filepath.Base(wat), base, base)
		}
	}
}

// TestDocExample checks that docs/abi.md shows testdata/maxsize.wat verbatim.
func TestDocExample(t *testing.T) {
	wat, err := os.ReadFile(filepath.Join("testdata", "maxsize.wat"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "abi.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, wat) {
		t.Error("docs/abi.md does not contain plugins/wasmhost/testdata/maxsize.wat verbatim; copy it into the example")
	}
}
