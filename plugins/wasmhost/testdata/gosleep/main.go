// Command gosleep is a Cairn hook (ABI v1) in Go whose entry point "nap" sleeps for the
// number of milliseconds its input holds (decimal), then outputs "awake": the host's
// tests check that the Go scheduler's idle loop, which waits in WASI poll_oneoff,
// neither blocks nor escapes the call's deadline. The tests build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o gosleep.wasm .
package main

import (
	"strconv"
	"time"
	"unsafe"
)

func main() {}

// buf is the input buffer cairn_alloc hands out.
var buf []byte

//go:wasmimport cairn output
func output(ptr unsafe.Pointer, n uint32)

//go:wasmexport cairn_abi_v1
func abiV1() {}

//go:wasmexport cairn_alloc
func alloc(n uint32) unsafe.Pointer {
	if uint32(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:max(n, 1)]
	return unsafe.Pointer(&buf[0])
}

//go:wasmexport nap
func nap(ptr unsafe.Pointer, n uint32) int32 {
	ms, err := strconv.Atoi(string(unsafe.Slice((*byte)(ptr), n)))
	if err != nil {
		return 2
	}
	// A goroutine that sleeps too, so the scheduler has timers of two goroutines.
	done := make(chan struct{})
	go func() {
		time.Sleep(time.Duration(ms) * time.Millisecond / 2)
		close(done)
	}()
	time.Sleep(time.Duration(ms) * time.Millisecond)
	<-done
	msg := []byte("awake")
	output(unsafe.Pointer(&msg[0]), uint32(len(msg)))
	return 0
}
