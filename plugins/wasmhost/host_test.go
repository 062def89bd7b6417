package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/abi"
)

func TestNewConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"memory", Config{MemoryPages: 65537}, "65536"},
		{"negative pool", Config{PoolSize: -1}, "negative"},
		{"timeout", Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: -1}}, "bad timeout"},
		{"point", Config{Timeouts: map[hooks.Point]time.Duration{hooks.Point(42): time.Second}}, "bad timeout"},
		{"dialect", Config{Dialect: "klingon"}, "unknown dialect"},
		{"cache dir", Config{CacheDir: "/dev/null/x"}, "compilation cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(context.Background(), tc.cfg)
			if err == nil {
				_ = h.Close(context.Background())
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "wasmhost: ") {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
	h := newHost(t, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: time.Minute}})
	if h.Timeout(hooks.PointMap) != time.Minute || h.Timeout(hooks.PointPrecommit) != 100*time.Millisecond ||
		h.Timeout(hooks.PointPostcommit) != time.Second || h.Timeout(hooks.PointReduce) != 5*time.Second {
		t.Errorf("timeouts %v", h.cfg.Timeouts)
	}
	if h.cfg.PoolSize != 2*runtime.GOMAXPROCS(0) || h.cfg.MemoryPages != abi.DefaultMemoryPages || h.Kind() != hooks.KindWASM {
		t.Errorf("defaults %+v", h.cfg)
	}
}

// TestNewConcurrently starts, uses and closes hosts at once. (The data race in wazero's
// start-up that New works around showed in cmd/cairn's parallel TestHookCall under -race.)
func TestNewConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		cfg := Config{}
		if i%2 == 1 {
			cfg.CacheDir = t.TempDir()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			h, err := New(context.Background(), cfg)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := h.Load(context.Background(), "fx", fixture(t, "hooks2")); err != nil {
				t.Error(err)
			}
			if err := h.Close(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
}

func TestInvalidModules(t *testing.T) {
	h := newHost(t, Config{})
	tooBig := append([]byte("\x00asm\x01\x00\x00\x00"), make([]byte, abi.MaxModuleBytes)...)
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"empty", nil, "not a WebAssembly module"},
		{"not wasm", []byte("#!/bin/sh\necho hi\n"), "not a WebAssembly module"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), "components are not supported"},
		{"too big", tooBig, "the limit is 16777216"},
		{"garbage after header", []byte("\x00asm\x01\x00\x00\x00\xff\xff"), "it does not compile"},
		{"no marker", fixture(t, "nomarker"), `it does not export "cairn_abi_v1" () -> ()`},
		{"bad alloc", fixture(t, "badalloc"), `it exports "cairn_alloc" as (i64) -> i32; ABI v1 wants (i32) -> i32`},
		{"env import", fixture(t, "envimport"), `it imports env.foo; only "cairn"`},
		{"bad wasi", fixture(t, "badwasi"), `it imports wasi_snapshot_preview1.no_such_call, which "wasi_snapshot_preview1" does not provide`},
		{"bad import signature", fixture(t, "badimportsig"), "it imports cairn.output as (i32) -> (); the host provides (i32, i32) -> ()"},
		{"no memory", fixture(t, "nomemory"), `it exports no memory named "memory"`},
		{"no entry point", fixture(t, "noentry"), "it exports no entry point"},
		{"command", fixture(t, "command"), "it exports _start"},
		{"init traps", fixture(t, "initfail"), "it cannot be instantiated: "},
		{"memory over cap", fixture(t, "bigmemory"), "it does not compile: "},
		{"global import", fixture(t, "globalimport"), "it cannot be instantiated: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for what, f := range map[string]func() error{
				"Inspect": func() error { _, err := h.Inspect(context.Background(), tc.wasm); return err },
				"Load":    func() error { _, err := h.Load(context.Background(), "m", tc.wasm); return err },
			} {
				err := f()
				var inv *hooks.InvalidModuleError
				if !errors.As(err, &inv) {
					t.Fatalf("%s: error %v (%T), want *hooks.InvalidModuleError", what, err, err)
				}
				if !strings.Contains(inv.Reason, tc.want) {
					t.Errorf("%s: reason %q, want %q", what, inv.Reason, tc.want)
				}
			}
			if h.HasModule("m") {
				t.Error("a refused module was installed")
			}
		})
	}
	h.compMu.Lock()
	defer h.compMu.Unlock()
	if len(h.compiled) != 0 {
		t.Errorf("%d compiled modules kept after refusals", len(h.compiled))
	}
}

