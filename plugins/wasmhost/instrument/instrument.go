// Package instrument rewrites WebAssembly modules so that their call stack is bounded.
//
// wazero's optimizing engine keeps a guest's call stack in a Go slice that it doubles
// as the guest recurses, up to a fixed ceiling of 50,000,000 bytes; a guest that
// recurses without end makes the host allocate about 160 MB before it traps. LimitStack
// makes the guest itself trap long before that: it adds a mutable i32 global, the
// stack counter, and rewrites every function so that
//
//   - on entry it traps with unreachable if counter + cost would exceed the limit,
//     and otherwise adds cost to the counter (cost is the function's estimated frame
//     size, see frameCost);
//   - before every way out (the final end, return, a br, br_if or br_table to the
//     function's own label, return_call, return_call_indirect) it subtracts cost again.
//
// On a trap the counter is left at Exceeded (when the limit caused it) or wherever it
// was; the host discards trapped instances, so a trap needs no cleanup.
//
// Everything else is copied byte for byte: no function, type, local or global index
// changes (the counter is the last global, the scratch local a function may need is
// its last local), custom sections (the name section included) are kept, and only the
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
// global or local (out of range in the input) is refused, so a guest cannot reset its
// counter. Every vector count is checked against the bytes left before anything is
// allocated, which also spares wazero's decoder (it allocates what a count says)
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

// Options tune Rewrite.
type Options struct {
	// MaxBytes is the limit on the estimated call stack, in bytes: 1 to MaxInt32.
	MaxBytes int
	// ExportName, when set, exports the stack counter (a mutable i32 global) under that
	// name, so that a host can tell a trap of the stack limit (the counter reads
	// Exceeded) from other traps, and tests can check that it returns to zero. The
	// module must not already export that name.
	ExportName string
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
	exports       map[string]bool
}

// Rewrite is LimitStack with more options.
func Rewrite(wasm []byte, o Options) ([]byte, error) {
	if o.MaxBytes < 1 || o.MaxBytes > math.MaxInt32 {
		return nil, fmt.Errorf("instrument: the stack limit %d is not within 1..%d bytes", o.MaxBytes, math.MaxInt32)
	}
	m, err := parse(wasm)
	if err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	if o.ExportName != "" && m.exports[o.ExportName] {
		return nil, fmt.Errorf("instrument: the module already exports %q, the name reserved for the stack counter", o.ExportName)
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
	m := &module{exports: map[string]bool{}}
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
			err = parseMemories(sr)
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
	case m.globals >= math.MaxUint32:
		return nil, errors.New("no room for one more global")
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

func parseMemories(r *reader) error {
	n := r.count(2, "memories")
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
			m.funcs = append(m.funcs, r.u32())
			m.importedFuncs++
		case 0x01:
			tableType(r)
		case 0x02:
			limits(r)
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
				r.u32() // function index
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
		m.funcs = append(m.funcs, r.u32())
	}
	return r.end()
}

func (m *module) parseExports(r *reader) error {
	n := r.count(3, "exports")
	for i := 0; i < n && r.err == nil; i++ {
		m.exports[name(r)] = true
		kind, idx := r.byte1(), r.u32()
		if kind == 0x03 && r.err == nil && int64(idx) >= int64(m.globals) {
			r.fail("export of global %d, out of range (%d globals)", idx, m.globals)
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

// emit writes the rewritten module after header.
func (m *module) emit(header []byte, o Options) ([]byte, error) {
	counter := uint32(m.globals) // the new global comes after every other one
	out := make([]byte, 0, len(header)+sumLen(m.sections)*5/4+64)
	out = append(out, header...)
	newGlobal := []byte{0x7f, 0x01, 0x41, 0x00, 0x0b} // mutable i32 = i32.const 0
	var newExport []byte
	if o.ExportName != "" {
		newExport = append(appendName(nil, o.ExportName), 0x03)
		newExport = appendU32(newExport, counter)
	}
	wroteGlobal, wroteExport := false, newExport == nil
	for _, s := range m.sections {
		rank := sectionRank[s.id]
		if !wroteGlobal && s.id != secCustom && rank > sectionRank[secGlobal] {
			out = appendSection(out, secGlobal, append([]byte{1}, newGlobal...))
			wroteGlobal = true
		}
		if !wroteExport && s.id != secCustom && rank > sectionRank[secExport] {
			out = appendSection(out, secExport, append([]byte{1}, newExport...))
			wroteExport = true
		}
		switch s.id {
		case secGlobal:
			out = appendSection(out, secGlobal, appendVecItem(s.content, newGlobal))
			wroteGlobal = true
		case secExport:
			if newExport != nil {
				out = appendSection(out, secExport, appendVecItem(s.content, newExport))
				wroteExport = true
			} else {
				out = appendSection(out, s.id, s.content)
			}
		case secCode:
			code, err := m.rewriteCode(s, counter, o.MaxBytes)
			if err != nil {
				return nil, fmt.Errorf("code section: %w", err)
			}
			out = appendSection(out, secCode, code)
		default:
			out = appendSection(out, s.id, s.content)
		}
	}
	if !wroteGlobal {
		out = appendSection(out, secGlobal, append([]byte{1}, newGlobal...))
	}
	if !wroteExport {
		out = appendSection(out, secExport, append([]byte{1}, newExport...))
	}
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

// appendVecItem returns the content of a vector section (count, items) with item added
// at the end. The count was decoded by parse, so it is valid.
func appendVecItem(content, item []byte) []byte {
	r := &reader{b: content}
	n := r.u32()
	out := appendU32(make([]byte, 0, len(content)+len(item)+5), n+1)
	out = append(out, content[r.pos:]...)
	return append(out, item...)
}
