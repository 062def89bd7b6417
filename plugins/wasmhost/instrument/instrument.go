// Package instrument rewrites WebAssembly modules so that their call stack is bounded
// and their running time metered.
//
// # Stack limit
//
// wazero's optimizing engine keeps a guest's call stack in a Go slice that it doubles
// as the guest recurses, up to a fixed ceiling of 50,000,000 bytes; a guest that
// recurses without end makes the host allocate about 160 MB before it traps. With
// Options.MaxBytes the guest itself traps long before that: the rewrite adds a mutable
// i32 global, the stack counter, and rewrites every function so that
//
//   - on entry it keeps the counter in a local, traps with unreachable if counter +
//     cost + reserve would exceed the limit, and otherwise adds cost to the counter
//     (cost is the function's estimated frame size, see frameCost; reserve is the
//     largest frame of the leaves it calls, below);
//   - before every way out (the final end, return, a br, br_if or br_table to the
//     function's own label, return_call, return_call_indirect) it sets the counter
//     back to its value at entry (a store, where a subtraction would load the global
//     again: every call would then wait for the previous one's store).
//
// A leaf, a function without loops or calls of the module's own functions that only
// direct calls reach, is not rewritten at all (see plan): at most one leaf frame is on
// top of the stack at a time, so its callers' reserve covers it.
//
// On a trap the counter is left at Exceeded (when the limit caused it) or wherever it
// was; the host discards trapped instances, so a trap needs no cleanup.
//
// # Fuel
//
// With Options.Fuel the rewrite adds two mutable i64 globals, the fuel and the floor
// (exported as FuelExport and FloorExport), and one function, the slow path, and makes
// the guest burn fuel as it runs. Every function entry and every loop header is a
// check:
//
//	fuel = fuel - cost; if fuel < floor { slow() }
//
// Within a function the fuel lives in a local, a register: charges touch no memory.
// The function loads it from the global at entry, and stores it back before every way
// out and before calling a function that reads it (any but a leaf or the host's), and
// loads it again after. Leaves (see above) burn no fuel themselves: their callers
// charge every instruction of them where they call them.
//
// A host sets the fuel before a call from the call's time budget, and the floor one
// FuelSlice below it (InitialFloor). The slow path then runs once per slice of fuel:
//
//   - it traps with unreachable if the floor is math.MaxInt64: that is how a host
//     stops a running call from another goroutine (the guest's own write of the floor
//     can cross the host's, so a host repeats it until the call ends);
//   - it calls memory.grow(0), which changes nothing but runs in Go: Go can neither
//     preempt a goroutine in guest code nor stop the world for a garbage collection
//     until it returns to Go, so without it a guest that loops for a second would stall
//     the whole process for a second (measured: a 397 ms pause, against 1.5 ms with
//     slices of 2^20 units);
//   - it traps with unreachable if the fuel is below zero: the budget is spent;
//   - it sets the floor a slice below the fuel (not below zero).
//
// After a trap, fuel < 0 tells that the budget ran out. The slow path is the last
// function, after all of the module's own, so no index changes.
//
// Termination needs checks only where code can repeat: a loop can only iterate through
// its header and recursion only through function entries, and straight-line code runs
// once per visit. Costs are charged per basic block, so that the fuel tracks the code
// that runs rather than every branch of it: each arm of an if, and the code after the
// end of a block or if that a branch targets (a join), is charged where it starts,
// without a check (4 instructions); the rest of the code of a function or loop body
// (its code up to the first construct, and after loops and blocks that no branch
// targets) is charged at the entry or header, whose charge point every path to it
// passes. An arm or join that costs at most mergeMax is folded into that dominating
// charge point instead. Folding and charging at a dominator can only overcharge: when
// a branch leaves early (a guard's return, a loop's exit in its last iteration).
// Costs are in units of about one simple instruction; calls, host calls and
// memory.grow weigh more, and bulk memory and table operations are charged by their
// size (see cost.go).
//
// What a charge does not see is the time a host function takes: a host must bound
// that itself (package wasmhost stops a call at its wall-clock deadline too).
//
// # Format
//
// Everything else is copied byte for byte: no function, type, local or global index
// changes (the added globals are the last globals, the scratch locals a function needs
// its last locals), custom sections (the name section included) are kept, and only the
// sizes of the sections and bodies that grew are re-encoded.
//
// The rewriter understands the binary format of WebAssembly 2.0 (MVP, mutable globals,
// sign extension, non-trapping float-to-int, multi-value, bulk memory, reference types,
// fixed-width SIMD) plus tail calls, threads' atomics and relaxed SIMD opcodes. It
// refuses exception handling (a throw would leave frames without passing their exits),
// typed function references, GC types and memory64, with an error: the host then
// refuses the module, as wazero's default features would.
//
// It decodes, but does not fully validate: it checks what it relies on (section order,
// LEB128 encodings, instruction immediates, block nesting, branch depths, function,
// local and global indices) and leaves typing to wazero, which compiles the rewritten
// module (the host rewrites before compiling, so wazero validates the module it runs).
// The rewrite keeps a valid module valid and an invalid one invalid: the inserted code
// is stack-neutral and type-correct in any context, and code that names the added
// globals or locals (out of range in the input) is refused, so a guest cannot reset
// its counters. Every vector count is checked against the bytes left before anything
// is allocated, which also spares wazero's decoder (it allocates what a count says)
// crafted counts in the sections the rewrite reads: all but the custom ones.
package instrument

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// Exceeded is the value of the stack counter after the limit made the guest trap.
// Below the limit the counter never goes past maxBytes, which is at most MaxInt32.
const Exceeded uint32 = math.MaxUint32