func TestLoadInfo(t *testing.T) {
	h := newHost(t, Config{})
	wasm := fixture(t, "hooks")
	sum := sha256.Sum256(wasm)
	want := hooks.ModuleInfo{
		Name: "fx", Kind: hooks.KindWASM, SHA256: hex.EncodeToString(sum[:]), Size: len(wasm),
		Functions: []string{"accept", "badjson", "badout", "badreplace", "big", "clock", "echo", "fail", "grow",
			"growtrap", "hello", "keyempty", "keyhash", "links", "logspam", "loop", "reject", "replace", "spin",
			"status7", "trap", "values", "version"},
		WASI:    true,
		Imports: []string{"cairn.log", "cairn.output", "wasi_snapshot_preview1.clock_time_get", "wasi_snapshot_preview1.fd_write", "wasi_snapshot_preview1.random_get"},
	}
	info := load(t, h, "fx", "hooks")
	if !reflect.DeepEqual(info, want) {
		t.Errorf("Load info\n%+v\nwant\n%+v", info, want)
	}
	insp, err := h.Inspect(context.Background(), wasm)
	want.Name = ""
	if err != nil || !reflect.DeepEqual(insp, want) {
		t.Errorf("Inspect = %+v, %v", insp, err)
	}
	want.Name = "fx"
	if mods := h.Modules(); !reflect.DeepEqual(mods, []hooks.ModuleInfo{want}) {
		t.Errorf("Modules = %+v", mods)
	}
	// Inspecting the installed bytes must not close their shared compiled module.
	if st, out, err := h.Call(context.Background(), "fx", "version", hooks.PointMap, nil); err != nil || st != 0 || string(out) != "v1" {
		t.Errorf("call after Inspect: %v %q %v", st, out, err)
	}
}

func TestCall(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "fx", "hooks")
	for _, tc := range []struct {
		fun    string
		p      hooks.Point
		input  string
		status abi.Status
		out    string
		kind   hooks.CallErrorKind // -1: no error
		errMsg string
	}{
		{"accept", hooks.PointPrecommit, `{}`, 0, "", -1, ""},
		{"echo", hooks.PointMap, `{"x":"héllo"}`, 0, `{"x":"héllo"}`, -1, ""},
		{"echo", hooks.PointMap, "", 0, "", -1, ""},
		{"echo", hooks.PointMap, strings.Repeat("x", 200_000), 0, strings.Repeat("x", 200_000), -1, ""},
		{"reject", hooks.PointPrecommit, `{}`, 1, "rejected: no writes here", -1, ""},
		{"reject", hooks.PointMap, `{}`, 1, "rejected: no writes here", -1, ""},
		{"fail", hooks.PointPostcommit, `{}`, 2, "something broke", -1, ""},
		{"status7", hooks.PointPrecommit, `{}`, 0, "", hooks.Crashed, "unknown status 7"},
		{"trap", hooks.PointPrecommit, `{}`, 0, "", hooks.Crashed, "wasm error: unreachable"},
		{"big", hooks.PointMap, `{}`, 0, "", hooks.BadResult, "an output of 9437184 bytes is over the limit of 8388608"},
		{"badout", hooks.PointMap, `{}`, 0, "", hooks.Crashed, "ABI violation: cairn.output(0xfffffff0, 100) reads outside memory"},
		{"helper", hooks.PointMap, `{}`, 0, "", hooks.Unavailable, "no such function"},
		{"nope", hooks.PointMap, `{}`, 0, "", hooks.Unavailable, "no such function"},
		{"accept", hooks.Point(99), `{}`, 0, "", hooks.Unavailable, "unknown extension point"},
	} {
		t.Run(tc.fun, func(t *testing.T) {
			st, out, err := h.Call(context.Background(), "fx", tc.fun, tc.p, []byte(tc.input))
			if k := callKind(err); k != tc.kind {
				t.Fatalf("error %v (kind %v), want kind %v", err, k, tc.kind)
			}
			if err != nil {
				var ce *hooks.CallError
				errors.As(err, &ce)
				if ce.Module != "fx" || ce.Function != tc.fun || !strings.Contains(err.Error(), tc.errMsg) {
					t.Errorf("error %q (%s:%s), want %q", err, ce.Module, ce.Function, tc.errMsg)
				}
				return
			}
			if st != tc.status || string(out) != tc.out {
				t.Errorf("got %d %.40q, want %d %.40q", st, out, tc.status, tc.out)
			}
		})
	}
	if _, _, err := h.Call(context.Background(), "nope", "accept", hooks.PointMap, nil); callKind(err) != hooks.Unavailable || !errors.Is(err, hooks.ErrNoModule) {
		t.Errorf("unknown module: %v", err)
	}
	// The host stays healthy after the failures above.
	if st, out, err := h.Call(context.Background(), "fx", "version", hooks.PointMap, nil); err != nil || st != 0 || string(out) != "v1" {
		t.Errorf("after failures: %d %q %v", st, out, err)
	}
	s := h.Stats().Modules[0]
	want := map[hooks.CallErrorKind]int64{hooks.Crashed: 3, hooks.BadResult: 1, hooks.Failed: 2}
	if !reflect.DeepEqual(s.Failures, want) || s.Calls != 12 {
		t.Errorf("stats: calls %d failures %v, want 12 and %v", s.Calls, s.Failures, want)
	}
}

