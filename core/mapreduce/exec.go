package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/jsonstr"
	"github.com/cairnkv/cairn/core/kv"
)

// Defaults of Config.
const (
	// DefaultMaxJobs is how many jobs run at once; more wait for a slot (within their
	// own timeout).
	DefaultMaxJobs = 16
	// DefaultMaxResultBytes bounds the kept results of a job answered in one body, and
	// the values a reduce phase holds at once.
	DefaultMaxResultBytes = 32 << 20
	// DefaultMaxJobBytes bounds the body of a job (its JSON).
	DefaultMaxJobBytes = 16 << 20
	// DefaultReduceBatch is how many new inputs a reduce phase gathers before it calls
	// its function again (the reference's default).
	DefaultReduceBatch = 20
	// DefaultMaxJobsPerClient is how many jobs of one client run at once; its next
	// ones wait for one of them to end (within their own timeout).
	DefaultMaxJobsPerClient = 4
)

// chanSize is the capacity of the channels between phases: the most items in flight
// between two phases, whatever the size of the input.
const chanSize = 64

// Config configures a Service. Zero values take the defaults.
type Config struct {
	// MaxJobs is the most jobs that run at once (DefaultMaxJobs).
	MaxJobs int
	// MaxCalls is the most map and reduce function calls in progress at once across
	// all jobs (default 4 × GOMAXPROCS). A streamed map phase counts as one call while
	// it waits for its stream's outputs.
	MaxCalls int
	// Workers is the number of concurrent calls one map phase makes (default
	// 2 × GOMAXPROCS); a streamed map phase makes one stream instead.
	Workers int
	// MaxResultBytes bounds the kept results of a job that is answered in one body,
	// and the values one reduce phase holds (DefaultMaxResultBytes).
	MaxResultBytes int64
	// MaxJobBytes bounds the size of a job's JSON (DefaultMaxJobBytes); the HTTP layer
	// enforces it.
	MaxJobBytes int64
	// MaxJobsPerClient is the most jobs one client (core.ClientFrom of the job's
	// context) runs at once (DefaultMaxJobsPerClient); a job over its client's share
	// waits for one of them to end, within its own timeout, then fails with a
	// *BusyError.
	MaxJobsPerClient int
	// MaxCallsPerClient is the most function calls in progress at once for the jobs
	// of one client (default half of MaxCalls, at least 1), so that the slow calls of
	// one client cannot hold every call slot.
	MaxCallsPerClient int
	// Logger receives internal errors (default slog.Default()).
	Logger *slog.Logger
}

// Service runs MapReduce jobs over a key-value service. It is safe for concurrent use
// and has no background goroutines: each job's goroutines belong to the job's Run.
type Service struct {
	kv          *kv.Service
	hooks       *hooks.Registry
	cfg         Config
	log         *slog.Logger
	jobs        chan struct{}       // a token per running job
	calls       chan struct{}       // a token per function call in progress
	clientJobs  *core.ClientLimiter // running jobs per client
	clientCalls *core.ClientLimiter // calls in progress per client
}