// DefaultExportName is the export name under which the host publishes the stack counter
// (see Options.ExportName).
const DefaultExportName = "cairn_stack_guard"

// MaxLocals is the most locals (parameters excluded) a function may declare: the limit
// of V8 and wasmtime. It keeps frame costs, and wazero's own decoding, in bounds.
const MaxLocals = 50000

// FuelExport and FloorExport are the names under which a rewrite with Options.Fuel
// exports the fuel and the floor (mutable i64 globals). A module that already exports
// either name is refused.
const (
	FuelExport  = "cairn_fuel"
	FloorExport = "cairn_fuel_floor"
)

// FuelSlice is the fuel between two visits of the slow path, which enters Go (see
// slowBody): about 0.2 ms of guest code. A host that sets the fuel sets the floor to
// InitialFloor(fuel).
const FuelSlice = 1 << 20

// ReservedNameError is the error of Rewrite for a module that already exports a name
// the rewrite would add (Options.ExportName, FuelExport, FloorExport).
type ReservedNameError struct {
	Name string // the export
	Use  string // what the rewrite uses it for
}

func (e *ReservedNameError) Error() string {
	return fmt.Sprintf("instrument: the module already exports %q, a name reserved for %s", e.Name, e.Use)
}

// Options tune Rewrite.
type Options struct {
	// MaxBytes is the limit on the estimated call stack, in bytes: 1 to MaxInt32, or 0
	// for no stack limit.
	MaxBytes int
	// ExportName, when set, exports the stack counter (a mutable i32 global) under that
	// name, so that a host can tell a trap of the stack limit (the counter reads
	// Exceeded) from other traps, and tests can check that it returns to zero. The
	// module must not already export that name. It needs MaxBytes.
	ExportName string
	// Fuel adds fuel metering (see the package documentation).
	Fuel bool
	// InitialFuel is the fuel the module starts with: the budget of its start function
	// and of whatever runs before the host first sets the fuel. At least 0.
	InitialFuel int64
}

// LimitStack returns wasm rewritten so that it traps (unreachable) before its frames
// could take more than about maxBytes of host stack. See the package documentation.
func LimitStack(wasm []byte, maxBytes int) ([]byte, error) {
	return Rewrite(wasm, Options{MaxBytes: maxBytes})
}

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders the non-custom sections as the binary format requires.
var sectionRank = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11, secCode: 12, secData: 13,
}