func TestTimeout(t *testing.T) {
	h := newHost(t, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointPrecommit: 50 * time.Millisecond}})
	load(t, h, "fx", "hooks")
	before := runtime.NumGoroutine()
	for i := range 3 {
		start := time.Now()
		_, _, err := h.Call(context.Background(), "fx", "loop", hooks.PointPrecommit, nil)
		took := time.Since(start)
		if callKind(err) != hooks.TimedOut || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d: %v, want a timeout", i, err)
		}
		if took < 50*time.Millisecond || took > 2*time.Second {
			t.Errorf("call %d stopped after %v, want about 50ms", i, took)
		}
	}
	// A caller's own cancellation is not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, _, err := h.Call(ctx, "fx", "loop", hooks.PointPrecommit, nil); callKind(err) != hooks.Unavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled call: %v", err)
	}
	if st, _, err := h.Call(context.Background(), "fx", "accept", hooks.PointPrecommit, nil); err != nil || st != 0 {
		t.Fatalf("after timeouts: %v", err)
	}
	s := h.Stats().Modules[0]
	if s.Live != 1 || s.Failures[hooks.TimedOut] != 3 {
		t.Errorf("stats %+v: want 1 live instance and 3 timeouts", s)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines, %d before the timeouts", n, before)
	}
}

// vmHWM returns the process's peak resident set, in bytes.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status on this system")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

func TestMemoryCap(t *testing.T) {
	const pages = 64 // 4 MiB
	h := newHost(t, Config{MemoryPages: pages, PoolSize: 2})
	load(t, h, "fx", "hooks")
	runtime.GC()
	start := vmHWM(t)
	for i := range 20 {
		st, out, err := h.Call(context.Background(), "fx", "grow", hooks.PointMap, nil)
		if err != nil || st != abi.StatusError || len(out) != 4 {
			t.Fatalf("grow %d: %d %q %v", i, st, out, err)
		}
		if got := binary.LittleEndian.Uint32(out); got != pages {
			t.Fatalf("memory grew to %d pages, want the cap of %d", got, pages)
		}
		if _, _, err := h.Call(context.Background(), "fx", "growtrap", hooks.PointMap, nil); callKind(err) != hooks.Crashed {
			t.Fatalf("growtrap %d: %v", i, err)
		}
	}
	// Instances at the cap after a failure are discarded, never reused.
	if s := h.Stats().Modules[0]; s.Created < 40 {
		t.Errorf("%d instances created for 40 failed calls at the cap", s.Created)
	}
	// Without the cap the guest would take 4 GiB; with it, a few instances of 4 MiB.
	if grew := vmHWM(t) - start; grew > 256<<20 {
		t.Errorf("peak RSS grew by %d MiB", grew>>20)
	}
	if st, out, err := h.Call(context.Background(), "fx", "version", hooks.PointMap, nil); err != nil || st != 0 || string(out) != "v1" {
		t.Errorf("after the cap: %d %q %v", st, out, err)
	}
}

