//go:build wasip1

package cairn

import "unsafe"

// inputBuf is the buffer cairn_alloc hands to the host for the next input. This
// variable keeps it alive; the next cairn_alloc reuses or replaces it.
var inputBuf []byte

// shrinkAbove is the capacity above which a much smaller request gets a fresh buffer,
// so that one large input does not pin its memory for the instance's lifetime.
const shrinkAbove = 1 << 20

// cairnAlloc is the ABI's allocator: a buffer of at least n bytes, valid until the next
// call.
//
//go:wasmexport cairn_alloc
func cairnAlloc(n uint32) uint32 {
	size := max(int(n), 1)
	if cap(inputBuf) < size || (cap(inputBuf) > shrinkAbove && size <= shrinkAbove/4) {
		inputBuf = make([]byte, size)
	}
	inputBuf = inputBuf[:cap(inputBuf)]
	return uint32(uintptr(unsafe.Pointer(&inputBuf[0])))
}

// cairnABIv1 is the ABI v1 marker; the host never calls it.
//
//go:wasmexport cairn_abi_v1
func cairnABIv1() {}

// hostOutput is "cairn"."output": the host copies the call's result at once.
//
//go:wasmimport cairn output
func hostOutput(ptr *byte, n uint32)

// hostLog is "cairn"."log": one line for the server log.
//
//go:wasmimport cairn log
func hostLog(level int32, msg string)

func emitLog(level Level, msg string) { hostLog(int32(level), msg) }

// Run serves one call from the host: input is the bytes the host wrote at the buffer
// of cairn_alloc (a //go:wasmexport function taking a string receives them as the
// ABI's (ptr, len) pair). Run passes them to the hook, hands the output to the host and
// returns the status. Export each hook with a one-line wrapper:
//
//	//go:wasmexport validate
//	func validate(input string) int32 { return Validate.Run(input) }
func (h Hook) Run(input string) int32 {
	// The bytes are only read, and only during this call.
	st, out := h.Call(unsafe.Slice(unsafe.StringData(input), len(input)))
	if len(out) > 0 {
		hostOutput(&out[0], uint32(len(out)))
	}
	return int32(st)
}