// sectionNames name the sections in errors.
var sectionNames = map[byte]string{
	secCustom: "custom", secType: "type", secImport: "import", secFunction: "function", secTable: "table",
	secMemory: "memory", secGlobal: "global", secExport: "export", secStart: "start", secElement: "element",
	secCode: "code", secData: "data", secDataCount: "data count", secTag: "tag",
}

// section is one section of the input.
type section struct {
	id      byte
	start   int    // offset of content in the module
	content []byte // the bytes after the id and size
}

// funcType is the arity of a function type.
type funcType struct {
	params, results int
	// slotBytes is the size of the parameters and results in the frame model, and
	// resultBytes that of the results as values (see frameCost).
	slotBytes, resultBytes int
}

// module is what the rewrite needs to know of the input.
type module struct {
	sections []section
	types    []funcType
	// funcs are the type indices of all functions, imported ones first.
	funcs         []uint32
	importedFuncs int
	globals       int // imported and defined
	memories      int // imported and defined
	exports       map[string]bool
	// referenced are the functions that may be called other than by a direct call:
	// exported, the start function, named by an element segment or ref.func, or the
	// callee of a return_call.
	referenced map[uint32]bool
}

// Rewrite returns wasm with a stack limit (Options.MaxBytes), fuel metering
// (Options.Fuel) or both, in one pass. See the package documentation.
func Rewrite(wasm []byte, o Options) ([]byte, error) {
	switch {
	case o.MaxBytes < 0 || o.MaxBytes > math.MaxInt32 || (o.MaxBytes == 0 && !o.Fuel):
		return nil, fmt.Errorf("instrument: the stack limit %d is not within 1..%d bytes", o.MaxBytes, math.MaxInt32)
	case o.ExportName != "" && o.MaxBytes == 0:
		return nil, errors.New("instrument: an export name for the stack counter, but no stack limit")
	case o.InitialFuel < 0:
		return nil, fmt.Errorf("instrument: negative initial fuel %d", o.InitialFuel)
	}
	m, err := parse(wasm)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	if o.ExportName != "" && m.exports[o.ExportName] {
		return nil, &ReservedNameError{Name: o.ExportName, Use: "the stack counter"}
	}
	if o.Fuel {
		if m.memories > 1 {
			// The slow path's memory.grow names memory 0; wazero refuses several anyway.
			return nil, errors.New("instrument: several memories are not supported")
		}
		for _, name := range []string{FuelExport, FloorExport} {
			if m.exports[name] {
				return nil, &ReservedNameError{Name: name, Use: "fuel metering"}
			}
		}
	}
	out, err := m.emit(wasm[:8], o)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	return out, nil
}

