package wasmhost

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/cairnkv/cairn/sdk/abi"
)

// WASI preview 1 numbers used by poll_oneoff.
const (
	wasiErrnoSuccess = 0
	wasiErrnoBadf    = 8
	wasiErrnoFault   = 21
	wasiErrnoInval   = 28

	wasiEventClock   = 0
	wasiEventFdRead  = 1
	wasiEventFdWrite = 2

	wasiSubscriptionSize = 48
	wasiEventSize        = 32
	wasiFdHangup         = 1 // eventrwflags: fd_readwrite_hangup
)

// instantiateWASI provides wasi_snapshot_preview1: wazero's implementation, with
// poll_oneoff replaced by pollOneoff so that no call can sleep.
//
// No WASI function can block a guest then: instances have no files, sockets or stdin
// (fd_read of stdin reads end of file at once), stdout and stderr go to the log,
// sched_yield returns at once, and nothing else waits. A guest that wants to sleep
// spins instead, burning its fuel.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) (api.Module, error) {
	b := rt.NewHostModuleBuilder(abi.WASIModule)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(pollOneoff), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("in", "out", "nsubscriptions", "result.nevents").
		WithResultNames("errno").
		Export("poll_oneoff")
	mod, err := b.Instantiate(ctx)
	if err != nil {
		return nil, fmt.Errorf("wasmhost: instantiate WASI: %w", err)
	}
	return mod, nil
}

// pollOneoff is wasi_snapshot_preview1.poll_oneoff(in, out, nsubscriptions,
// result.nevents) -> errno, without waiting: every subscription's event has happened
// by the time it returns. A clock subscription (relative or absolute) completes at
// once; reading stdin is ready at end of file (the hangup flag, 0 bytes); writing
// stdout or stderr is ready; any other descriptor is an event with errno badf. So
// every subscription gets an event, in order. Go's scheduler polls with a clock
// subscription when all its goroutines sleep: it then spins until their timers are
// due, which costs fuel like any loop.
func pollOneoff(_ context.Context, mod api.Module, stack []uint64) {
	in, out, n, resultN := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = pollEvents(mod.Memory(), in, out, n, resultN)
}

// pollEvents does pollOneoff's work and returns its errno.
func pollEvents(mem api.Memory, in, out, n, resultN uint32) uint64 {
	if n == 0 {
		return wasiErrnoInval
	}
	if uint64(n)*wasiSubscriptionSize > uint64(mem.Size()) {
		return wasiErrnoFault
	}
	subs, ok1 := mem.Read(in, n*wasiSubscriptionSize)
	events, ok2 := mem.Read(out, n*wasiEventSize)
	if !ok1 || !ok2 {
		return wasiErrnoFault
	}
	// Decode every subscription before writing an event: in and out may overlap.
	type subscription struct {
		userdata uint64
		typ      byte
		fd       uint32
	}
	var small [4]subscription
	todo := small[:0]
	if n > uint32(len(small)) {
		todo = make([]subscription, 0, n)
	}
	le := binary.LittleEndian
	for i := uint32(0); i < n; i++ {
		sub := subs[i*wasiSubscriptionSize : (i+1)*wasiSubscriptionSize]
		if sub[8] > wasiEventFdWrite {
			return wasiErrnoInval
		}
		todo = append(todo, subscription{userdata: le.Uint64(sub), typ: sub[8], fd: le.Uint32(sub[16:])})
	}
	for i, sub := range todo {
		ev := events[i*wasiEventSize : (i+1)*wasiEventSize]
		clear(ev)
		le.PutUint64(ev, sub.userdata)
		ev[10] = sub.typ
		switch {
		case sub.typ == wasiEventClock:
		case sub.fd == 0 && sub.typ == wasiEventFdRead:
			le.PutUint16(ev[24:], wasiFdHangup) // end of file, 0 bytes
		case (sub.fd == 1 || sub.fd == 2) && sub.typ == wasiEventFdWrite:
		default:
			le.PutUint16(ev[8:], wasiErrnoBadf)
		}
	}
	if !mem.WriteUint32Le(resultN, n) {
		return wasiErrnoFault
	}
	return wasiErrnoSuccess
}