func TestLogs(t *testing.T) {
	logger, records := newCapture()
	h := newHost(t, Config{Logger: logger})
	load(t, h, "fx", "hooks")
	line := bytes.Repeat([]byte("l"), 1000)
	if _, _, err := h.Call(context.Background(), "fx", "logspam", hooks.PointMap, line); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Call(context.Background(), "fx", "hello", hooks.PointMap, nil); err != nil {
		t.Fatal(err)
	}
	logged, capped, hello := 0, 0, 0
	for _, r := range records() {
		switch {
		case r.msg == "guest log capped":
			capped++
			if r.attrs["dropped_bytes"] != strconv.Itoa(100*1000-abi.MaxLogBytesPerCall) || r.attrs["module"] != "fx" {
				t.Errorf("cap record %+v", r)
			}
		case strings.HasPrefix(r.msg, "lll"):
			logged += len(r.msg)
			if r.attrs["module"] != "fx" || r.attrs["function"] != "logspam" || r.level != 0 {
				t.Errorf("log record %+v", r)
			}
		case r.msg == "hello from stdout":
			hello++
			if r.attrs["stream"] != "stdout" || r.attrs["function"] != "hello" {
				t.Errorf("stdout record %+v", r)
			}
		}
	}
	if logged != abi.MaxLogBytesPerCall || capped != 1 || hello != 1 {
		t.Errorf("logged %d bytes (want %d), %d cap records, %d stdout lines", logged, abi.MaxLogBytesPerCall, capped, hello)
	}
	if d := h.Stats().Modules[0].LogBytesDropped; d != 100*1000-abi.MaxLogBytesPerCall {
		t.Errorf("dropped %d", d)
	}
}

func TestKeyFunDeterminism(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "fx", "hooks")
	impl, err := h.Lookup("fx", "clock", hooks.PointKeyFun)
	if err != nil {
		t.Fatal(err)
	}
	kf := impl.(hooks.KeyFun)
	var first []byte
	for i := range 3 {
		got, err := kf.KeyHash(context.Background(), "", "b", "k")
		if err != nil {
			t.Fatal(err)
		}
		realtime, mono, errno := binary.LittleEndian.Uint64(got), binary.LittleEndian.Uint64(got[8:]), binary.LittleEndian.Uint32(got[16:])
		if realtime != 0 || mono != 0 || errno != 29 { // EIO
			t.Errorf("keyfun saw realtime %d, monotonic %d, random_get errno %d; want 0, 0, 29", realtime, mono, errno)
		}
		if i == 0 {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("call %d: %x, first %x", i, got, first)
		}
	}
	// The same function at another point sees the real clock and randomness.
	st, out, err := h.Call(context.Background(), "fx", "clock", hooks.PointMap, nil)
	if err != nil || st != 0 {
		t.Fatal(st, err)
	}
	realtime, errno := binary.LittleEndian.Uint64(out), binary.LittleEndian.Uint32(out[16:])
	if now := uint64(time.Now().UnixNano()); realtime < now-uint64(time.Minute) || realtime > now+uint64(time.Minute) || errno != 0 {
		t.Errorf("map call saw realtime %d (now %d), random_get errno %d", realtime, now, errno)
	}
}

func sampleObject() *core.Object {
	return &core.Object{Type: "default", Bucket: "b", Key: "k", VClock: []byte("clock"),
		Siblings: []core.Sibling{{Value: []byte("v"), ContentType: "text/plain", VTag: "t"}}}
}

