package instrument

import "fmt"

// Opcodes the rewrite looks at or emits.
const (
	opUnreachable        = 0x00
	opBlock              = 0x02
	opLoop               = 0x03
	opIf                 = 0x04
	opElse               = 0x05
	opEnd                = 0x0b
	opBr                 = 0x0c
	opBrIf               = 0x0d
	opBrTable            = 0x0e
	opReturn             = 0x0f
	opCall               = 0x10
	opCallIndirect       = 0x11
	opReturnCall         = 0x12
	opReturnCallIndirect = 0x13
	opLocalGet           = 0x20
	opLocalSet           = 0x21
	opGlobalGet          = 0x23
	opGlobalSet          = 0x24
	opI32Const           = 0x41
	opI32GtU             = 0x4b
	opI32Add             = 0x6a
	opI32Sub             = 0x6b
	blockEmpty           = 0x40
)

// editKind says what to insert before an instruction.
type editKind uint8

const (
	// editExit: the exit sequence (subtract the cost), before an instruction that
	// always leaves the function.
	editExit editKind = iota
	// editBrIf: the exit sequence, run only when a br_if to the function's label is
	// taken.
	editBrIf
	// editBrTable: the exit sequence, run only when a br_table picks the function's
	// label; outer[i] tells whether target i (the default last) is that label.
	editBrTable
)

// edit is code to insert before the instruction at offset at of the body's expression.
type edit struct {
	at    int
	kind  editKind
	outer []bool
}

// body is the result of scanning one function body.
type body struct {
	localDecls []byte // the locals' declarations, count included
	locals     int    // declared locals
	localBytes int    // their size in the frame model
	expr       []byte // the instructions, the final end included
	valueBytes int    // the values the instructions produce, see frameCost
	edits      []edit
	scratch    bool // a br_if or br_table needs a scratch i32 local
}

// rewriteCode returns the content of the rewritten code section.
func (m *module) rewriteCode(s section, counter uint32, maxBytes int) ([]byte, error) {
	r := &reader{b: s.content, base: s.start}
	n := r.count(2, "bodies")
	out := appendU32(make([]byte, 0, len(s.content)*5/4+64), uint32(n))
	var buf []byte
	for i := 0; i < n; i++ {
		size := r.u32()
		start := r.pos
		raw := r.bytesN(int(size))
		if r.err != nil {
			return nil, r.err
		}
		fidx := uint32(m.importedFuncs + i)
		ft, ok := m.funcType(fidx)
		if !ok {
			return nil, fmt.Errorf("function %d: its type index is out of range", fidx)
		}
		b, err := m.scan(&reader{b: raw, base: s.start + start}, ft)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fidx, err)
		}
		buf = b.emit(buf[:0], ft, counter, maxBytes)
		out = appendU32(out, uint32(len(buf)))
		out = append(out, buf...)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// scan decodes a function body: its locals, then every instruction, noting where code
