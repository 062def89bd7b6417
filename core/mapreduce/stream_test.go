package mapreduce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// streamOpts configure a fake stream.
type streamOpts struct {
	// workers is how many answers the stream computes at once (0 or 1: one at a time,
	// on the stream's own goroutine).
	workers int
	// buf is how many inputs the stream takes before Send blocks (0: 16).
	buf int
	// delay bounds a random pause before one answer in eight (the others yield the
	// processor), so that answers computed at once finish out of order.
	delay time.Duration
	// dieAt, when > 0, makes the stream crash when it reads its dieAt-th input: the
	// inputs before it are answered, Recv then fails and Send returns io.EOF.
	dieAt int
	// sendEOFAt, when > 0, makes the dieAt-th Send fail with io.EOF: the stream
	// answers the inputs before it, then Recv fails with the crash.
	sendEOFAt int
	// shortAt, when > 0, makes the stream end (io.EOF) when it reads its shortAt-th
	// input, unanswered.
	shortAt int
	// extra makes the stream answer one input more than it was sent.
	extra bool
	// stuck makes the stream never answer and ignore its context: only Close ends it.
	stuck bool
	// panicRecv makes Recv panic.
	panicRecv bool
	// openErr is OpenMapStream's error.
	openErr error
}

// errCrash is a fake stream's death.
var errCrash = &hooks.CallError{Kind: hooks.Crashed, Module: "fake", Function: "stream", Err: errors.New("plugin exited")}

// errStreamClosed is the error of a fake stream's calls after Close.
var errStreamClosed = errors.New("fake: the stream is closed")

// fakeStreamer is a map function f that also streams: Map calls f, and each stream runs
// f over its inputs on goroutines of its own and answers in input order. It records how
// many streams were opened and closed, and the breaches of the hooks.MapStream contract
// it sees.
type fakeStreamer struct {
	f    fakeMap
	opts streamOpts
	// onRecv, when set (before the streamer is used), runs at the start of every Recv.
	onRecv func()

	opened, closed atomic.Int64

	mu     sync.Mutex // guards faults
	faults []string
}

func newStreamer(f fakeMap, o streamOpts) *fakeStreamer { return &fakeStreamer{f: f, opts: o} }

func (fs *fakeStreamer) Map(ctx context.Context, in hooks.MapInput) ([]json.RawMessage, error) {
	return fs.f(ctx, in)
}

func (fs *fakeStreamer) fault(msg string) {
	fs.mu.Lock()
	fs.faults = append(fs.faults, msg)
	fs.mu.Unlock()
}

func (fs *fakeStreamer) takeFaults() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.faults
	fs.faults = nil
	return f
}

func (fs *fakeStreamer) OpenMapStream(ctx context.Context) (hooks.MapStream, error) {
	if fs.opts.openErr != nil {
		return nil, fs.opts.openErr
	}
	buf := fs.opts.buf
	if buf <= 0 {
		buf = 16
	}
	s := &fakeStream{fs: fs, ctx: ctx, in: make(chan hooks.MapInput, buf), answers: make(chan *answer, buf),
		done: make(chan struct{}), dead: make(chan struct{})}
	fs.opened.Add(1)
	s.wg.Add(1)
	go s.run()
	if !fs.opts.stuck {
		context.AfterFunc(ctx, s.Close)
	}
	return s, nil
}

// answer is the outputs of one input of a fake stream, ready when ready is closed.
type answer struct {
	ready chan struct{}
	outs  []json.RawMessage
	err   error
}

// fakeStream is a stream of a fakeStreamer. Its goroutines end when it is closed (or
// its context ends); Close waits for them.
type fakeStream struct {
	fs      *fakeStreamer
	ctx     context.Context
	in      chan hooks.MapInput
	answers chan *answer  // in input order; closed when the stream ends, end then says why
	end     error         // written before answers is closed
	done    chan struct{} // closed by Close
	dead    chan struct{} // closed when the stream dies
	wg      sync.WaitGroup
	once    sync.Once

	sending, receiving atomic.Int32

	mu         sync.Mutex // guards sendClosed, killed, nsent, arg
	sendClosed bool
	killed     error
	nsent      int
	arg        json.RawMessage
}