// parse splits wasm into sections and decodes the ones the rewrite depends on.
func parse(wasm []byte) (*module, error) {
	switch {
	case len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")):
		return nil, errors.New("not a WebAssembly module (no \\0asm header)")
	case !bytes.Equal(wasm[4:8], []byte{1, 0, 0, 0}):
		return nil, errors.New("not a core WebAssembly module of version 1")
	}
	m := &module{exports: map[string]bool{}, referenced: map[uint32]bool{}}
	r := &reader{b: wasm, pos: 8}
	lastRank := 0
	for !r.done() {
		id := r.byte1()
		size := r.u32()
		start := r.pos
		content := r.bytesN(int(size))
		if r.err != nil {
			return nil, fmt.Errorf("section header: %w", r.err)
		}
		if id != secCustom {
			rank, ok := sectionRank[id]
			switch {
			case !ok:
				return nil, fmt.Errorf("unknown section id %d at offset %#x", id, start)
			case rank <= lastRank:
				return nil, fmt.Errorf("%s section at offset %#x is out of order or repeated", sectionNames[id], start)
			}
			lastRank = rank
		}
		m.sections = append(m.sections, section{id: id, start: start, content: content})
	}
	definedFuncs, bodies := 0, -1
	for _, s := range m.sections {
		var err error
		sr := &reader{b: s.content, base: s.start}
		switch s.id {
		case secType:
			err = m.parseTypes(sr)
		case secImport:
			err = m.parseImports(sr)
		case secFunction:
			err = m.parseFunctions(sr)
			definedFuncs = len(m.funcs) - m.importedFuncs
		case secGlobal:
			err = m.parseGlobals(sr)
		case secExport:
			err = m.parseExports(sr)
		case secCode:
			bodies = int(sr.u32())
			err = sr.err
		case secTag:
			err = errors.New("exception handling (a tag section) is not supported")
		case secMemory:
			err = m.parseMemories(sr)
		case secStart:
			if f := sr.u32(); sr.err == nil && int64(f) >= int64(len(m.funcs)) {
				sr.fail("start function %d, out of range (%d functions)", f, len(m.funcs))
			} else {
				m.referenced[f] = true
			}
			err = sr.end()
		case secTable:
			err = parseTables(sr)
		case secElement:
			err = m.parseElements(sr)
		case secData:
			err = m.parseData(sr)
		case secDataCount:
			sr.u32()
			err = sr.end()
		}
		if err != nil {
			return nil, fmt.Errorf("%s section: %w", sectionNames[s.id], err)
		}
	}
	switch {
	case bodies == -1 && definedFuncs > 0:
		return nil, fmt.Errorf("%d functions are declared but there is no code section", definedFuncs)
	case bodies != -1 && bodies != definedFuncs:
		return nil, fmt.Errorf("%d functions are declared but the code section has %d bodies", definedFuncs, bodies)
	case m.globals >= math.MaxUint32-3 || len(m.funcs) >= math.MaxUint32-1 || len(m.types) >= math.MaxUint32-1:
		return nil, errors.New("no room for the globals, type and function the rewrite adds")
	}
	return m, nil
}

// valType reads a value type and returns its size in the frame model (see frameCost).
func valType(r *reader, what string) int {
	switch t := r.byte1(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f: // i32 i64 f32 f64 funcref externref
		return bytesPerSlot
	case 0x7b: // v128
		return bytesPerVectorSlot
	case 0x63, 0x64:
		r.fail("%s: typed function references are not supported", what)
	default:
		if r.err == nil {
			r.fail("%s: invalid value type %#x", what, t)
		}
	}
	return 0
}

func (m *module) parseTypes(r *reader) error {
	n := r.count(3, "types")
	m.types = make([]funcType, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		if form := r.byte1(); form != 0x60 && r.err == nil {
			r.fail("type %d: form %#x is not a function type (GC types are not supported)", i, form)
			break
		}
		var ft funcType
		ft.params = r.count(1, "parameters")
		for j := 0; j < ft.params; j++ {
			ft.slotBytes += valType(r, "parameter")
		}
		ft.results = r.count(1, "results")
		for j := 0; j < ft.results; j++ {
			size := valType(r, "result")
			ft.slotBytes += size
			ft.resultBytes += size * bytesPerValue / bytesPerSlot
		}
		m.types = append(m.types, ft)
	}
	return r.end()
}

// limits skips the limits of a table or memory.
func limits(r *reader) {
	switch flag := r.byte1(); flag {
	case 0x00, 0x02:
		r.u32()
	case 0x01, 0x03:
		r.u32()
		r.u32()
	default:
		if r.err == nil {
			r.fail("limits flag %#x is not supported (memory64?)", flag)
		}
	}
}

// tableType skips a table type.
func tableType(r *reader) {
	switch t := r.byte1(); t {
	case 0x70, 0x6f:
	default:
		if r.err == nil {
			r.fail("table element type %#x is not supported", t)
		}
	}
	limits(r)
}

func parseTables(r *reader) error {
	n := r.count(3, "tables")
	for i := 0; i < n && r.err == nil; i++ {
		tableType(r)
	}
	return r.end()
}

func (m *module) parseMemories(r *reader) error {
	n := r.count(2, "memories")
	m.memories += n
	for i := 0; i < n && r.err == nil; i++ {
		limits(r)
	}
	return r.end()
}