// must be inserted.
func (m *module) scan(r *reader, ft funcType) (*body, error) {
	b := &body{}
	groups := r.count(2, "local declarations")
	for i := 0; i < groups && r.err == nil; i++ {
		n := r.u32()
		size := valType(r, "local")
		if r.err == nil && uint64(b.locals)+uint64(n) > MaxLocals {
			r.fail("more than %d locals", MaxLocals)
		}
		b.locals += int(n)
		b.localBytes += int(n) * size
	}
	if r.err != nil {
		return nil, r.err
	}
	b.localDecls = r.b[:r.pos]
	exprStart := r.pos
	depth := 0 // blocks open inside the function's own block
	for {
		if r.done() {
			if r.err == nil {
				r.fail("the body ends without its final end")
			}
			return nil, r.err
		}
		at := r.pos - exprStart
		op := r.byte1()
		switch op {
		case opBlock, opLoop, opIf:
			bt := m.blockType(r)
			b.valueBytes += bt.resultBytes
			depth++
		case opElse:
			if depth == 0 {
				r.fail("else outside an if")
			}
		case opEnd:
			if depth == 0 {
				if r.pos != len(r.b) {
					r.fail("%d bytes after the function's final end", len(r.b)-r.pos)
					return nil, r.err
				}
				b.edits = append(b.edits, edit{at: at, kind: editExit})
				b.expr = r.b[exprStart:]
				return b, nil
			}
			depth--
		case opBr:
			if branch(r, depth) {
				b.edits = append(b.edits, edit{at: at, kind: editExit})
			}
		case opBrIf:
			if branch(r, depth) {
				b.edits = append(b.edits, edit{at: at, kind: editBrIf})
				b.scratch = true
			}
		case opBrTable:
			n := r.count(1, "br_table targets")
			outer := make([]bool, n+1)
			some, all := false, true
			for i := range outer {
				outer[i] = branch(r, depth)
				some = some || outer[i]
				all = all && outer[i]
			}
			switch {
			case all:
				b.edits = append(b.edits, edit{at: at, kind: editExit})
			case some:
				b.edits = append(b.edits, edit{at: at, kind: editBrTable, outer: outer})
				b.scratch = true
			}
		case opReturn:
			b.edits = append(b.edits, edit{at: at, kind: editExit})
		case opCall, opReturnCall:
			f := r.u32()
			ft, ok := m.funcType(f)
			if !ok && r.err == nil {
				r.fail("call of function %d, out of range", f)
			}
			b.valueBytes += ft.resultBytes
			if op == opReturnCall {
				b.edits = append(b.edits, edit{at: at, kind: editExit})
			}
		case opCallIndirect, opReturnCallIndirect:
			t := r.u32()
			r.u32() // table
			ft, ok := m.typ(t)
			if !ok && r.err == nil {
				r.fail("call_indirect of type %d, out of range", t)
			}
			b.valueBytes += ft.resultBytes
			if op == opReturnCallIndirect {
				b.edits = append(b.edits, edit{at: at, kind: editExit})
			}
		default:
			b.valueBytes += m.instruction(r, op, ft.params+b.locals)
		}
	}
}

// branch reads a label index and reports whether it names the function's own label,
// depth blocks out.
func branch(r *reader, depth int) bool {
	l := r.u32()
	if r.err == nil && int64(l) > int64(depth) {
		r.fail("branch to label %d, only %d blocks are open", l, depth+1)
	}
	return r.err == nil && int(l) == depth
}

// blockType reads a block type and returns its arity.
func (m *module) blockType(r *reader) funcType {
	v := r.sleb(33)
	switch {
	case r.err != nil:
		return funcType{}
	case v >= 0:
		ft, ok := m.typ(uint32(v))
		if !ok {
			r.fail("block type %d is out of range", v)
		}
		return ft
	}
	switch byte(v & 0x7f) {
	case blockEmpty:
		return funcType{}
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f:
		return funcType{results: 1, slotBytes: bytesPerSlot, resultBytes: bytesPerValue}
	case 0x7b:
		return funcType{results: 1, slotBytes: bytesPerVectorSlot, resultBytes: bytesPerVectorValue}
	}
	r.fail("invalid block type %d", v)
	return funcType{}
}

// memarg reads a memory access's alignment (whose bit 6 announces a memory index, as
// multi-memory encodes it) and offset.
func memarg(r *reader) {
	if align := r.u32(); align&0x40 != 0 {
		r.u32()
	}
	r.u32()
}