// run reads the inputs and queues their answers in order.
func (s *fakeStream) run() {
	defer s.wg.Done()
	o := &s.fs.opts
	stop := func(err error) {
		s.end = err
		close(s.answers)
	}
	var sem chan struct{}
	if o.workers > 1 {
		sem = make(chan struct{}, o.workers)
	}
	n := 0
	for {
		var mi hooks.MapInput
		var ok bool
		select {
		case mi, ok = <-s.in:
		case <-s.done:
			stop(errStreamClosed)
			return
		}
		if !ok {
			s.mu.Lock()
			killed := s.killed
			s.mu.Unlock()
			if killed != nil {
				stop(killed)
				return
			}
			if o.extra {
				a := &answer{ready: make(chan struct{}), outs: []json.RawMessage{raw(`"extra"`)}}
				close(a.ready)
				select {
				case s.answers <- a:
				case <-s.done:
				}
			}
			stop(io.EOF)
			return
		}
		n++
		switch {
		case o.stuck:
			continue
		case n == o.dieAt:
			close(s.dead)
			stop(errCrash)
			return
		case n == o.shortAt:
			close(s.dead)
			stop(io.EOF)
			return
		}
		a := &answer{ready: make(chan struct{})}
		select {
		case s.answers <- a:
		case <-s.done:
			stop(errStreamClosed)
			return
		}
		if sem == nil {
			s.compute(a, mi)
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-s.done:
			stop(errStreamClosed)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			s.compute(a, mi)
		}()
	}
}