// name skips a name.
func name(r *reader) string {
	n := r.count(1, "name bytes")
	return string(r.bytesN(n))
}

func (m *module) parseImports(r *reader) error {
	n := r.count(4, "imports")
	for i := 0; i < n && r.err == nil; i++ {
		name(r)
		name(r)
		switch kind := r.byte1(); kind {
		case 0x00:
			t := r.u32()
			if r.err == nil && int64(t) >= int64(len(m.types)) {
				r.fail("import %d: type %d out of range (%d types)", i, t, len(m.types))
			}
			m.funcs = append(m.funcs, t)
			m.importedFuncs++
		case 0x01:
			tableType(r)
		case 0x02:
			limits(r)
			m.memories++
		case 0x03:
			valType(r, "global")
			if mut := r.byte1(); mut > 1 && r.err == nil {
				r.fail("global mutability %#x", mut)
			}
			m.globals++
		case 0x04:
			r.fail("import %d: exception handling (a tag import) is not supported", i)
		default:
			if r.err == nil {
				r.fail("import %d: invalid kind %#x", i, kind)
			}
		}
	}
	return r.end()
}

// constExpr skips a constant expression, its end included.
func (m *module) constExpr(r *reader) {
	for r.err == nil {
		op := r.byte1()
		if op == opEnd {
			return
		}
		m.instruction(r, op, 0)
	}
}

func (m *module) parseGlobals(r *reader) error {
	n := r.count(4, "globals")
	m.globals += n // initializers may name imported globals (and, in extensions, earlier ones)
	for i := 0; i < n && r.err == nil; i++ {
		valType(r, "global")
		if mut := r.byte1(); mut > 1 && r.err == nil {
			r.fail("global %d: mutability %#x", i, mut)
		}
		m.constExpr(r)
	}
	return r.end()
}

func (m *module) parseElements(r *reader) error {
	n := r.count(2, "element segments")
	for i := 0; i < n && r.err == nil; i++ {
		flags := r.u32()
		if flags > 7 {
			r.fail("element segment %d: flags %d", i, flags)
			break
		}
		if flags&3 == 2 {
			r.u32() // table
		}
		if flags&1 == 0 {
			m.constExpr(r) // offset
		}
		if flags&3 != 0 {
			if flags&4 == 0 {
				r.byte1() // elemkind
			} else {
				tableType := r.byte1() // reftype
				if tableType != 0x70 && tableType != 0x6f && r.err == nil {
					r.fail("element segment %d: reference type %#x is not supported", i, tableType)
				}
			}
		}
		items := r.count(1, "elements")
		for j := 0; j < items && r.err == nil; j++ {
			if flags&4 == 0 {
				if f := r.u32(); r.err == nil && int64(f) >= int64(len(m.funcs)) {
					r.fail("element segment %d: function %d, out of range (%d functions)", i, f, len(m.funcs))
				} else {
					m.referenced[f] = true
				}
			} else {
				m.constExpr(r)
			}
		}
	}
	return r.end()
}

func (m *module) parseData(r *reader) error {
	n := r.count(2, "data segments")
	for i := 0; i < n && r.err == nil; i++ {
		switch flags := r.u32(); flags {
		case 0:
			m.constExpr(r)
		case 1:
		case 2:
			r.u32() // memory
			m.constExpr(r)
		default:
			if r.err == nil {
				r.fail("data segment %d: flags %d", i, flags)
			}
		}
		r.bytesN(r.count(1, "data bytes"))
	}
	return r.end()
}

func (m *module) parseFunctions(r *reader) error {
	n := r.count(1, "functions")
	for i := 0; i < n && r.err == nil; i++ {
		t := r.u32()
		if r.err == nil && int64(t) >= int64(len(m.types)) {
			r.fail("function %d: type %d out of range (%d types)", i, t, len(m.types))
		}
		m.funcs = append(m.funcs, t)
	}
	return r.end()
}

