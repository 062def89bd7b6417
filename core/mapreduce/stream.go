package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// streamWindow bounds the inputs of a streamed map phase that are sent on its stream
// and not yet answered.
const streamWindow = 512

// Errors of a map stream that broke its contract or ended too early.
var (
	errStreamShort = &hooks.CallError{Kind: hooks.Crashed,
		Err: errors.New("the map stream ended before it answered every input")}
	errStreamExtra = &hooks.CallError{Kind: hooks.BadResult,
		Err: errors.New("the map stream answered more inputs than it was sent")}
)

// sent is an entry of a streamed map phase's window, in input order: an input sent on
// the stream whose outputs are still to be received, or where and why the sender
// stopped.
type sent struct {
	in Input
	// err, when not nil, stops the phase here: the failure of Send for in, or of
	// CloseSend when end is set.
	err error
	// final, when not nil, is the phase's error as it is (an input that is not a
	// place, an object that could not be read).
	final error
	// end: every input was sent (CloseSend was called).
	end bool
}

// callSlot is a call slot (Execution.takeCall) that a streamed map phase takes while it
// waits for its stream's outputs and gives back before it waits for another phase. It
// is used by one goroutine.
type callSlot struct {
	e    *Execution
	held bool
}

// acquire takes the slot unless it is held already.
func (c *callSlot) acquire(ctx context.Context) error {
	if c.held {
		return nil
	}
	if err := c.e.takeCall(ctx); err != nil {
		return err
	}
	c.held = true
	return nil
}

// release gives the slot back if it is held.
func (c *callSlot) release() {
	if c.held {
		c.e.giveCall()
		c.held = false
	}
}

