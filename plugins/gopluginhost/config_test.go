package gopluginhost

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

func TestFromDir(t *testing.T) {
	const sumA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const sumB = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	type file struct {
		name string
		mode os.FileMode
		body string
	}
	exe := func(name string) file { return file{name, 0o755, "x"} }
	sums := func(body string) file { return file{SumsFile, 0o644, body} }
	for _, tt := range []struct {
		name   string
		files  []file
		want   map[string]string // name -> sha256
		errSub string
	}{
		{"empty", nil, nil, ""},
		{"no plugins, no sums", []file{{"README", 0o644, "hi"}}, nil, ""},
		{"text and binary mode", []file{exe("a"), exe("b.v2"), sums(sumA + "  a\n" + strings.ToLower(sumB) + " *b.v2\n")},
			map[string]string{"a": sumA, "b.v2": strings.ToLower(sumB)}, ""},
		{"upper-case hex, comments, blank lines, CRLF, other files", []file{exe("a"), {"notes.txt", 0o644, ""},
			sums("# sums\n\n" + sumB + "  a\r\n" + sumA + "  gone\n" + `\` + sumA + `  we\\ird` + "\n")},
			map[string]string{"a": strings.ToLower(sumB)}, ""},
		{"dotfiles and directories skipped", []file{exe(".hidden"), {"sub/", 0o755, ""}, exe("a"), sums(sumA + "  a\n")},
			map[string]string{"a": sumA}, ""},
		{"no sums file", []file{exe("a")}, nil, "a: no SHA256SUMS"},
		{"no line", []file{exe("a"), exe("b"), sums(sumA + "  a\n")}, nil, "b has no line in"},
		{"bad name", []file{exe("-x"), sums(sumA + "  -x\n")}, nil, `"-x" is not a valid plugin name`},
		{"malformed line", []file{exe("a"), sums(sumA + " a\n")}, nil, "line 1: want"},
		{"bad hex", []file{exe("a"), sums(strings.Repeat("z", 64) + "  a\n")}, nil, "line 1:"},
		{"conflicting lines", []file{exe("a"), sums(sumA + "  a\n" + sumB + "  a\n")}, nil, "line 2: a second"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, f.name)
				if strings.HasSuffix(f.name, "/") {
					if err := os.Mkdir(p, f.mode); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FromDir(dir)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want %q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotMap := map[string]string{}
			for _, pc := range got {
				gotMap[pc.Name] = pc.SHA256
				if !reflect.DeepEqual(pc.Command, []string{filepath.Join(dir, pc.Name)}) {
					t.Errorf("%s: command %q", pc.Name, pc.Command)
				}
			}
			if len(tt.want) == 0 && len(got) == 0 {
				return
			}
			if !reflect.DeepEqual(gotMap, tt.want) {
				t.Fatalf("got %v, want %v", gotMap, tt.want)
			}
		})
	}
	if _, err := FromDir(filepath.Join(t.TempDir(), "nonesuch")); err == nil {
		t.Error("a missing directory is no error")
	}
}

func TestFromDirRuns(t *testing.T) {
	dir := t.TempDir()
	path, sum := testPlugin(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(sum+" *audit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, testConfig(nil, plugins...))
	if err := accept(t, h, "audit"); err != nil {
		t.Fatal(err)
	}
}

func TestLookup(t *testing.T) {
	h := newHost(t, testConfig(nil,
		tp(t, "all"),
		tp(t, "some", "TP_POINTS=precommit,map"),
		tp(t, "named", "TP_POINTS=precommit", "TP_FUNCTIONS=check:precommit;sum:reduce;any"),
	))
	if h.Kind() != hooks.KindPlugin || !h.HasModule("some") || h.HasModule("nonesuch") {
		t.Fatal("Kind or HasModule")
	}
	if got := h.Names(); !reflect.DeepEqual(got, []string{"all", "named", "some"}) {
		t.Fatalf("Names = %v", got)
	}
	for _, tt := range []struct {
		mod, fun string
		p        hooks.Point
		err      error
		errSub   string
	}{
		{"nonesuch", "f", hooks.PointPrecommit, hooks.ErrNoModule, "nonesuch"},
		{"all", "anything", hooks.PointKeyFun, nil, ""},
		{"all", "", hooks.PointKeyFun, hooks.ErrNoFunction, "names no function"},
		{"all", "f", hooks.Point(42), hooks.ErrNoFunction, "unknown extension point"},
		{"some", "anything", hooks.PointMap, nil, ""},
		{"some", "anything", hooks.PointReduce, hooks.ErrNoFunction, `plugin "some" does not serve reduce (it serves: precommit, map)`},
		{"named", "check", hooks.PointPrecommit, nil, ""},
		{"named", "sum", hooks.PointReduce, nil, ""},
		{"named", "any", hooks.PointPrecommit, nil, ""}, // no points listed: the plugin's
		{"named", "sum", hooks.PointPrecommit, hooks.ErrNoFunction, `function "sum" of plugin "named" does not serve precommit`},
		{"named", "other", hooks.PointPrecommit, hooks.ErrNoFunction, `has no function "other" (its precommit functions: check, any)`},
		{"named", "any", hooks.PointMap, hooks.ErrNoFunction, "does not serve map"},
	} {
		impl, err := h.Lookup(tt.mod, tt.fun, tt.p)
		if tt.err == nil {
			if err != nil || impl == nil {
				t.Errorf("%s:%s at %s: %v", tt.mod, tt.fun, tt.p, err)
			}
			continue
		}
		if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.errSub) {
			t.Errorf("%s:%s at %s: err = %v, want %v containing %q", tt.mod, tt.fun, tt.p, err, tt.err, tt.errSub)
		}
	}
	if st := statsOf(t, h, "named"); st.State != StateUp {
		t.Errorf("named is %s, want up", st.State)
	}
	// Through a registry, as the server resolves hooks.
	reg := hooks.NewRegistry(h)
	if _, err := reg.Precommit(core.HookSpec{Mod: "plugin:named", Fun: "check"}); err != nil {
		t.Errorf("registry: %v", err)
	}
	if _, err := reg.Reduce(core.HookSpec{Mod: "named", Fun: "check"}); !errors.Is(err, hooks.ErrNoFunction) {
		t.Errorf("registry: %v", err)
	}
}

func TestABIMismatch(t *testing.T) {
	_, err := New(context.Background(), testConfig(nil, tp(t, "tp", "TP_ABI=2")))
	if err == nil || !strings.Contains(err.Error(), "ABI version 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestObjectRoundTrip(t *testing.T) {
	obj := sampleObject()
	obj.Siblings = append(obj.Siblings, core.Sibling{Deleted: true, VTag: "vt2", LastModified: time.UnixMicro(5).UTC()},
		core.Sibling{Value: []byte("x"), ContentType: "text/plain"})
	got := fromPBObject(toPBObject(obj))
	if !reflect.DeepEqual(got, obj) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, obj)
	}
	if toPBObject(nil) != nil || fromPBObject(nil) != nil {
		t.Error("nil objects")
	}
	// Strings that are not UTF-8 fit the protobuf string fields.
	bad := &core.Object{Siblings: []core.Sibling{{ContentType: "text/\xff"}}}
	if ct := toPBObject(bad).Contents[0].ContentType; ct != "text/\uFFFD" {
		t.Errorf("content type %q", ct)
	}
}

func TestReplacementChecks(t *testing.T) {
	obj := sampleObject()
	content := func(c *hookspb.Content) *hookspb.Object { return &hookspb.Object{Contents: []*hookspb.Content{c}} }
	pair := func(k, v string) []*hookspb.Pair { return []*hookspb.Pair{{Key: []byte(k), Value: []byte(v)}} }
	for _, tt := range []struct {
		name   string
		rep    *hookspb.Object
		errSub string
	}{
		{"nil", nil, "no contents"},
		{"nil content", &hookspb.Object{Contents: []*hookspb.Content{nil}}, "no contents"},
		{"content type", content(&hookspb.Content{ContentType: "text"}), "not a media type"},
		{"content type control", content(&hookspb.Content{ContentType: "text/plain\r\nX: y"}), "control characters"},
		{"charset", content(&hookspb.Content{Charset: "a\nb"}), "control characters"},
		{"encoding", content(&hookspb.Content{ContentEncoding: "\x00"}), "control characters"},
		{"meta name", content(&hookspb.Content{Usermeta: pair("a b", "v")}), "not a valid header name"},
		{"meta value", content(&hookspb.Content{Usermeta: pair("a", "v\n")}), "control characters"},
		{"index suffix", content(&hookspb.Content{Indexes: pair("foo", "v")}), "end in _bin or _int"},
		{"index token", content(&hookspb.Content{Indexes: pair("a b_bin", "v")}), "not a valid header name"},
		{"index int", content(&hookspb.Content{Indexes: pair("n_int", "1.5")}), "not an integer"},
		{"index value", content(&hookspb.Content{Indexes: pair("n_bin", "a\rb")}), "control characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := replacement(obj, tt.rep); err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("err = %v, want %q", err, tt.errSub)
			}
		})
	}
	// Index entries are lower-cased, canonical, sorted, without duplicates.
	rep := content(&hookspb.Content{Value: []byte("v"), Indexes: []*hookspb.Pair{
		{Key: []byte("Z_BIN"), Value: []byte("b")}, {Key: []byte("a_int"), Value: []byte("-007")},
		{Key: []byte("z_bin"), Value: []byte("b")}, {Key: []byte("z_bin"), Value: []byte("a")}}})
	got, err := replacement(obj, rep)
	want := []core.IndexEntry{{Field: "a_int", Value: "-7"}, {Field: "z_bin", Value: "a"}, {Field: "z_bin", Value: "b"}}
	if err != nil || !reflect.DeepEqual(got.Siblings[0].Indexes, want) || got.Key != obj.Key || string(got.VClock) != string(obj.VClock) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestLineWriter(t *testing.T) {
	logger, logs := newCapture()
	w := newLineWriter(logger.With("plugin", "p"))
	for _, chunk := range []string{"one\ntw", "o\n", `{"@level":"warn","@message":"json msg","@module":"m","k":1,"@timestamp":"x"}` + "\n",
		"[ERROR] marked\n", "\n", "plain\r\n", "panic: oh no\n", "\ngoroutine 1 [running]:\n", "after"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	long := strings.Repeat("x", maxLogLine+10)
	w2 := newLineWriter(logger)
	_, _ = w2.Write([]byte(long[:100]))
	_, _ = w2.Write([]byte(long[100:] + "\n"))
	type rec struct {
		msg   string
		level slog.Level
	}
	var got []rec
	logs.mu.Lock()
	for _, r := range logs.records {
		got = append(got, rec{r.msg, r.level})
	}
	jsonAttrs := logs.records[2].attrs
	logs.mu.Unlock()
	want := []rec{
		{"one", slog.LevelInfo}, {"two", slog.LevelInfo}, {"json msg", slog.LevelWarn}, {"[ERROR] marked", slog.LevelError},
		{"plain", slog.LevelInfo}, {"panic: oh no", slog.LevelError}, {"goroutine 1 [running]:", slog.LevelError},
		{"after", slog.LevelError}, {long[:maxLogLine], slog.LevelInfo}, {long[maxLogLine:], slog.LevelInfo},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if jsonAttrs["plugin"] != "p" || jsonAttrs["module"] != "m" || jsonAttrs["k"] != "1" || jsonAttrs["timestamp"] != "" {
		t.Errorf("JSON entry attrs: %v", jsonAttrs)
	}
}

func TestHCLogger(t *testing.T) {
	logger, logs := newCapture()
	var status string
	l := newHCLogger(logger, "myplugin", func(s string) { status = s })
	if l.GetLevel() != hclog.Trace || !l.IsTrace() {
		t.Errorf("level %v", l.GetLevel())
	}
	// go-plugin's stderr reader: turned off, so lines are not parsed and logged twice.
	if named := l.Named("myplugin"); named.GetLevel() != hclog.Off || named.IsError() {
		t.Error("the executable's logger is not off")
	}
	l.Named("stdio").With("a", 1).Warn("stdio trouble", "b", 2)
	l.Error(msgProcessExited, "plugin", "/x/myplugin", "id", 7, "error", "signal: killed")
	if status != "signal: killed" {
		t.Errorf("exit status %q", status)
	}
	l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}).Print("std line")
	recs := logs.find("stdio trouble")
	if len(recs) != 1 || recs[0].level != slog.LevelWarn || recs[0].attrs["logger"] != "stdio" || recs[0].attrs["a"] != "1" || recs[0].attrs["b"] != "2" {
		t.Errorf("named: %+v", recs)
	}
	if recs := logs.find(msgProcessExited); len(recs) != 1 || recs[0].level != slog.LevelDebug {
		t.Errorf("exit: %+v", recs)
	}
	if recs := logs.find("std line"); len(recs) != 1 || recs[0].level != slog.LevelWarn {
		t.Errorf("standard logger: %+v", recs)
	}
}

func TestBackoff(t *testing.T) {
	base, ceiling := 100*time.Millisecond, 10*time.Second
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000}
	for n, w := range want {
		if got := backoff(base, ceiling, n); got != w*time.Millisecond {
			t.Errorf("backoff(%d) = %s, want %s", n, got, w*time.Millisecond)
		}
	}
	if got := backoff(base, ceiling, 1000); got != ceiling {
		t.Errorf("backoff(1000) = %s", got)
	}
}