func (m *module) parseExports(r *reader) error {
	n := r.count(3, "exports")
	for i := 0; i < n && r.err == nil; i++ {
		m.exports[name(r)] = true
		kind, idx := r.byte1(), r.u32()
		switch {
		case r.err != nil:
		case kind == 0x03 && int64(idx) >= int64(m.globals):
			r.fail("export of global %d, out of range (%d globals)", idx, m.globals)
		case kind == 0x00 && int64(idx) >= int64(len(m.funcs)):
			r.fail("export of function %d, out of range (%d functions)", idx, len(m.funcs))
		case kind == 0x00:
			m.referenced[idx] = true
		}
	}
	return r.end()
}

// end returns r's error, or an error if bytes are left.
func (r *reader) end() error {
	if r.err == nil && r.pos != len(r.b) {
		r.fail("%d bytes left over", len(r.b)-r.pos)
	}
	return r.err
}

// funcType returns the arity of function f, or false if f or its type is out of range.
func (m *module) funcType(f uint32) (funcType, bool) {
	if int64(f) >= int64(len(m.funcs)) {
		return funcType{}, false
	}
	return m.typ(m.funcs[f])
}

// typ returns the arity of type t, or false if t is out of range.
func (m *module) typ(t uint32) (funcType, bool) {
	if int64(t) >= int64(len(m.types)) {
		return funcType{}, false
	}
	return m.types[t], true
}

// added are the globals a rewrite adds after the module's own, and the function.
type added struct {
	stack bool   // the stack counter is added (first)
	fuel  bool   // the fuel and the floor are added (after it), and the slow path
	first uint32 // index of the first added global
	slow  uint32 // index of the slow path function (with fuel)
}

// counter, fuelG and floorG are the indices of the added globals.
func (a added) counter() uint32 { return a.first }
func (a added) fuelG() uint32 {
	if a.stack {
		return a.first + 1
	}
	return a.first
}
func (a added) floorG() uint32 { return a.fuelG() + 1 }

// InitialFloor returns the floor that goes with fuel: the next slice boundary below
// it (see FuelSlice).
func InitialFloor(fuel int64) int64 { return max(fuel-FuelSlice, 0) }

// additions returns what the rewrite adds: the globals, and the items to append to the
// vector sections, by section id (the code section's item is a body with its size).
func (m *module) additions(o Options) (added, map[byte][][]byte) {
	a := added{stack: o.MaxBytes > 0, fuel: o.Fuel, first: uint32(m.globals), slow: uint32(len(m.funcs))}
	items := map[byte][][]byte{}
	export := func(name string, idx uint32) {
		e := append(appendName(nil, name), 0x03)
		items[secExport] = append(items[secExport], appendU32(e, idx))
	}
	if a.stack {
		items[secGlobal] = append(items[secGlobal], []byte{0x7f, 0x01, opI32Const, 0x00, opEnd}) // mutable i32 = 0
		if o.ExportName != "" {
			export(o.ExportName, a.counter())
		}
	}
	if a.fuel {
		fuel := appendS64([]byte{0x7e, 0x01, opI64Const}, o.InitialFuel) // mutable i64
		floor := appendS64([]byte{0x7e, 0x01, opI64Const}, InitialFloor(o.InitialFuel))
		items[secGlobal] = append(items[secGlobal], append(fuel, opEnd), append(floor, opEnd))
		export(FuelExport, a.fuelG())
		export(FloorExport, a.floorG())
		items[secType] = [][]byte{{0x60, 0, 0}} // () -> ()
		items[secFunction] = [][]byte{appendU32(nil, uint32(len(m.types)))}
		body := m.slowBody(a)
		items[secCode] = [][]byte{append(appendU32(nil, uint32(len(body))), body...)}
	}
	return a, items
}

