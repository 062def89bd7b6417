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
// With fuel metering the same checks give 1.45 to 4.98 (the fuel code's values live for
// a few instructions and are never spilled across a call, so they are not counted; its
// scratch local is; the slow path's small frame is not).
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

// The fuel weights, in units of about one simple instruction; see the package
// documentation for where they are charged. TestFuelRate measures how fast loops of
// several shapes burn them under wazero's compiler (units per microsecond on a 2-core
// Xeon, with the fuel in a local: 100 i32.adds 6,000 to 6,200, a counting loop 3,700
// to 6,200, a loop of a few additions called from a loop 7,700 to 8,000, a loop calling
// a function 3,800 to 4,000, a loop of 64 KiB memory.fills 6,200 to 6,400, an empty
// loop 1,800 to 1,900, tail calls 1,900 to 2,500), and the Rust JSON-schema example
// burns about 5,500 (330,000 units in 60 µs): package wasmhost sets its default fuel
// per millisecond above all of these.
const (
	// fuelInstruction is charged per instruction that compiles to code. block, loop,
	// end and nop are free.
	fuelInstruction = 1
	// fuelCall is charged per call, call_indirect, return_call or
	// return_call_indirect of a module function: the call's own work (the callee's
	// prologue, argument moves). The callee's code is charged at its entry.
	fuelCall = 3
	// fuelHostCall is charged per call of an imported function: the switch to Go and
	// back (about 30 to 60 ns under wazero) plus a little of the host's work.
	fuelHostCall = 100
	// fuelMemoryGrow is charged per memory.grow, which calls into Go.
	fuelMemoryGrow = 100
	// fuelCheck and fuelCharge are the costs of the inserted code itself: a check
	// (global.get, i64.const, i64.sub, local.tee, global.set, local.get, global.get,
	// i64.lt_s, if) and a charge (global.get, i64.const, i64.sub, global.set). They
	// keep an empty loop's fuel in line with its time.
	fuelCheck  = 3
	fuelCharge = 1
	// fuelBulkByteShift and fuelBulkElemShift set the charge of the bulk operations,
	// by their count (see bulkShift): one unit per 2^shift bytes or elements. The
	// instruction itself costs fuelInstruction too. A memory.fill of 64 KiB runs at
	// about 40 GB/s, 8 bytes per unit then burns fuel about as fast as the calibration
	// loop; a table operation moves 8 to 16 bytes per element.
	fuelBulkByteShift = 3
	fuelBulkElemShift = 0
	// mergeMax is the largest cost of an arm or join folded into the charge point
	// that dominates it rather than charged where it runs: a charge point of its own
	// costs about as much time as the instructions it would save.
	mergeMax = 4
)