func TestPoints(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "fx", "hooks")
	ctx := context.Background()
	look := func(fun string, p hooks.Point) any {
		t.Helper()
		impl, err := h.Lookup("fx", fun, p)
		if err != nil {
			t.Fatal(err)
		}
		return impl
	}
	obj := sampleObject()
	t.Run("precommit", func(t *testing.T) {
		for _, tc := range []struct {
			fun  string
			op   hooks.Op
			want hooks.Verdict
			kind hooks.CallErrorKind
		}{
			{"accept", hooks.OpPut, hooks.Verdict{}, -1},
			{"reject", hooks.OpPut, hooks.Verdict{Reject: true, Reason: "rejected: no writes here"}, -1},
			{"keyempty", hooks.OpPut, hooks.Verdict{}, -1},
			{"replace", hooks.OpPut, hooks.Verdict{Replace: &core.Object{Type: "default", Bucket: "b", Key: "k", VClock: []byte("clock"),
				Siblings: []core.Sibling{{Value: []byte("replaced"), ContentType: "text/plain",
					Meta: []core.MetaEntry{{Name: "By", Value: "hook"}}, Indexes: []core.IndexEntry{{Field: "n_int", Value: "7"}}}}}}, -1},
			{"replace", hooks.OpDelete, hooks.Verdict{}, -1},
			{"badreplace", hooks.OpPut, hooks.Verdict{}, hooks.BadResult},
			{"badjson", hooks.OpPut, hooks.Verdict{}, hooks.BadResult},
			{"values", hooks.OpPut, hooks.Verdict{}, hooks.BadResult},
			{"fail", hooks.OpPut, hooks.Verdict{}, hooks.Failed},
			{"trap", hooks.OpPut, hooks.Verdict{}, hooks.Crashed},
		} {
			v, err := look(tc.fun, hooks.PointPrecommit).(hooks.Precommit).Precommit(ctx, tc.op, obj)
			if k := callKind(err); k != tc.kind {
				t.Errorf("%s: error %v, want kind %v", tc.fun, err, tc.kind)
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%s %s: verdict %+v, want %+v", tc.fun, tc.op, v, tc.want)
			}
		}
		// The input is the commit input JSON.
		var in struct {
			Op     string          `json:"op"`
			Object json.RawMessage `json:"object"`
		}
		_, out, err := h.Call(ctx, "fx", "echo", hooks.PointPrecommit, h.codec.AppendCommitInput(nil, hooks.OpPut, obj))
		if err != nil || json.Unmarshal(out, &in) != nil || in.Op != "put" || !bytes.Contains(in.Object, []byte(`"X-Store-VTag":"t"`)) {
			t.Errorf("echoed input %s, %v", out, err)
		}
	})
	t.Run("postcommit", func(t *testing.T) {
		for fun, kind := range map[string]hooks.CallErrorKind{"accept": -1, "echo": -1, "fail": hooks.Failed, "reject": hooks.Failed} {
			err := look(fun, hooks.PointPostcommit).(hooks.Postcommit).Postcommit(ctx, hooks.OpDelete, obj)
			if k := callKind(err); k != kind {
				t.Errorf("%s: %v, want kind %v", fun, err, kind)
			}
		}
		err := look("fail", hooks.PointPostcommit).(hooks.Postcommit).Postcommit(ctx, hooks.OpPut, obj)
		if err == nil || err.Error() != "hook fx:fail failed: something broke" {
			t.Errorf("error text %q", err)
		}
	})
	t.Run("keyfun", func(t *testing.T) {
		kf := look("keyhash", hooks.PointKeyFun).(hooks.KeyFun)
		if got, err := kf.KeyHash(ctx, "t", "b", "k"); err != nil || string(got) != "0123456789abcdefghij" {
			t.Errorf("keyhash: %q %v", got, err)
		}
		for _, fun := range []string{"keyempty", "values"} { // 0 and 21 bytes
			if _, err := look(fun, hooks.PointKeyFun).(hooks.KeyFun).KeyHash(ctx, "t", "b", "k"); callKind(err) != hooks.BadResult {
				t.Errorf("%s: %v", fun, err)
			}
		}
		if got, err := look("echo", hooks.PointKeyFun).(hooks.KeyFun).KeyHash(ctx, "", "b", "k"); callKind(err) != hooks.BadResult {
			t.Errorf("echo as keyfun (input %q is over 20 bytes): %v", got, err)
		}
	})
	t.Run("linkfun", func(t *testing.T) {
		links, err := look("links", hooks.PointLinkFun).(hooks.LinkFun).Links(ctx, obj, "_", "_")
		if err != nil || !reflect.DeepEqual(links, []core.Link{{Bucket: "b", Key: "k", Tag: "t"}}) {
			t.Errorf("links: %+v %v", links, err)
		}
		if _, err := look("badjson", hooks.PointLinkFun).(hooks.LinkFun).Links(ctx, obj, "", ""); callKind(err) != hooks.BadResult {
			t.Errorf("badjson: %v", err)
		}
	})
	t.Run("map", func(t *testing.T) {
		vals, err := look("values", hooks.PointMap).(hooks.Map).Map(ctx, hooks.MapInput{NotFound: &hooks.Place{Bucket: "b", Key: "k"}})
		if err != nil || len(vals) != 3 || string(vals[2]) != `{"three":3}` {
			t.Errorf("map: %s %v", vals, err)
		}
		vals, err = look("echo", hooks.PointMap).(hooks.Map).Map(ctx, hooks.MapInput{Object: obj})
		if callKind(err) != hooks.BadResult { // the input is an object, not an array
			t.Errorf("echo as map: %s %v", vals, err)
		}
	})
	t.Run("reduce", func(t *testing.T) {
		r := look("echo", hooks.PointReduce).(hooks.Reduce)
		if vals, err := r.Reduce(ctx, []json.RawMessage{json.RawMessage(`1`)}, nil); callKind(err) != hooks.BadResult {
			t.Errorf("echo as reduce: %s %v", vals, err)
		}
		vals, err := look("values", hooks.PointReduce).(hooks.Reduce).Reduce(ctx, nil, json.RawMessage(`{}`))
		if err != nil || len(vals) != 3 || string(vals[0]) != `1` {
			t.Errorf("reduce: %s %v", vals, err)
		}
		if _, err := look("fail", hooks.PointReduce).(hooks.Reduce).Reduce(ctx, nil, nil); callKind(err) != hooks.Failed {
			t.Errorf("fail: %v", err)
		}
	})
}