// streamMap runs a map phase whose function streams: its inputs go to the function
// over one stream, opened with the phase's first input (a phase without inputs opens
// none). A sender goroutine reads each input's object, sends it and records it in a
// window of at most streamWindow entries; this goroutine takes the entries in order,
// receives each one's outputs and passes them on as mapOne's are, so the phase's
// outputs and errors are those of the one-call-per-input path.
//
// The phase takes one of the service's call slots while it opens the stream and while
// it waits for outputs, and gives it back before it waits for its input or for the
// next phase: a slot held across such a wait could deadlock a pipeline whose other
// phases need slots too (a reduce after this phase, a map before it).
//
// The stream is closed when the phase ends, however it ends; the sender and the
// goroutine that closes the stream return before streamMap does.
func (e *Execution) streamMap(ctx context.Context, st *stage, ms hooks.MapStreamer, in <-chan item,
	results chan<- result) (err error) {
	var first item
	select {
	case it, ok := <-in:
		if !ok {
			return nil
		}
		first = it
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	firstIn, err := st.input(first)
	if err != nil {
		return err
	}
	slot := callSlot{e: e}
	defer slot.release()
	if err := slot.acquire(ctx); err != nil {
		return err
	}

	sctx, scancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		scancel()
		wg.Wait()
	}()
	cur := firstIn // the input whose outputs are awaited, for a panic's message
	defer func() {
		if r := recover(); r != nil {
			err = e.phaseError(ctx, st, e.panicked(r), string(cur.json()))
		}
	}()
	stream, err := ms.OpenMapStream(sctx)
	if err != nil {
		return e.phaseError(ctx, st, err, string(firstIn.json()))
	}
	wg.Add(2)
	go func() { // closes the stream when the phase ends, which stops a blocked Send or Recv
		defer wg.Done()
		<-sctx.Done()
		stream.Close()
	}()
	window := make(chan sent, streamWindow)
	go func() {
		defer wg.Done()
		defer close(window)
		e.streamInputs(sctx, st, stream, item{isKey: true, key: firstIn}, in, window)
	}()

	for {
		var s sent
		var ok bool
		select {
		case s, ok = <-window:
		default:
			// The sender waits for an input or reads an object: wait for it without
			// holding a call slot.
			slot.release()
			select {
			case s, ok = <-window:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		switch {
		case !ok:
			// The sender stops without a last entry only when the phase ends.
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return errors.New("mapreduce: the map stream's sender stopped early")
		case s.final != nil:
			return s.final
		case s.end:
			return e.endStream(ctx, st, stream, &slot, s.err)
		case s.err != nil:
			return e.sendFailed(ctx, st, stream, &slot, s)
		}
		if err := slot.acquire(ctx); err != nil {
			return err
		}
		cur = s.in
		outs, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			err = errStreamShort
		}
		if err == nil {
			err = checkOutputs(outs)
		}
		if err != nil {
			return e.phaseError(ctx, st, err, string(s.in.json()))
		}
		items := make([]item, len(outs))
		for i, o := range outs {
			items[i] = item{val: o}
		}
		if st.mayBlock(len(items), results) {
			slot.release()
		}
		if err := e.send(ctx, st, items, results); err != nil {
			return err
		}
	}
}

// streamInputs is a streamed map phase's sender: it reads each input's object, sends it
// on the stream and records it in window, in input order, starting with it; after the
// last input it calls CloseSend. Where it stops early, its last entry says why; it
// stops without one only when ctx ends.
func (e *Execution) streamInputs(ctx context.Context, st *stage, stream hooks.MapStream, it item, in <-chan item,
	window chan<- sent) {
	push := func(s sent) bool {
		select {
		case window <- s:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var cur Input // the input being sent, for a panic's message
	defer func() {
		if r := recover(); r != nil {
			push(sent{in: cur, err: e.panicked(r)})
		}
	}()
	for {
		pl, err := st.input(it)
		var obj *core.Object
		if err == nil {
			obj, err = e.fetch(ctx, pl)
		}
		if err != nil {
			push(sent{final: err})
			return
		}
		cur = pl
		mi := hooks.MapInput{Object: obj, KeyData: pl.KeyData, Arg: st.p.Arg}
		if obj == nil {
			mi.NotFound = &hooks.Place{Type: pl.Type, Bucket: pl.Bucket, Key: pl.Key}
		}
		if err := stream.Send(mi); err != nil {
			push(sent{in: pl, err: err})
			return
		}
		if !push(sent{in: pl}) {
			return
		}
		var ok bool
		select {
		case it, ok = <-in:
		case <-ctx.Done():
			return
		}
		if !ok {
			break
		}
	}
	push(sent{end: true, err: stream.CloseSend()})
}

// endStream finishes a stream whose every input was sent and answered: Recv must say
// the stream ended (io.EOF). closeErr is CloseSend's error.
func (e *Execution) endStream(ctx context.Context, st *stage, stream hooks.MapStream, slot *callSlot, closeErr error) error {
	if closeErr != nil {
		return e.phaseError(ctx, st, closeErr, "")
	}
	if err := slot.acquire(ctx); err != nil {
		return err
	}
	_, err := stream.Recv()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		err = errStreamExtra
	}
	return e.phaseError(ctx, st, err, "")
}

// sendFailed is the phase's error when Send failed for s.in, once every earlier input
// was answered. A Send that returns io.EOF (as gRPC's does) says the stream has ended:
// Recv then tells why.
func (e *Execution) sendFailed(ctx context.Context, st *stage, stream hooks.MapStream, slot *callSlot, s sent) error {
	err := s.err
	if errors.Is(err, io.EOF) {
		if aerr := slot.acquire(ctx); aerr != nil {
			return aerr
		}
		_, rerr := stream.Recv()
		switch {
		case rerr != nil && !errors.Is(rerr, io.EOF):
			err = rerr
		default:
			err = errStreamShort
		}
	}
	return e.phaseError(ctx, st, err, string(s.in.json()))
}

// panicked logs a panic of a function's runtime and returns it as a crash.
func (e *Execution) panicked(r any) error {
	e.s.log.Error("mapreduce: function panicked", "panic", r)
	return &hooks.CallError{Kind: hooks.Crashed, Err: fmt.Errorf("panic: %v", r)}
}

// mayBlock reports whether passing n outputs of st on might wait for another phase or
// for the client: the next phase's input has no room for them (only st sends to it, so
// room only grows), or the results are full.
func (st *stage) mayBlock(n int, results chan<- result) bool {
	if n == 0 {
		return false
	}
	if st.out != nil && cap(st.out)-len(st.out) < n {
		return true
	}
	return st.keep && len(results) == cap(results)
}