// instruction reads the immediates of every instruction that scan does not handle
// itself, and returns the size of the values it produces in the frame model (see
// frameCost): bytesPerValue for a scalar, bytesPerVectorValue for a v128. locals is
// the number of locals, parameters included.
//
// It refuses local and global indices out of range: the rewrite adds a local and a
// global, and must not make an invalid module that names them valid (it could then
// reset the counter).
func (m *module) instruction(r *reader, op byte, locals int) int {
	switch {
	case op == opUnreachable || op == 0x01: // nop
		return 0
	case op == 0x1a: // drop
		return 0
	case op == 0x1b: // select, perhaps of v128
		return bytesPerVectorValue
	case op == 0x1c: // select t*
		n := r.count(1, "select types")
		size := 0
		for i := 0; i < n; i++ {
			size += valType(r, "select") * bytesPerValue / bytesPerSlot
		}
		return size
	case op == opLocalGet || op == 0x22 || op == opLocalSet: // no new value
		if l := r.u32(); r.err == nil && int64(l) >= int64(locals) {
			r.fail("local %d out of range (%d locals)", l, locals)
		}
		return 0
	case op == opGlobalGet || op == opGlobalSet:
		if g := r.u32(); r.err == nil && int64(g) >= int64(m.globals) {
			r.fail("global %d out of range (%d globals)", g, m.globals)
		}
		if op == opGlobalSet {
			return 0
		}
		return bytesPerValue
	case op == 0x25: // table.get
		r.u32()
		return bytesPerValue
	case op == 0x26: // table.set
		r.u32()
		return 0
	case op >= 0x28 && op <= 0x35: // loads
		memarg(r)
		return bytesPerValue
	case op >= 0x36 && op <= 0x3e: // stores
		memarg(r)
		return 0
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
		return bytesPerValue
	case op == opI32Const:
		r.sleb(32)
		return bytesPerValue
	case op == 0x42: // i64.const
		r.sleb(64)
		return bytesPerValue
	case op == 0x43: // f32.const
		r.bytesN(4)
		return bytesPerValue
	case op == 0x44: // f64.const
		r.bytesN(8)
		return bytesPerValue
	case op >= 0x45 && op <= 0xc4: // numeric, sign extension
		return bytesPerValue
	case op == 0xd0: // ref.null
		if ht := r.sleb(33); r.err == nil && ht != -16 && ht != -17 { // func, extern
			r.fail("ref.null of heap type %d is not supported", ht)
		}
		return bytesPerValue
	case op == 0xd1: // ref.is_null
		return bytesPerValue
	case op == 0xd2: // ref.func
		r.u32()
		return bytesPerValue
	case op == 0xfc:
		return prefixFC(r)
	case op == 0xfd:
		return prefixFD(r)
	case op == 0xfe:
		return prefixFE(r)
	case op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x0a || op == 0x18 || op == 0x19 || op == 0x1f:
		r.fail("opcode %#x: exception handling is not supported", op)
	case op == 0x14 || op == 0x15 || (op >= 0xd3 && op <= 0xd6) || op == 0xfb:
		r.fail("opcode %#x: typed function references and GC are not supported", op)
	default:
		r.fail("unknown opcode %#x", op)
	}
	return 0
}

// prefixFC reads a 0xFC instruction (saturating truncations, bulk memory, tables)
// and returns the size of its value, as instruction does.
func prefixFC(r *reader) int {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub <= 7: // iNN.trunc_sat_fMM_s/u
		return bytesPerValue
	case sub == 8: // memory.init data mem
		r.u32()
		r.u32()
	case sub == 9: // data.drop
		r.u32()
	case sub == 10: // memory.copy mem mem
		r.u32()
		r.u32()
	case sub == 11: // memory.fill mem
		r.u32()
	case sub == 12: // table.init elem table
		r.u32()
		r.u32()
	case sub == 13: // elem.drop
		r.u32()
	case sub == 14: // table.copy table table
		r.u32()
		r.u32()
	case sub == 15 || sub == 16: // table.grow, table.size
		r.u32()
		return bytesPerValue
	case sub == 17: // table.fill
		r.u32()
	default:
		r.fail("unknown opcode 0xfc %d", sub)
	}
	return 0
}

// prefixFD reads a SIMD instruction (fixed-width and relaxed) and returns the size of
// its value, as instruction does (all count as v128).
func prefixFD(r *reader) int {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub <= 10: // v128.load*
		memarg(r)
		return bytesPerVectorValue
	case sub == 11: // v128.store
		memarg(r)
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.bytesN(16)
		return bytesPerVectorValue
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.byte1()
		return bytesPerVectorValue
	case sub >= 84 && sub <= 87: // v128.loadNN_lane
		memarg(r)
		r.byte1()
		return bytesPerVectorValue
	case sub >= 88 && sub <= 91: // v128.storeNN_lane
		memarg(r)
		r.byte1()
	case sub == 92 || sub == 93: // v128.load32_zero, v128.load64_zero
		memarg(r)
		return bytesPerVectorValue
	case sub <= 0x113: // every other one has no immediate (relaxed SIMD ends at 0x113)
		return bytesPerVectorValue
	default:
		r.fail("unknown opcode 0xfd %d", sub)
	}
	return 0
}