func TestLookupErrors(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "fx", "hooks")
	for _, tc := range []struct {
		mod, fun string
		p        hooks.Point
		want     error
	}{
		{"nope", "accept", hooks.PointPrecommit, hooks.ErrNoModule},
		{"fx", "nope", hooks.PointPrecommit, hooks.ErrNoFunction},
		{"fx", "helper", hooks.PointPrecommit, hooks.ErrNoFunction},
		{"fx", "cairn_alloc", hooks.PointPrecommit, hooks.ErrNoFunction},
		{"fx", "accept", hooks.Point(17), hooks.ErrNoFunction},
	} {
		if _, err := h.Lookup(tc.mod, tc.fun, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("Lookup(%s, %s, %v) = %v, want %v", tc.mod, tc.fun, tc.p, err, tc.want)
		}
	}
	// Through the registry.
	reg := hooks.NewRegistry(h)
	if _, err := reg.Precommit(core.HookSpec{Mod: "wasm:fx", Fun: "accept"}); err != nil {
		t.Errorf("registry: %v", err)
	}
	if reg.Owner("fx") != hooks.KindWASM {
		t.Errorf("owner %q", reg.Owner("fx"))
	}
}

func TestPoolConcurrency(t *testing.T) {
	const size, workers, calls = 4, 64, 20
	h := newHost(t, Config{PoolSize: size, PoolWait: time.Minute})
	load(t, h, "fx", "hooks")
	var wg sync.WaitGroup
	var failures atomic.Int64
	var maxLive atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				if st, out, err := h.Call(context.Background(), "fx", "spin", hooks.PointMap, nil); err != nil || st != 0 || string(out) != "v1" {
					failures.Add(1)
				}
				if l := h.Stats().Modules[0].Live; l > maxLive.Load() {
					maxLive.Store(l)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Errorf("%d calls failed", n)
	}
	s := h.Stats().Modules[0]
	if s.MaxLive > size || maxLive.Load() > size || s.Live > size {
		t.Errorf("pool of %d went to %d live (sampled %d)", size, s.MaxLive, maxLive.Load())
	}
	if s.Calls != workers*calls || len(s.Failures) != 0 || s.Created > size {
		t.Errorf("stats %+v", s)
	}
}