// compute runs the function on one input; a panic is a crash.
func (s *fakeStream) compute(a *answer, mi hooks.MapInput) {
	defer close(a.ready)
	if d := s.fs.opts.delay; d > 0 {
		if rand.IntN(8) == 0 {
			time.Sleep(rand.N(d))
		} else {
			runtime.Gosched()
		}
	}
	defer func() {
		if r := recover(); r != nil {
			a.outs, a.err = nil, &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	a.outs, a.err = s.fs.f(s.ctx, mi)
}

func (s *fakeStream) Send(mi hooks.MapInput) error {
	if s.sending.Add(1) != 1 {
		s.fs.fault("concurrent Send")
	}
	defer s.sending.Add(-1)
	s.mu.Lock()
	if s.sendClosed {
		s.mu.Unlock()
		s.fs.fault("Send after CloseSend or a failed Send")
		return errors.New("fake: send after CloseSend")
	}
	s.nsent++
	if s.nsent == 1 {
		s.arg = mi.Arg
	} else if !bytes.Equal(s.arg, mi.Arg) {
		s.fs.fault("inputs of one stream with different arguments")
	}
	if s.nsent == s.fs.opts.sendEOFAt {
		s.killed = errCrash
		s.sendClosed = true
		close(s.in)
		s.mu.Unlock()
		return io.EOF
	}
	s.mu.Unlock()
	if (mi.Object == nil) == (mi.NotFound == nil) {
		s.fs.fault("an input with both or neither of Object and NotFound")
	}
	select {
	case s.in <- mi:
		return nil
	case <-s.dead:
		return io.EOF
	case <-s.done:
		return errStreamClosed
	}
}

func (s *fakeStream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendClosed {
		s.fs.fault("CloseSend after CloseSend or a failed Send")
		return errors.New("fake: CloseSend twice")
	}
	s.sendClosed = true
	close(s.in)
	return nil
}

func (s *fakeStream) Recv() ([]json.RawMessage, error) {
	if s.receiving.Add(1) != 1 {
		s.fs.fault("concurrent Recv")
	}
	defer s.receiving.Add(-1)
	if s.fs.onRecv != nil {
		s.fs.onRecv()
	}
	if s.fs.opts.panicRecv {
		panic("recv exploded")
	}
	select {
	case a, ok := <-s.answers:
		if !ok {
			return nil, s.end
		}
		select {
		case <-a.ready:
			return a.outs, a.err
		case <-s.done:
			return nil, errStreamClosed
		}
	case <-s.done:
		return nil, errStreamClosed
	}
}

func (s *fakeStream) Close() {
	s.once.Do(func() {
		close(s.done)
		s.fs.closed.Add(1)
	})
	s.wg.Wait()
}

// checkStreams checks, after a job, that every stream was closed, that no streamer saw
// a breach of its contract, and that no call slot is held.
func (e *env) checkStreams(t testing.TB) {
	t.Helper()
	for _, fs := range e.streamers {
		if o, c := fs.opened.Load(), fs.closed.Load(); o != c {
			t.Errorf("%d streams opened, %d closed", o, c)
		}
		for _, f := range fs.takeFaults() {
			t.Errorf("stream contract: %s", f)
		}
	}
	if n := len(e.mr.calls); n != 0 {
		t.Errorf("%d call slots held after the job", n)
	}
}

// opened is how many streams the env's streamers opened.
func (e *env) opened() int64 {
	var n int64
	for _, fs := range e.streamers {
		n += fs.opened.Load()
	}
	return n
}

// twins returns streaming copies of the test map functions funs under module mod.
func twins(mod string, o streamOpts, funs ...string) map[string]any {
	base := testFuncs(nil)
	m := map[string]any{}
	for _, f := range funs {
		m[mod+":"+f] = newStreamer(base["t:"+f].(fakeMap), o)
	}
	return m
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// bigN is the number of objects of the bucket "big" of bigEnv.
const bigN = 5000

// bigEnv is an env whose bucket "big" holds bigN objects k00000… with the values
// 0, 1, …, and the extra functions.
func bigEnv(t testing.TB, cfg Config, extra map[string]any) *env {
	t.Helper()
	e := newEnvWith(t, cfg, false, extra)
	for i := range bigN {
		e.put(t, "default", "big", fmt.Sprintf("k%05d", i), strconv.Itoa(i))
	}
	return e
}

// mapIn is a map phase of function fun of module mod.
func mapIn(mod, fun string, extra ...string) string {
	return `{"map":{"language":"erlang","module":"` + mod + `","function":"` + fun + `"` + strings.Join(extra, "") + `}}`
}

// keyList is a key list of bigN inputs into "big", with and without key data, some
// not found, some typed.
func keyList() string {
	var keys []string
	for i := range bigN {
		k, n := fmt.Sprintf("k%05d", i), strconv.Itoa(i)
		switch i % 13 {
		case 0:
			keys = append(keys, `["big","nf`+n+`",{"i":`+n+`}]`)
		case 1:
			keys = append(keys, `["big","`+k+`",null,"t"]`)
		case 2:
			keys = append(keys, `["big","`+k+`","kd`+n+`"]`)
		case 3:
			keys = append(keys, `["big","`+k+`",null]`)
		case 4:
			keys = append(keys, `["nobucket","`+k+`"]`)
		default:
			keys = append(keys, `["big","`+k+`",`+n+`]`)
		}
	}
	return "[" + strings.Join(keys, ",") + "]"
}

// TestStreamSameResults runs jobs with map functions called once per input and with
// the same functions streaming (in two runtimes: one answering on one goroutine, one
// computing several answers at once after random pauses, with small buffers) and
// checks the results are the same, in the same order.
func TestStreamSameResults(t *testing.T) {
	t.Parallel()
	slow := streamOpts{workers: 4, delay: 500 * time.Microsecond, buf: 2}
	e := bigEnv(t, Config{}, twins("d", slow, "value", "echo", "number", "self"))
	e.put(t, "t", "big", "k00001", "typed")
	e.put(t, "default", "people", "alice", "a",
		core.Link{Bucket: "big", Key: "k00007", Tag: "friend"}, core.Link{Bucket: "big", Key: "k04000", Tag: "friend"},
		core.Link{Bucket: "big", Key: "gone", Tag: "friend"})
	keys := keyList()
	link := `{"link":{"bucket":"_","tag":"_"}}`
	for _, tc := range []struct {
		name string
		body func(mod string) string
		n    int // the number of values of the result (-1: not checked)
	}{
		{"bucket", func(m string) string { return job(`"big"`, mapIn(m, "value")) }, bigN},
		{"bucket with an argument", func(m string) string { return job(`"big"`, mapIn(m, "echo", `,"arg":{"a":[1,"x"]}`)) }, bigN},
		{"keys with key data", func(m string) string { return job(keys, mapIn(m, "echo", `,"arg":"x"`)) }, bigN},
		{"keys not found", func(m string) string { return job(keys, mapIn(m, "value")) }, bigN},
		{"map reduce", func(m string) string { return job(`"big"`, mapIn(m, "number"), reducePhase("sum")) }, 1},
		{"kept map, reduce", func(m string) string {
			return job(`"big"`, mapIn(m, "number", `,"keep":true`), reducePhase("sum"))
		}, 2},
		{"maps after maps, kept", func(m string) string {
			return job(keys, mapIn(m, "self", `,"keep":true`), mapIn(m, "self", `,"keep":true`), mapIn(m, "echo"))
		}, 3},
		{"key filter", func(m string) string {
			return job(`{"bucket":"big","key_filters":[["ends_with","7"]]}`, mapIn(m, "value"))
		}, bigN / 10},
		{"index range", func(m string) string {
			return job(`{"bucket":"big","index":"v_bin","start":"1000","end":"1999"}`, mapIn(m, "echo"))
		}, -1},
		{"link, map", func(m string) string { return job(`[["people","alice"]]`, link, mapIn(m, "echo")) }, 3},
		{"no inputs", func(m string) string { return job(`"empty"`, mapIn(m, "value")) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := e.run(t, tc.body("t"))
			if err != nil {
				t.Fatal(err)
			}
			var vals []json.RawMessage
			if err := json.Unmarshal([]byte(want), &vals); err != nil || tc.n >= 0 && len(vals) != tc.n {
				t.Fatalf("unary result: %d values, want %d (%v)", len(vals), tc.n, err)
			}
			for _, mod := range []string{"s", "d"} {
				before := e.opened()
				got, err := e.run(t, tc.body(mod))
				if err != nil {
					t.Fatalf("%s: %v", mod, err)
				}
				if got != want {
					t.Errorf("%s: streamed result differs:\n got %.300s\nwant %.300s", mod, got, want)
				}
				if opened := e.opened() - before; (tc.n == 0) != (opened == 0) {
					t.Errorf("%s: %d streams opened", mod, opened)
				}
				e.checkStreams(t)
			}
		})
	}
}

// TestStreamSameErrors checks that a streamed map phase fails as the same function
// called once per input does.
func TestStreamSameErrors(t *testing.T) {
	t.Parallel()
	slow := streamOpts{workers: 3, delay: 500 * time.Microsecond, buf: 1}
	e := bigEnv(t, Config{}, twins("d", slow, "value", "number", "self", "failarg", "mixed", "badjson", "panic"))
	for _, tc := range []struct {
		name string
		body func(mod string) string
	}{
		{"failing input", func(m string) string { return job(`"big"`, mapIn(m, "failarg", `,"arg":"k03777"`)) }},
		{"failing first input", func(m string) string { return job(`"big"`, mapIn(m, "failarg", `,"arg":"k00000"`)) }},
		{"failing last input", func(m string) string { return job(`"big"`, mapIn(m, "failarg", `,"arg":"k04999"`)) }},
		{"failing input of a later phase", func(m string) string {
			return job(`"big"`, mapIn(m, "self"), mapIn(m, "failarg", `,"arg":"k00042"`))
		}},
		{"not JSON", func(m string) string { return job(`"big"`, mapIn(m, "badjson")) }},
		{"panic", func(m string) string { return job(`"big"`, mapIn(m, "panic")) }},
		{"input that is not a place", func(m string) string {
			return job(`"big"`, mapIn(m, "mixed", `,"arg":"k02500"`), mapIn(m, "value"))
		}},
		{"first input that is not a place", func(m string) string {
			return job(`"big"`, mapIn(m, "number"), mapIn(m, "value"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.run(t, tc.body("t"))
			var want *PhaseError
			if !errors.As(err, &want) {
				t.Fatalf("unary: %v, want a *PhaseError", err)
			}
			for _, mod := range []string{"s", "d"} {
				_, err := e.run(t, tc.body(mod))
				var got *PhaseError
				if !errors.As(err, &got) || *got != *want {
					t.Errorf("%s: got %v, want %v", mod, err, want)
				}
				e.checkStreams(t)
			}
		})
	}
}

// TestStreamNotUsed checks that JavaScript phases are not streamed.
func TestStreamNotUsed(t *testing.T) {
	t.Parallel()
	fs := newStreamer(testFuncs(nil)["t:value"].(fakeMap), streamOpts{})
	e := newEnvWith(t, Config{}, false, map[string]any{"js:Fake.stream": fs})
	e.put(t, "default", "b", "k", "v")
	e.mustRun(t, job(`[["b","k"],["b","gone"]]`, `{"map":{"language":"javascript","name":"Fake.stream"}}`),
		`["v",{"not_found":{"bucket":"b","key":"gone","keydata":"undefined"}}]`)
	if n := fs.opened.Load(); n != 0 {
		t.Errorf("a JavaScript phase opened %d streams", n)
	}
	e.checkStreams(t)
}

// TestStreamCallSlots checks that streamed phases take a call slot while they wait for
// outputs (the streams check it at each Recv) and that pipelines mixing them with
// phases that need slots too finish with a single slot.
func TestStreamCallSlots(t *testing.T) {
	t.Parallel()
	e := bigEnv(t, Config{MaxCalls: 1, Workers: 2}, nil)
	// A phase that held its slot while it waited for another phase would deadlock
	// these jobs until their timeout.
	for _, tc := range []struct{ name, body string }{
		{"streamed map, reduce", job(`"big"`, mapIn("s", "number"), reducePhase("sum"))},
		{"kept streamed map, reduce", job(`"big"`, mapIn("s", "number", `,"keep":true`), reducePhase("sum"))},
		{"map, streamed map, reduce", job(`"big"`, mapIn("t", "self"), mapIn("s", "number"), reducePhase("sum"))},
		{"streamed maps", job(`"big"`, mapIn("s", "self"), mapIn("s", "self"), mapIn("s", "number"), reducePhase("sum"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.run(t, strings.Replace(tc.body, "{", `{"timeout":30000,`, 1))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, ",[12497500]]") && out != "[12497500]" {
				t.Errorf("result %.200s…", out)
			}
			e.checkStreams(t)
		})
	}
}

// TestStreamEnds checks that a streamed map phase ends its job when its stream fails,
// hangs or is not wanted any more, and that the stream is closed, the call slot freed
// and every goroutine stopped. It does not run in parallel, so that it can count
// goroutines.
func TestStreamEnds(t *testing.T) {
	extra := merge(
		twins("die", streamOpts{dieAt: 1001}, "number"),
		twins("sendeof", streamOpts{sendEOFAt: 1001, workers: 2}, "number"),
		twins("short", streamOpts{shortAt: 1001}, "number"),
		twins("extra", streamOpts{extra: true}, "number"),
		twins("panicrecv", streamOpts{panicRecv: true}, "number"),
		twins("noopen", streamOpts{openErr: &hooks.CallError{Kind: hooks.Unavailable, Err: errors.New("plugin down")}}, "number"),
		twins("stuck", streamOpts{stuck: true}, "number"),
	)
	e := bigEnv(t, Config{MaxJobs: 2, Workers: 4}, extra)
	// Each subtest runs on a goroutine of its own.
	base := runtime.NumGoroutine() + 1
	k1000 := `["big","k01000"]`
	for _, tc := range []struct {
		name, body string
		want       PhaseError
	}{
		{"dies", job(`"big"`, mapIn("die", "number")), PhaseError{0, "crashed: plugin exited", k1000}},
		{"dies on Send", job(`"big"`, mapIn("sendeof", "number")), PhaseError{0, "crashed: plugin exited", k1000}},
		{"ends early", job(`"big"`, mapIn("short", "number")),
			PhaseError{0, "crashed: the map stream ended before it answered every input", k1000}},
		{"answers too much", job(`"big"`, mapIn("extra", "number"), reducePhase("sum")),
			PhaseError{0, "bad result: the map stream answered more inputs than it was sent", ""}},
		{"Recv panics", job(`"big"`, mapIn("panicrecv", "number")), PhaseError{0, "crashed: panic: recv exploded", `["big","k00000"]`}},
		{"cannot open", job(`"big"`, mapIn("noopen", "number")), PhaseError{0, "unavailable: plugin down", `["big","k00000"]`}},
		{"a later phase fails", job(`"big"`, mapIn("s", "self"), mapIn("t", "fail", `,"keep":true`), reducePhase("sum")),
			PhaseError{1, "boom", `["big","k00000"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.run(t, tc.body)
			var pe *PhaseError
			if !errors.As(err, &pe) || *pe != tc.want {
				t.Errorf("got %v, want %v", err, &tc.want)
			}
			goroutines(t, base)
			e.checkStreams(t)
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"stuck stream", `{"inputs":"big","timeout":200,"query":[` + mapIn("stuck", "number") + `,` + reducePhase("sum") + `]}`},
		{"function that waits", `{"inputs":"big","timeout":200,"query":[` + mapIn("s", "block") + `]}`},
	} {
		t.Run(tc.name+" times out", func(t *testing.T) {
			if _, err := e.run(t, tc.body); !errors.Is(err, ErrTimeout) {
				t.Errorf("got %v, want ErrTimeout", err)
			}
			goroutines(t, base)
			e.checkStreams(t)
		})
	}
	t.Run("caller goes away", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		before := e.opened()
		done := make(chan error, 1)
		go func() {
			_, err := e.runCtx(ctx, t, job(`"big"`, mapIn("stuck", "number")))
			done <- err
		}()
		deadline := time.Now().Add(10 * time.Second)
		for e.opened() == before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		goroutines(t, base)
		e.checkStreams(t)
	})
	t.Run("emit fails", func(t *testing.T) {
		jb, err := ParseJob([]byte(job(`"big"`, mapIn("s", "number"))))
		if err != nil {
			t.Fatal(err)
		}
		ex, err := e.mr.Start(context.Background(), jb)
		if err != nil {
			t.Fatal(err)
		}
		errGone := errors.New("client gone")
		err = ex.Run(func(int, []json.RawMessage) error { return errGone })
		ex.Close()
		if !errors.Is(err, errGone) {
			t.Errorf("got %v, want the emit error", err)
		}
		goroutines(t, base)
		e.checkStreams(t)
	})
	t.Run("whole bucket", func(t *testing.T) {
		e.mustRun(t, job(`"big"`, mapIn("s", "number"), reducePhase("sum")), `[12497500]`)
		goroutines(t, base)
		e.checkStreams(t)
	})
}

// BenchmarkMapPhase compares a map phase whose function is called once per input with
// the same in-process function streamed, over a bucket of bigN objects, so that the
// engine's cost of each path shows (ns/input).
func BenchmarkMapPhase(b *testing.B) {
	e := bigEnv(b, Config{}, nil)
	for _, tc := range []struct{ name, mod string }{{"unary", "t"}, {"streamed", "s"}} {
		for _, q := range []struct{ name, query string }{
			{"map", mapIn(tc.mod, "value")},
			{"map-reduce", mapIn(tc.mod, "number") + "," + reducePhase("sum")},
		} {
			b.Run(q.name+"/"+tc.name, func(b *testing.B) {
				body := `{"inputs":"big","query":[` + q.query + `]}`
				for b.Loop() {
					if _, err := e.run(b, body); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bigN), "ns/input")
			})
		}
	}
}
