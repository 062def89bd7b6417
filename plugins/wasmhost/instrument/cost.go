package instrument

import "math"

// The frame model: the host stack that one frame of a function is assumed to take under
// wazero's optimizing engine (wazevo, v1.12.0; measured on amd64). See frameCost.
const (
	// frameOverhead covers what every frame has: the return address and the caller's
	// frame pointer (16 bytes), the stack-check slack (16) and the save area of the
	// callee-saved registers it clobbers (16 bytes each, up to 13 on amd64). A function
	// only clobbers registers to hold values, which are charged too, so 192 plus those
	// charges covers the 240 bytes of the worst case.
	frameOverhead = 192
	// bytesPerSlot is charged per parameter, result and local: a parameter or result
	// may sit in the caller's outgoing argument area and again in a spill slot, a
	// local in spill slots. v128 ones take bytesPerVectorSlot.
	bytesPerSlot       = 16
	bytesPerVectorSlot = 32
	// bytesPerValue is charged per value an instruction produces (bytesPerVectorValue
	// for a v128): wazevo gives every spilled SSA value its own 8- or 16-byte slot and
	// never reuses slots, so a function's spill area is bounded by its values.
	bytesPerValue       = 8
	bytesPerVectorValue = 16
)

// frameCost returns the estimated frame size of a function of type ft whose locals
// take localBytes (per bytesPerSlot) and whose instructions produce valueBytes (per
// bytesPerValue): frameOverhead + the parameters', results' and locals' slots + the
// values.
//
// The estimate is meant to be an upper bound, and was checked against wazevo two ways:
//
//   - per function: the frame sizes wazevo computes (its requiredStackSize, logged from
//     a patched copy of wazero) for the 7,600 functions of the example modules (Go,
//     Rust, C, AssemblyScript, WAT) and testdata/frames.wat. None is underestimated;
//     the closest estimate is 1.34 times the real size, the median 4.5 to 9 times
//     (most for the big functions of Go programs, which keep far fewer values live
//     across calls than the model assumes);
//   - per recursion: TestRealStackWithinEstimate (CAIRN_STACK_CALIBRATE=1) recurses
//     through each shape of testdata/frames.wat up to wazero's own ceiling and compares
//     the counter with the stack wazero allocated: 1.6 to 7.4 times.
//
// So a 4 MiB limit lets a guest use roughly 0.5 to 2.5 MiB of real stack: the example
// hooks need under 256 KiB of estimated stack, the malicious example's recursion traps
// after 2.6 MB of allocation instead of 160 MB. A module built to defeat the model
// (SSA block parameters multiplied by nested loops, with no instructions to pay for
// them) could take more than estimated; wazero's own ceiling still applies then.
func frameCost(ft funcType, localBytes, valueBytes int) int64 {
	c := int64(frameOverhead) + int64(ft.slotBytes) + int64(localBytes) + int64(valueBytes)
	return min(c, math.MaxInt32) // a cost over the limit traps at entry anyway
}