// prefixFE reads an atomic instruction (threads) and returns the size of its value, as
// instruction does.
func prefixFE(r *reader) int {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub == 3: // atomic.fence
		if b := r.byte1(); b != 0 && r.err == nil {
			r.fail("atomic.fence with flags %#x", b)
		}
	case sub <= 2 || (sub >= 0x10 && sub <= 0x16): // notify, waits, loads
		memarg(r)
		return bytesPerValue
	case sub >= 0x17 && sub <= 0x1d: // stores
		memarg(r)
	case sub >= 0x1e && sub <= 0x4e: // read-modify-write
		memarg(r)
		return bytesPerValue
	default:
		r.fail("unknown opcode 0xfe %d", sub)
	}
	return 0
}

// cost is the frame cost of the function, its scratch local included.
func (b *body) cost(ft funcType) int64 {
	localBytes := b.localBytes
	if b.scratch {
		localBytes += bytesPerSlot
	}
	return frameCost(ft, localBytes, b.valueBytes)
}

// emit appends the rewritten body (without its size) to out.
func (b *body) emit(out []byte, ft funcType, counter uint32, maxBytes int) []byte {
	scratch := uint32(ft.params + b.locals) // index of the scratch local
	if b.scratch {
		// One more declaration group: (1 x i32).
		r := &reader{b: b.localDecls}
		groups := r.u32()
		out = appendU32(out, groups+1)
		out = append(out, b.localDecls[r.pos:]...)
		out = append(out, 1, 0x7f)
	} else {
		out = append(out, b.localDecls...)
	}
	cost := b.cost(ft)

	// Entry: trap if counter > maxBytes - cost, else counter += cost. The counter never
	// exceeds maxBytes, so neither the subtraction nor the addition overflows.
	if cost > int64(maxBytes) {
		out = appendTrap(out, counter)
	} else {
		out = appendOpU32(out, opGlobalGet, counter)
		out = append(out, opI32Const)
		out = appendS32(out, int32(int64(maxBytes)-cost))
		out = append(out, opI32GtU, opIf, blockEmpty)
		out = appendTrap(out, counter)
		out = append(out, opEnd)
		out = appendAdjust(out, counter, cost, opI32Add)
	}

	prev := 0
	for _, e := range b.edits {
		out = append(out, b.expr[prev:e.at]...)
		prev = e.at
		switch e.kind {
		case editExit:
			out = appendAdjust(out, counter, cost, opI32Sub)
		case editBrIf:
			// cond -> scratch; if (scratch) { exit }; scratch; br_if L (copied below)
			out = appendOpU32(out, opLocalSet, scratch)
			out = appendOpU32(out, opLocalGet, scratch)
			out = append(out, opIf, blockEmpty)
			out = appendAdjust(out, counter, cost, opI32Sub)
			out = append(out, opEnd)
			out = appendOpU32(out, opLocalGet, scratch)
		case editBrTable:
			// index -> scratch;
			// block $done { block $exit { br_table (to $exit where the original
			// targets the function's label, else to $done) scratch } exit };
			// scratch; br_table (the original, copied below)
			out = appendOpU32(out, opLocalSet, scratch)
			out = append(out, opBlock, blockEmpty, opBlock, blockEmpty)
			out = appendOpU32(out, opLocalGet, scratch)
			out = append(out, opBrTable)
			out = appendU32(out, uint32(len(e.outer)-1))
			for _, o := range e.outer {
				if o {
					out = append(out, 0) // $exit
				} else {
					out = append(out, 1) // $done
				}
			}
			out = append(out, opEnd)
			out = appendAdjust(out, counter, cost, opI32Sub)
			out = append(out, opEnd)
			out = appendOpU32(out, opLocalGet, scratch)
		}
	}
	return append(out, b.expr[prev:]...)
}

// appendOpU32 appends an instruction with one u32 immediate.
func appendOpU32(out []byte, op byte, idx uint32) []byte {
	return appendU32(append(out, op), idx)
}

// appendAdjust appends counter = counter op cost.
func appendAdjust(out []byte, counter uint32, cost int64, op byte) []byte {
	out = appendOpU32(out, opGlobalGet, counter)
	out = append(out, opI32Const)
	out = appendS32(out, int32(cost))
	out = append(out, op)
	return appendOpU32(out, opGlobalSet, counter)
}

// appendTrap appends counter = Exceeded; unreachable.
func appendTrap(out []byte, counter uint32) []byte {
	out = append(out, opI32Const)
	out = appendS32(out, -1)
	out = appendOpU32(out, opGlobalSet, counter)
	return append(out, opUnreachable)
}