// New returns a service that reads objects from svc and resolves functions with reg
// (the registry svc runs its hooks with; nil: only link phases and empty queries can
// run, and every function is unknown).
func New(svc *kv.Service, reg *hooks.Registry, cfg Config) *Service {
	procs := runtime.GOMAXPROCS(0)
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = DefaultMaxJobs
	}
	if cfg.MaxCalls <= 0 {
		cfg.MaxCalls = 4 * procs
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2 * procs
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxJobBytes <= 0 {
		cfg.MaxJobBytes = DefaultMaxJobBytes
	}
	if cfg.MaxJobsPerClient <= 0 {
		cfg.MaxJobsPerClient = DefaultMaxJobsPerClient
	}
	if cfg.MaxCallsPerClient <= 0 {
		cfg.MaxCallsPerClient = max(1, cfg.MaxCalls/2)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{kv: svc, hooks: reg, cfg: cfg, log: cfg.Logger,
		jobs: make(chan struct{}, cfg.MaxJobs), calls: make(chan struct{}, cfg.MaxCalls),
		clientJobs: core.NewClientLimiter(cfg.MaxJobsPerClient), clientCalls: core.NewClientLimiter(cfg.MaxCallsPerClient)}
}

// MaxJobBytes returns the largest job body the service accepts.
func (s *Service) MaxJobBytes() int64 { return s.cfg.MaxJobBytes }

// MaxResultBytes returns the limit of results answered in one body.
func (s *Service) MaxResultBytes() int64 { return s.cfg.MaxResultBytes }

// item is what flows between phases: an object's place (inputs, link outputs) or a
// JSON value (map and reduce outputs).
type item struct {
	isKey bool
	key   Input
	val   json.RawMessage
}

// result is a batch of kept outputs of one phase.
type result struct {
	phase  int
	values []json.RawMessage
}

// stage is a phase ready to run.
type stage struct {
	idx  int
	kind PhaseKind
	p    *Phase
	keep bool
	// js: a JavaScript map function, which is not called for missing objects.
	js       bool
	mapFn    hooks.Map
	reduceFn hooks.Reduce
	// batch is a reduce phase's batch size; 0 means one call over everything.
	batch int
	out   chan item // the next phase's input; nil for the last phase
}

// Execution is a started job: its functions are loaded, its inputs checked, and it
// holds one of the service's job slots. Call Run once, then Close.
type Execution struct {
	s      *Service
	job    *Job
	client string // core.ClientFrom of the job's context
	stages []*stage
	ctx    context.Context
	cancel context.CancelFunc

	view      *kv.View // the snapshot the inputs are listed from; nil for key lists
	viewOnce  sync.Once
	release   func()
	closeOnce sync.Once
}

// Start prepares job to run: it waits for a slot of its client's share and then for a
// job slot (at most until the job's timeout), loads every phase's function and checks
// the bucket type of the inputs. The job's timeout starts now. Errors: *SetupError for
// a function that cannot be loaded, *ParseError for inputs in an unknown bucket type,
// *BusyError when the client's other jobs did not leave it a slot in time, ErrTimeout
// when no job slot freed up in time, ctx's error when ctx ends.
func (s *Service) Start(ctx context.Context, job *Job) (*Execution, error) {
	jctx, cancel := context.WithTimeoutCause(ctx, job.Timeout, ErrTimeout)
	client := core.ClientFrom(ctx)
	if err := s.clientJobs.Acquire(jctx, client); err != nil {
		cancel()
		if errors.Is(err, ErrTimeout) {
			return nil, &BusyError{Message: fmt.Sprintf(
				"Too many MapReduce jobs from this client: at most %d run at once, and none of them ended within this job's timeout of %v.",
				s.clientJobs.Max(), job.Timeout)}
		}
		return nil, err
	}
	select {
	case s.jobs <- struct{}{}:
	case <-jctx.Done():
		cancel()
		s.clientJobs.Release(client)
		return nil, context.Cause(jctx)
	}
	release := func() {
		<-s.jobs
		s.clientJobs.Release(client)
	}
	e := &Execution{s: s, job: job, client: client, ctx: jctx, cancel: cancel, release: release}
	if err := e.setup(jctx); err != nil {
		if jctx.Err() != nil {
			err = context.Cause(jctx)
		}
		e.Close()
		return nil, err
	}
	return e, nil
}

// Deadline returns when the job times out.
func (e *Execution) Deadline() time.Time {
	d, _ := e.ctx.Deadline()
	return d
}

// Close ends the job (if it still runs) and releases its slot and snapshot.
func (e *Execution) Close() {
	e.closeOnce.Do(func() {
		e.cancel()
		e.closeView()
		e.release()
	})
}

func (e *Execution) closeView() {
	e.viewOnce.Do(func() {
		if e.view != nil {
			e.view.Close()
		}
	})
}

// setup loads the functions and opens the inputs' snapshot.
func (e *Execution) setup(ctx context.Context) error {
	for i := range e.job.Query {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		st, err := e.s.load(ctx, i, &e.job.Query[i])
		if err != nil {
			return err
		}
		e.stages = append(e.stages, st)
	}
	in := &e.job.Inputs
	if in.Kind == InputKeys {
		return nil
	}
	v, err := e.s.kv.View(ctx)
	if err != nil {
		return fmt.Errorf("mapreduce: open the inputs' snapshot: %w", err)
	}
	e.view = v
	if err := v.CheckType(ctx, in.Type); err != nil {
		if kv.IsNotFound(err) {
			return inputsError("Unknown bucket type: " + in.Type + "\n")
		}
		return fmt.Errorf("mapreduce: check bucket type %s: %w", in.Type, err)
	}
	return nil
}

// load resolves phase i's function.
func (s *Service) load(ctx context.Context, i int, p *Phase) (*stage, error) {
	st := &stage{idx: i, kind: p.Kind, p: p, keep: p.Keep}
	if p.Kind == Link {
		return st, nil
	}
	point := hooks.PointMap
	if p.Kind == Reduce {
		point = hooks.PointReduce
		st.batch = reduceBatch(p.Arg)
	}
	impl, err := s.resolve(ctx, i, p, point)
	if err != nil {
		return nil, err
	}
	ok := false
	if p.Kind == Map {
		st.mapFn, ok = impl.(hooks.Map)
		st.js = p.Language == LangJavaScript
	} else {
		st.reduceFn, ok = impl.(hooks.Reduce)
	}
	if !ok {
		return nil, &SetupError{Phase: i, Message: functionName(p) + " is not a " + p.Kind.String() + " function"}
	}
	return st, nil
}

// resolve finds the implementation a phase names.
func (s *Service) resolve(ctx context.Context, i int, p *Phase, point hooks.Point) (any, error) {
	fail := func(msg string) error { return &SetupError{Phase: i, Message: msg} }
	switch p.Language {
	case LangErlang:
		if p.HasSource || p.SourceBucket != "" {
			return nil, fail("Erlang functions given as source are not allowed; name a built-in function with \"module\" and \"function\"")
		}
		impl, err := s.hooks.Resolve(core.HookSpec{Mod: p.Module, Fun: p.Function}, point)
		if err != nil {
			return nil, fail(resolveMessage(p, point, err))
		}
		return impl, nil
	case LangWASM:
		impl, err := s.hooks.Resolve(core.HookSpec{Mod: hooks.KindWASM + ":" + p.Module, Fun: p.Function}, point)
		if err != nil {
			return nil, fail(resolveMessage(p, point, err))
		}
		return impl, nil
	}
	// JavaScript.
	if p.Name != "" {
		impl, err := s.hooks.Resolve(core.HookSpec{Name: p.Name}, point)
		if err != nil {
			return nil, fail(resolveMessage(p, point, err))
		}
		return impl, nil
	}
	src := p.Source
	if !p.HasSource {
		o, err := s.kv.Get(ctx, core.DefaultType, p.SourceBucket, p.SourceKey, kv.GetOptions{})
		if err != nil && !kv.IsNotFound(err) {
			return nil, fmt.Errorf("mapreduce: read function source %s/%s: %w", p.SourceBucket, p.SourceKey, err)
		}
		var ok bool
		if err == nil {
			src, ok = liveValue(o)
		}
		if !ok {
			return nil, fail(fmt.Sprintf("the object %s/%s that should hold the function's source was not found", p.SourceBucket, p.SourceKey))
		}
	}
	impl, err := s.hooks.FromSource(ctx, hooks.KindJavaScript, src, point)
	switch {
	case errors.Is(err, hooks.ErrNoJavaScript):
		return nil, fail(hooks.ErrNoJavaScript.Error())
	case errors.Is(err, core.ErrClientBusy):
		return nil, &BusyError{Message: "Phase " + strconv.Itoa(i) + ": " + callMessage(err) + "."}
	case err != nil:
		return nil, fail(err.Error())
	}
	return impl, nil
}

// liveValue returns the value of the first sibling of o that is not a tombstone.
func liveValue(o *core.Object) (string, bool) {
	for i := range o.Siblings {
		if !o.Siblings[i].Deleted {
			return string(o.Siblings[i].Value), true
		}
	}
	return "", false
}

// functionName names a phase's function in messages.
func functionName(p *Phase) string {
	switch {
	case p.Name != "":
		return p.Name
	case p.HasSource:
		return "the JavaScript source"
	case p.Language == LangJavaScript:
		return "the JavaScript source in " + p.SourceBucket + "/" + p.SourceKey
	}
	return p.Module + ":" + p.Function
}

// resolveMessage says why a named function cannot be loaded.
func resolveMessage(p *Phase, point hooks.Point, err error) string {
	switch {
	case errors.Is(err, hooks.ErrNoJavaScript):
		return hooks.ErrNoJavaScript.Error()
	case errors.Is(err, hooks.ErrNoModule) && p.Language == LangWASM:
		return "no WebAssembly module named " + p.Module + " is registered"
	case errors.Is(err, hooks.ErrNoModule):
		return "unknown module " + p.Module
	case errors.Is(err, hooks.ErrNoFunction) && p.Name != "":
		return "no JavaScript function named " + p.Name
	case errors.Is(err, hooks.ErrNoFunction):
		return functionName(p) + " is not a " + point.String() + " function"
	}
	return err.Error()
}

// reduceBatch reads a reduce phase's batch size from its argument:
// {"reduce_phase_only_1": true} means one call over every input (0);
// {"reduce_phase_batch_size": N} sets N. As in the reference, a batch size that is
// not a number is never reached (one call), and one below 1 means 1.
func reduceBatch(arg json.RawMessage) int {
	ms, ok := members(arg, maxMembers)
	if !ok {
		return DefaultReduceBatch // not an object, or one of too many members to look at
	}
	if v, ok := get(ms, "reduce_phase_only_1"); ok && jsonKind(v) == 't' {
		return 0
	}
	v, ok := get(ms, "reduce_phase_batch_size")
	if !ok {
		return DefaultReduceBatch
	}
	if !isNumber(v) {
		return 0
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0
	}
	switch {
	case f < 1:
		return 1
	case f > 1<<30:
		return 0
	}
	n := int(f)
	if float64(n) < f {
		n++
	}
	return n
}

// Run runs the job and calls emit with the kept outputs of each phase as they are
// produced (phase is the phase's index in the query; an empty query's inputs are phase
// 0). Outputs of one phase come in order; batches of different phases may interleave.
// emit runs on the caller's goroutine; an error it returns stops the job and is
// returned.
//
// The phases run concurrently, connected by bounded channels, so a job's memory does
// not grow with its number of inputs: inputs are listed from one snapshot as the first
// phase consumes them; objects are read when a phase needs them (through the key-value
// service, so a map sees the object's current value); a map phase calls its function
// on up to Config.Workers inputs at once, or streams its inputs to a function that is a
// hooks.MapStreamer, and passes their outputs on in input order; a reduce phase holds
// one batch and its previous output. Run returns when every goroutine of the job has
// stopped.
//
// Errors: *PhaseError (a function failed or a phase broke a limit), ErrTimeout, the
// context's error when the caller's context ended, emit's error, or a storage error.
func (e *Execution) Run(emit func(phase int, values []json.RawMessage) error) error {
	ctx, cancel := context.WithCancelCause(e.ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failErr  error
	)
	fail := func(err error) {
		failOnce.Do(func() {
			failErr = err
			cancel(err)
		})
	}
	spawn := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				fail(err)
			}
		}()
	}
	results := make(chan result, 16)

	src := make(chan item, chanSize)
	spawn(func() error {
		defer close(src)
		defer e.closeView()
		return e.produce(ctx, src)
	})
	in := src
	stages := e.stages
	if len(stages) == 0 {
		// An empty query returns its inputs, as the output of phase 0.
		stages = []*stage{{idx: 0, keep: true}}
	}
	for i, st := range stages {
		var out chan item
		if i < len(stages)-1 {
			out = make(chan item, chanSize)
		}
		st.out = out
		stIn := in
		spawn(func() error {
			if out != nil {
				defer close(out)
			}
			return e.runStage(ctx, st, stIn, results)
		})
		in = out
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	e.collect(ctx, results, func(phase int, values []json.RawMessage) {
		if ctx.Err() != nil {
			return
		}
		if err := emit(phase, values); err != nil {
			fail(err)
		}
	})
	// Every goroutine has stopped: results is closed only after wg.Wait.
	if failErr != nil {
		return failErr
	}
	return nil
}