func TestPoolWait(t *testing.T) {
	h := newHost(t, Config{PoolSize: 1, PoolWait: 30 * time.Millisecond,
		Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: 2 * time.Second}})
	load(t, h, "fx", "hooks")
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _, err := h.Call(ctx, "fx", "loop", hooks.PointMap, nil)
		done <- err
	}()
	// Wait until the loop holds the only instance.
	for h.Stats().Modules[0].Idle != 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	_, _, err := h.Call(context.Background(), "fx", "accept", hooks.PointMap, nil)
	if callKind(err) != hooks.Unavailable || time.Since(start) < 30*time.Millisecond {
		t.Errorf("busy pool: %v after %v", err, time.Since(start))
	}
	// A keyfun call needs the other flavour of instance: it waits for the same slot.
	if _, _, err := h.Call(context.Background(), "fx", "keyhash", hooks.PointKeyFun, nil); callKind(err) != hooks.Unavailable {
		t.Errorf("busy pool, keyfun: %v", err)
	}
	cancel()
	if err := <-done; callKind(err) != hooks.Unavailable {
		t.Errorf("canceled loop: %v", err)
	}
	// Now the slot is free (the canceled call's instance was discarded).
	if _, out, err := h.Call(context.Background(), "fx", "keyhash", hooks.PointKeyFun, nil); err != nil || len(out) != 20 {
		t.Errorf("keyfun: %q %v", out, err)
	}
	// The pool is full with an idle keyfun instance: a normal call evicts it.
	if _, _, err := h.Call(context.Background(), "fx", "accept", hooks.PointMap, nil); err != nil {
		t.Errorf("accept: %v", err)
	}
	if s := h.Stats().Modules[0]; s.Live != 1 || s.Idle != 1 || s.MaxLive != 1 || s.Created != 3 {
		t.Errorf("stats %+v, want 1 live, 1 idle, max 1, 3 created", s)
	}
}

func TestReplaceWhileCalling(t *testing.T) {
	h := newHost(t, Config{PoolSize: 3, PoolWait: time.Minute,
		Timeouts: map[hooks.Point]time.Duration{hooks.PointLinkFun: time.Minute, hooks.PointMap: time.Minute}})
	load(t, h, "fx", "hooks")
	ctx := context.Background()
	impl, err := h.Lookup("fx", "spin", hooks.PointLinkFun)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, failures atomic.Int64
	var mu sync.Mutex // guards seen
	seen := map[string]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, out, err := h.Call(ctx, "fx", "spin", hooks.PointMap, nil)
				calls.Add(1)
				if err != nil || st != 0 {
					failures.Add(1)
					t.Errorf("call during replacement: %d %v", st, err)
					return
				}
				mu.Lock()
				seen[string(out)]++
				mu.Unlock()
				// The implementation looked up before the swaps follows them too.
				if _, err := impl.(hooks.LinkFun).Links(ctx, sampleObject(), "_", "_"); callKind(err) != hooks.BadResult {
					t.Errorf("linkfun during replacement: %v", err)
					return
				}
			}
		}()
	}
	for i := range 20 {
		file := "hooks" // first the same bytes again, last hooks2
		if i%2 == 1 {
			file = "hooks2"
		}
		load(t, h, "fx", file)
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if failures.Load() > 0 || calls.Load() < 20 {
		t.Fatalf("%d of %d calls failed", failures.Load(), calls.Load())
	}
	if seen["v1"] == 0 || seen["v2"] == 0 {
		t.Errorf("outputs %v: want both versions", seen)
	}
	// Every replaced version is drained and released: one compiled module left, and
	// only the current version's instances alive.
	h.compMu.Lock()
	n := len(h.compiled)
	h.compMu.Unlock()
	h.mu.RLock()
	unfreed := h.unfreed
	h.mu.RUnlock()
	if n != 1 || unfreed != 1 {
		t.Errorf("%d compiled modules and %d versions left, want 1 and 1", n, unfreed)
	}
	s := h.Stats().Modules[0]
	if s.Live != s.Idle || s.Live > 3 {
		t.Errorf("stats after the swaps %+v", s)
	}
	if _, out, err := h.Call(ctx, "fx", "version", hooks.PointMap, nil); err != nil || string(out) != "v2" {
		t.Errorf("last version: %q %v", out, err)
	}
}