// slowBody returns the body of the slow path, which a check calls when the fuel falls
// below the floor:
//
//	if floor == MaxInt64: unreachable     ;; the host stopped the call
//	drop(memory.grow(0))                  ;; into Go, where the goroutine can be preempted
//	if fuel < 0: unreachable              ;; out of fuel
//	floor = max(fuel - FuelSlice, 0)      ;; the next slice
//
// Guest code runs without entering Go otherwise, and Go can neither preempt a goroutine
// in guest code nor stop the world (for a garbage collection) until it returns to Go:
// the slices bound that time. memory.grow(0) changes nothing, and wazero serves it in
// Go. (A module without a memory skips that step; the host requires one.)
func (m *module) slowBody(a added) []byte {
	b := []byte{1, 1, 0x7e} // one local: i64
	b = appendOpU32(b, opGlobalGet, a.floorG())
	b = appendS64(append(b, opI64Const), math.MaxInt64)
	b = append(b, opI64Eq, opIf, blockEmpty, opUnreachable, opEnd)
	if m.memories > 0 {
		b = append(b, opI32Const, 0, opMemoryGrow, 0, opDrop)
	}
	b = appendOpU32(b, opGlobalGet, a.fuelG())
	b = append(b, opI64Const, 0, opI64LtS, opIf, blockEmpty, opUnreachable, opEnd)
	b = appendOpU32(b, opGlobalGet, a.fuelG())
	b = appendS64(append(b, opI64Const), FuelSlice)
	b = append(b, opI64Sub)
	b = appendOpU32(b, opLocalTee, 0)
	b = append(b, opI64Const, 0)
	b = appendOpU32(b, opLocalGet, 0)
	b = append(b, opI64Const, 0, opI64GtS, opSelect)
	b = appendOpU32(b, opGlobalSet, a.floorG())
	return append(b, opEnd)
}

// emit writes the rewritten module after header.
func (m *module) emit(header []byte, o Options) ([]byte, error) {
	a, items := m.additions(o)
	out := make([]byte, 0, len(header)+sumLen(m.sections)*5/4+256)
	out = append(out, header...)
	// addMissing appends the sections that the rewrite adds to and the module lacks,
	// of rank below limit, in order.
	wrote := map[byte]bool{}
	addMissing := func(limit int) {
		for _, id := range []byte{secType, secFunction, secGlobal, secExport, secCode} {
			if !wrote[id] && sectionRank[id] < limit && len(items[id]) > 0 {
				out = appendSection(out, id, appendVecItems(nil, items[id]))
				wrote[id] = true
			}
		}
	}
	// Sections still missing after the last non-custom one go before the custom
	// sections that follow it, which stay last (wazero v1.12.0 refuses a module that
	// ends with a custom section holding nothing after its name: that must not change).
	last := -1
	for i, s := range m.sections {
		if s.id != secCustom {
			last = i
		}
	}
	if last == -1 {
		addMissing(math.MaxInt)
	}
	for i, s := range m.sections {
		if s.id != secCustom {
			addMissing(sectionRank[s.id])
		}
		if i == last+1 {
			addMissing(math.MaxInt)
		}
		switch s.id {
		case secType, secFunction, secGlobal, secExport:
			out = appendSection(out, s.id, appendVecItems(s.content, items[s.id]))
			wrote[s.id] = true
		case secCode:
			code, err := m.rewriteCode(s, a, o.MaxBytes, items[secCode])
			if err != nil {
				return nil, fmt.Errorf("code section: %w", err)
			}
			out = appendSection(out, secCode, code)
			wrote[s.id] = true
		default:
			out = appendSection(out, s.id, s.content)
		}
	}
	addMissing(math.MaxInt)
	return out, nil
}

func sumLen(ss []section) int {
	n := 0
	for _, s := range ss {
		n += len(s.content)
	}
	return n
}

// appendSection appends a section with its id and size.
func appendSection(out []byte, id byte, content []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(content)))
	return append(out, content...)
}

// appendVecItems returns the content of a vector section (count, items) with items
// added at the end; content nil stands for an empty vector. The count was decoded by
// parse, so it is valid.
func appendVecItems(content []byte, items [][]byte) []byte {
	var n uint32
	var rest []byte
	if content != nil {
		r := &reader{b: content}
		n = r.u32()
		rest = content[r.pos:]
	}
	out := appendU32(make([]byte, 0, len(content)+5+32*len(items)), n+uint32(len(items)))
	out = append(out, rest...)
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}