// maxEmitValues is how many values collect gathers into one call of emit.
const maxEmitValues = 1024

// collect reads results until the channel closes, gathering what is already there into
// larger batches (consecutive batches of one phase are merged).
func (e *Execution) collect(ctx context.Context, results <-chan result, emit func(int, []json.RawMessage)) {
	for {
		r, ok := <-results
		if !ok {
			return
		}
		pend := []result{r}
		n := len(r.values)
		closed := false
	drain:
		for n < maxEmitValues {
			select {
			case r2, ok := <-results:
				if !ok {
					closed = true
					break drain
				}
				if last := &pend[len(pend)-1]; last.phase == r2.phase {
					last.values = append(last.values, r2.values...)
				} else {
					pend = append(pend, r2)
				}
				n += len(r2.values)
			default:
				break drain
			}
		}
		for _, p := range pend {
			emit(p.phase, p.values)
		}
		if closed {
			return
		}
	}
}

// produce sends the job's inputs to out.
func (e *Execution) produce(ctx context.Context, out chan<- item) error {
	send := func(in Input) error {
		select {
		case out <- item{isKey: true, key: in}:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	in := &e.job.Inputs
	var err error
	switch in.Kind {
	case InputKeys:
		for _, k := range in.Keys {
			if err := send(k); err != nil {
				return err
			}
		}
		return nil
	case InputBucket, InputKeyFilter:
		err = e.view.Keys(ctx, in.Type, in.Bucket, func(key string) error {
			if in.Filter != nil && !in.Filter(ctx, key) {
				// A key that fails may have been cut short by the job's end, and the
				// listing looks at ctx only every so many keys.
				return context.Cause(ctx)
			}
			return send(Input{Type: in.Type, Bucket: in.Bucket, Key: key, Typed: in.Typed})
		})
	case InputIndex:
		_, err = e.view.Index(ctx, in.Type, in.Bucket, in.Index, func(_, key []byte) error {
			return send(Input{Type: in.Type, Bucket: in.Bucket, Key: string(key), Typed: in.Typed})
		})
	}
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil {
		return fmt.Errorf("mapreduce: list inputs of %s/%s: %w", in.Type, in.Bucket, err)
	}
	return nil
}

// runStage runs one phase until its input closes. A map phase whose function streams
// (and is not JavaScript) runs with streamMap, any other with one call per input.
func (e *Execution) runStage(ctx context.Context, st *stage, in <-chan item, results chan<- result) error {
	switch {
	case st.p == nil: // the empty query's pass-through
		return e.ordered(ctx, st, in, results, 1, func(_ context.Context, it item) ([]item, error) {
			return []item{it}, nil
		})
	case st.kind == Map:
		if ms, ok := st.mapFn.(hooks.MapStreamer); ok && !st.js {
			return e.streamMap(ctx, st, ms, in, results)
		}
		return e.ordered(ctx, st, in, results, e.s.cfg.Workers, func(ctx context.Context, it item) ([]item, error) {
			return e.mapOne(ctx, st, it)
		})
	case st.kind == Link:
		lr := &linkResolver{e: e, funs: map[bucketKey]*linkFun{}}
		return e.ordered(ctx, st, in, results, 1, func(ctx context.Context, it item) ([]item, error) {
			return lr.follow(ctx, st, it)
		})
	}
	return e.reduce(ctx, st, in, results)
}

// send passes a phase's outputs on: to the client when the phase is kept, and to the
// next phase.
func (e *Execution) send(ctx context.Context, st *stage, items []item, results chan<- result) error {
	if len(items) == 0 {
		return nil
	}
	if st.keep {
		vals := make([]json.RawMessage, len(items))
		for i := range items {
			vals[i] = items[i].json()
		}
		select {
		case results <- result{st.idx, vals}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if st.out == nil {
		return nil
	}
	for _, it := range items {
		select {
		case st.out <- it:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// ordered runs fn on every input with up to workers calls at once and sends the
// outputs on in input order. At most 2 × workers inputs are in progress.
func (e *Execution) ordered(ctx context.Context, st *stage, in <-chan item, results chan<- result, workers int,
	fn func(context.Context, item) ([]item, error)) error {
	type slot struct {
		done chan struct{}
		out  []item
		err  error
	}
	type task struct {
		it item
		s  *slot
	}
	sctx, scancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		scancel()
		wg.Wait()
	}()
	tasks := make(chan task, workers)
	queue := make(chan *slot, 2*workers)
	wg.Add(1)
	go func() { // dispatcher: hands inputs to the workers and queues their slots in order
		defer wg.Done()
		defer close(queue)
		defer close(tasks)
		for {
			var it item
			var ok bool
			select {
			case it, ok = <-in:
				if !ok {
					return
				}
			case <-sctx.Done():
				return
			}
			s := &slot{done: make(chan struct{})}
			select {
			case tasks <- task{it, s}:
			case <-sctx.Done():
				return
			}
			select {
			case queue <- s:
			case <-sctx.Done():
				return
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				t.s.out, t.s.err = fn(sctx, t.it)
				close(t.s.done)
			}
		}()
	}
	for s := range queue {
		select {
		case <-s.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if s.err != nil {
			return s.err
		}
		if err := e.send(ctx, st, s.out, results); err != nil {
			return err
		}
	}
	if ctx.Err() != nil { // the dispatcher stopped early
		return context.Cause(ctx)
	}
	return nil
}

// mapOne maps one input.
func (e *Execution) mapOne(ctx context.Context, st *stage, it item) ([]item, error) {
	in, err := st.input(it)
	if err != nil {
		return nil, err
	}
	obj, err := e.fetch(ctx, in)
	if err != nil {
		return nil, err
	}
	if obj == nil && st.js {
		// JavaScript map functions are not called for missing objects.
		return []item{{val: notFoundJSON(in)}}, nil
	}
	mi := hooks.MapInput{Object: obj, KeyData: in.KeyData, Arg: st.p.Arg}
	if obj == nil {
		mi.NotFound = &hooks.Place{Type: in.Type, Bucket: in.Bucket, Key: in.Key}
	}
	var outs []json.RawMessage
	err = e.call(ctx, func(ctx context.Context) error {
		var err error
		outs, err = st.mapFn.Map(ctx, mi)
		return err
	})
	if err == nil {
		err = checkOutputs(outs)
	}
	if err != nil {
		return nil, e.phaseError(ctx, st, err, string(in.json()))
	}
	items := make([]item, len(outs))
	for i, o := range outs {
		items[i] = item{val: o}
	}
	return items, nil
}

// fetch reads an input's object: nil when it does not exist (or its bucket type does
// not). Deleted objects whose tombstone is still visible are returned as they are; an
// object of a datatype bucket as its data-type view (kv.Service.HookView). The job's
// CanRead is asked first.
func (e *Execution) fetch(ctx context.Context, in Input) (*core.Object, error) {
	if e.job.CanRead != nil {
		if err := e.job.CanRead(ctx, in.Type, in.Bucket); err != nil {
			return nil, err
		}
	}
	// A job may read a whole bucket once: it uses the object cache but does not fill it.
	o, err := e.s.kv.Get(ctx, in.Type, in.Bucket, in.Key, kv.GetOptions{NoCacheFill: true})
	if err == nil {
		o, err = e.s.kv.HookView(ctx, o)
	}
	switch {
	case err == nil:
		return o, nil
	case kv.IsNotFound(err):
		return nil, nil
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	}
	return nil, fmt.Errorf("mapreduce: read %s/%s/%s: %w", in.Type, in.Bucket, in.Key, err)
}

// reduce runs a reduce phase: its function is called on the first batch of inputs,
// then on its previous output followed by the next batch, and so on; once over
// everything for a batch size of 0; once with no values when no input came.
func (e *Execution) reduce(ctx context.Context, st *stage, in <-chan item, results chan<- result) error {
	var acc, batch []json.RawMessage
	var accBytes, batchBytes int64
	ran := false
	limit := e.s.cfg.MaxResultBytes
	run := func() error {
		vals := append(acc, batch...)
		var outs []json.RawMessage
		err := e.call(ctx, func(ctx context.Context) error {
			var err error
			outs, err = st.reduceFn.Reduce(ctx, vals, st.p.Arg)
			return err
		})
		if err == nil {
			err = checkOutputs(outs)
		}
		if err != nil {
			return e.phaseError(ctx, st, err, valuesText(vals))
		}
		acc, batch, ran = outs, nil, true
		accBytes, batchBytes = valuesSize(outs), 0
		if accBytes > limit {
			return &PhaseError{Phase: st.idx, Message: fmt.Sprintf("the reduce phase's output exceeds %d bytes", limit)}
		}
		return nil
	}
	for {
		var it item
		var ok bool
		select {
		case it, ok = <-in:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if !ok {
			break
		}
		v := it.json()
		batch = append(batch, v)
		batchBytes += int64(len(v))
		if accBytes+batchBytes > limit {
			return &PhaseError{Phase: st.idx, Message: fmt.Sprintf("the reduce phase's inputs exceed %d bytes", limit)}
		}
		if st.batch > 0 && len(batch) >= st.batch {
			if err := run(); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 || !ran {
		if err := run(); err != nil {
			return err
		}
	}
	items := make([]item, len(acc))
	for i, v := range acc {
		items[i] = item{val: v}
	}
	return e.send(ctx, st, items, results)
}

// call runs one function call under the service's limits on concurrent calls. A panic
// in the function is turned into an error.
func (e *Execution) call(ctx context.Context, f func(context.Context) error) (err error) {
	if err := e.takeCall(ctx); err != nil {
		return err
	}
	defer func() {
		e.giveCall()
		if r := recover(); r != nil {
			err = e.panicked(r)
		}
	}()
	return f(ctx)
}

// takeCall waits (while ctx lasts) for a call slot of the job's client's share, then
// for one of the service's.
func (e *Execution) takeCall(ctx context.Context) error {
	if err := e.s.clientCalls.Acquire(ctx, e.client); err != nil {
		return err
	}
	select {
	case e.s.calls <- struct{}{}:
		return nil
	case <-ctx.Done():
		e.s.clientCalls.Release(e.client)
		return context.Cause(ctx)
	}
}

// giveCall gives back a slot takeCall took.
func (e *Execution) giveCall() {
	<-e.s.calls
	e.s.clientCalls.Release(e.client)
}

// phaseError turns a failed call into the job's error: the job's own end when the call
// failed because the job ended, else a *PhaseError.
func (e *Execution) phaseError(ctx context.Context, st *stage, err error, input string) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// A runtime may stop a call at the job's deadline a moment before the
		// context reports it.
		return ErrTimeout
	}
	var pe *PhaseError
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, core.ErrClientBusy) {
		// The runtime had no instance left in this client's share.
		return &BusyError{Message: "Phase " + strconv.Itoa(st.idx) + ": " + callMessage(err) + "."}
	}
	return &PhaseError{Phase: st.idx, Message: truncate(callMessage(err)), Input: truncate(input)}
}

// callMessage is the client's view of a call's failure: the function's own message, or
// how it failed.
func callMessage(err error) string {
	var ce *hooks.CallError
	if errors.As(err, &ce) {
		cause := ""
		if ce.Err != nil {
			cause = ce.Err.Error()
		}
		switch {
		case ce.Kind == hooks.Failed && cause != "":
			return cause
		case cause != "":
			return ce.Kind.String() + ": " + cause
		}
		return ce.Kind.String()
	}
	return err.Error()
}

// errBadOutput is a function output that is not JSON.
var errBadOutput = &hooks.CallError{Kind: hooks.BadResult, Err: errors.New("the function returned a value that is not JSON")}

// checkOutputs checks that every output of a function is one JSON value.
func checkOutputs(outs []json.RawMessage) error {
	for _, o := range outs {
		if !json.Valid(o) {
			return errBadOutput
		}
	}
	return nil
}

// valuesSize is the total size of values.
func valuesSize(vals []json.RawMessage) int64 {
	var n int64
	for _, v := range vals {
		n += int64(len(v))
	}
	return n
}

// valuesText is values as a JSON array, cut short when long (an error's input).
func valuesText(vals []json.RawMessage) string {
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
		if len(b) > maxErrorText {
			break
		}
	}
	return string(append(b, ']'))
}

// input returns the object place an item names: inputs and link outputs are places;
// a value from an earlier map or reduce phase must be [B, K], [B, K, KeyData] or
// [B, K, KeyData, Type].
func (st *stage) input(it item) (Input, error) {
	if it.isKey {
		return it.key, nil
	}
	in, ok := parseKeyInput(it.val)
	if !ok {
		return Input{}, &PhaseError{Phase: st.idx, Input: truncate(compact(it.val)),
			Message: "a " + st.kind.String() + " phase's inputs must be [bucket, key] or [bucket, key, keydata] lists"}
	}
	return in, nil
}

// json returns an item as a JSON value: a place is [B, K] (no key data, default
// type), [B, K, KeyData], or [B, K, KeyData|null, Type] for a typed input.
func (it *item) json() json.RawMessage {
	if it.isKey {
		return it.key.json()
	}
	return it.val
}

// json returns an input as the reference lists it.
func (in *Input) json() json.RawMessage {
	b := []byte{'['}
	b = jsonstr.AppendNoHTML(b, in.Bucket)
	b = append(b, ',')
	b = jsonstr.AppendNoHTML(b, in.Key)
	kd := in.KeyData
	switch {
	case in.Typed:
		if kd == nil {
			kd = json.RawMessage("null")
		}
		b = append(b, ',')
		b = append(b, kd...)
		b = append(b, ',')
		b = jsonstr.AppendNoHTML(b, in.Type)
	case kd != nil && string(kd) != "null":
		b = append(b, ',')
		b = append(b, kd...)
	}
	return append(b, ']')
}

// notFoundJSON is the output a JavaScript map phase gives for a missing object:
// {"not_found":{"bucket":B,"key":K,"keydata":KD}}, with "bucket_type" first for a
// typed input; KD is "undefined" when the input had no key data.
func notFoundJSON(in Input) json.RawMessage {
	b := []byte(`{"not_found":{`)
	if in.Typed {
		b = append(b, `"bucket_type":`...)
		b = jsonstr.AppendNoHTML(b, in.Type)
		b = append(b, ',')
	}
	b = append(b, `"bucket":`...)
	b = jsonstr.AppendNoHTML(b, in.Bucket)
	b = append(b, `,"key":`...)
	b = jsonstr.AppendNoHTML(b, in.Key)
	b = append(b, `,"keydata":`...)
	if in.KeyData == nil {
		b = append(b, `"undefined"`...)
	} else {
		b = append(b, in.KeyData...)
	}
	return append(b, "}}"...)
}