func TestRemove(t *testing.T) {
	h := newHost(t, Config{})
	ctx := context.Background()
	load(t, h, "a", "hooks")
	load(t, h, "b", "hooks") // same bytes: one shared compiled module
	impl, err := h.Lookup("a", "accept", hooks.PointPrecommit)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if h.HasModule("a") || !h.HasModule("b") {
		t.Error("HasModule after Remove")
	}
	if _, err := impl.(hooks.Precommit).Precommit(ctx, hooks.OpPut, sampleObject()); !errors.Is(err, hooks.ErrNoModule) || callKind(err) != hooks.Unavailable {
		t.Errorf("call of a removed module: %v", err)
	}
	if _, err := h.Lookup("a", "accept", hooks.PointPrecommit); !errors.Is(err, hooks.ErrNoModule) {
		t.Errorf("Lookup of a removed module: %v", err)
	}
	if err := h.Remove(ctx, "a"); !errors.Is(err, hooks.ErrNoModule) {
		t.Errorf("second Remove: %v", err)
	}
	// Removing a must not close the compiled module b still uses (wazero#2336).
	for range 3 {
		if st, out, err := h.Call(ctx, "b", "version", hooks.PointMap, nil); err != nil || st != 0 || string(out) != "v1" {
			t.Fatalf("b after removing a: %d %q %v", st, out, err)
		}
		if _, err := h.Inspect(ctx, fixture(t, "hooks")); err != nil {
			t.Fatal(err)
		}
	}
	if mods := h.Modules(); len(mods) != 1 || mods[0].Name != "b" {
		t.Errorf("Modules %+v", mods)
	}
	if st := h.Stats(); len(st.Modules) != 1 || st.Modules[0].Name != "b" {
		t.Errorf("Stats %+v", st)
	}
}

func TestClose(t *testing.T) {
	h, err := New(context.Background(), Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	load(t, h, "fx", "hooks")
	done := make(chan error, 1)
	go func() {
		_, _, err := h.Call(context.Background(), "fx", "loop", hooks.PointMap, nil)
		done <- err
	}()
	for h.Stats().Modules[0].Idle != 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a call stuck: %v", err)
	}
	select {
	case err := <-done:
		if callKind(err) != hooks.Crashed {
			t.Errorf("the stuck call ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the runtime did not stop the stuck call")
	}
	if _, _, err := h.Call(context.Background(), "fx", "accept", hooks.PointMap, nil); !errors.Is(err, errClosed) {
		t.Errorf("call after Close: %v", err)
	}
	if _, err := h.Load(context.Background(), "fx", fixture(t, "hooks")); !errors.Is(err, errClosed) {
		t.Errorf("Load after Close: %v", err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestRecycleAndCacheDir(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, Config{RecycleAfter: 2, CacheDir: dir})
	load(t, h, "fx", "hooks")
	for range 6 {
		if _, _, err := h.Call(context.Background(), "fx", "accept", hooks.PointPrecommit, nil); err != nil {
			t.Fatal(err)
		}
	}
	if s := h.Stats().Modules[0]; s.Created != 3 || s.Live != 0 {
		t.Errorf("recycling after 2 calls: %+v", s)
	}
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Error("the compilation cache directory is empty")
	}
}
