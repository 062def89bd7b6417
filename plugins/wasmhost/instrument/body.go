package instrument

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

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
	opLocalTee           = 0x22
	opGlobalGet          = 0x23
	opGlobalSet          = 0x24
	opDrop               = 0x1a
	opSelect             = 0x1b
	opMemoryGrow         = 0x40
	opI64Eq              = 0x51
	opI64GtS             = 0x55
	opI64ShrU            = 0x88
	opI64ExtendI32U      = 0xad
	opI32Const           = 0x41
	opI64Const           = 0x42
	opI64LtS             = 0x53
	opI32GtU             = 0x4b
	opI32Add             = 0x6a
	opI32Sub             = 0x6b
	opI64Sub             = 0x7d
	blockEmpty           = 0x40
)

// editKind says what to insert before an instruction.
type editKind uint8

const (
	// editExit: the exit sequence (restore the stack counter, store the fuel; see
	// appendExit), before an instruction that always leaves the function.
	editExit editKind = iota
	// editBrIf: the exit sequence, run only when a br_if to the function's label is
	// taken.
	editBrIf
	// editBrTable: the exit sequence, run only when a br_table picks the function's
	// label; outer[i] tells whether target i (the default last) is that label.
	editBrTable
	// editFuel: the charge point of segment seg (a check at a loop header, a plain
	// charge elsewhere; nothing if the segment was merged).
	editFuel
	// editBulk: the charge of a bulk memory or table operation, by its count (see
	// bulkShift).
	editBulk
	// editStore: store the function's fuel (a local) into the global, before a call
	// of a function that is not a leaf; editLoad: load it back after the call.
	editStore
	editLoad
)

// edit is code to insert before the instruction at offset at of the body's expression.
type edit struct {
	at    int
	kind  editKind
	outer []bool
	seg   int  // editFuel: the segment
	shift byte // editBulk: the count's unit is 2^shift
}

// segKind says where a segment of fuel accounting starts.
type segKind uint8

const (
	segEntry segKind = iota // the function's entry: charged with a check
	segLoop                 // a loop header: charged with a check
	segArm                  // the start of an if's then or else arm
	segJoin                 // after the end of a block or if that a branch targets
)

// segment is the code charged at one charge point.
type segment struct {
	kind segKind
	// parent is the segment current where the construct that starts this one began:
	// its charge point is on every path to this one, so this one's cost can move
	// there (arms and joins only).
	parent int
	cost   int64
	merged bool // folded into parent: no charge point
}

// ctrl is an open block, loop or if, for the fuel accounting.
type ctrl struct {
	outer    int // the segment current where it began
	loop     bool
	targeted bool // a branch targets its label (for a block or if: its end)
}

// callSite is a call of a function that may be instrumented: a defined function, or
// any through a table (callee noCallee).
type callSite struct {
	at, next int // offsets of the call and of the instruction after it
	callee   uint32
	seg      int // the segment the call is in
}

// noCallee is the callee of a call_indirect.
const noCallee = math.MaxUint32

// body is the result of scanning one function body.
type body struct {
	localDecls []byte // the locals' declarations, count included
	locals     int    // declared locals
	localBytes int    // their size in the frame model
	expr       []byte // the instructions, the final end included
	valueBytes int    // the values the instructions produce, see frameCost
	edits      []edit
	scratch    bool // a br_if, br_table or bulk operation needs a scratch i32 local
	fuel       bool // scanned with fuel: segs holds the segments
	// simple: no loop, no call of a defined function, no call_indirect, no bulk
	// operation. Such a function that only direct calls reach is a leaf the rewrite
	// leaves alone (see plan).
	simple   bool
	segs     []segment
	calls    []callSite
	leafCost int64 // of a leaf: the fuel of all its instructions
	// stack: the function counts its frame (a local keeps the counter's value at
	// entry), and checks that reserve more bytes fit above it (its leaves' frames).
	stack   bool
	reserve int64
	// metered: the function burns fuel itself, in a local (see plan).
	metered bool
}

// rewriteCode returns the content of the rewritten code section, with extra (bodies
// with their sizes) appended.
func (m *module) rewriteCode(s section, a added, maxBytes int, extra [][]byte) ([]byte, error) {
	bodies, err := m.scanCode(s, a)
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(s.content)*5/4+64), uint32(len(bodies)+len(extra)))
	var buf []byte
	for i, b := range bodies {
		ft, _ := m.funcType(uint32(m.importedFuncs + i))
		buf = b.emit(buf[:0], ft, a, maxBytes)
		out = appendU32(out, uint32(len(buf)))
		out = append(out, buf...)
	}
	for _, e := range extra {
		out = append(out, e...)
	}
	return out, nil
}

// scanCode scans every body of the code section s, then plans the instrumentation
// (see plan).
func (m *module) scanCode(s section, a added) ([]*body, error) {
	r := &reader{b: s.content, base: s.start}
	n := r.count(2, "bodies")
	bodies := make([]*body, 0, n)
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
		b, err := m.scan(&reader{b: raw, base: s.start + start}, ft, a.fuel)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", fidx, err)
		}
		bodies = append(bodies, b)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	m.plan(bodies, a)
	return bodies, nil
}

// plan decides what each function does.
//
// A leaf is a simple function (see body.simple) that only direct calls reach. It cannot
// repeat anything nor call anything but the host, so the rewrite leaves it alone: its
// callers add its whole cost (every instruction in it) to the fuel of the segment of
// the call, and reserve room for its frame above their own in their stack check (at
// most one leaf frame is above a function at a time). Small helpers then cost nothing
// extra; a long leaf is overcharged, never undercharged.
//
// Every other function counts its frame and keeps its fuel in a local: loops and basic
// blocks charge a register, not memory, and only calls and exits touch the global (a
// callee reads it at entry): it stores the local before a call of a function that is
// not a leaf (or any call_indirect) and loads it back after.
func (m *module) plan(bodies []*body, a added) {
	for i, b := range bodies {
		isLeaf := b.simple && !m.referenced[uint32(m.importedFuncs+i)]
		b.stack, b.metered = a.stack && !isLeaf, a.fuel && !isLeaf
		if isLeaf {
			for _, s := range b.segs {
				b.leafCost += s.cost
			}
		}
	}
	// leaf returns the callee of c if it is a leaf.
	leaf := func(c callSite) *body {
		if c.callee == noCallee {
			return nil
		}
		if callee := bodies[int(c.callee)-m.importedFuncs]; callee.simple && !callee.stack && !callee.metered {
			return callee
		}
		return nil
	}
	for _, b := range bodies {
		if !b.stack && !b.metered {
			continue
		}
		stored := false
		for _, c := range b.calls {
			if l := leaf(c); l != nil {
				if b.metered {
					b.segs[c.seg].cost += l.leafCost
				}
				if b.stack {
					ft, _ := m.funcType(c.callee)
					b.reserve = max(b.reserve, l.cost(ft))
				}
				continue
			}
			if b.metered {
				b.edits = append(b.edits, edit{at: c.at, kind: editStore}, edit{at: c.next, kind: editLoad})
				stored = true
			}
		}
		if stored {
			// Charges go before a store at the same offset: the callee must see them.
			slices.SortStableFunc(b.edits, func(x, y edit) int { return cmp.Compare(x.at, y.at) })
		}
	}
}

// scan decodes a function body: its locals, then every instruction, noting where code
// must be inserted and, when fuel is set, what each segment costs.
func (m *module) scan(r *reader, ft funcType, fuel bool) (*body, error) {
	b := &body{fuel: fuel, simple: true}
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
	var ctrls []ctrl // the blocks open inside the function's own block
	cur := 0         // the segment the code scanned now belongs to
	if fuel {
		b.segs = append(b.segs, segment{kind: segEntry, parent: -1})
	}
	// startSeg starts a segment whose charge point goes before the next instruction.
	startSeg := func(kind segKind, parent int) {
		b.segs = append(b.segs, segment{kind: kind, parent: parent})
		cur = len(b.segs) - 1
		b.edits = append(b.edits, edit{at: r.pos - exprStart, kind: editFuel, seg: cur})
	}
	for {
		if r.done() {
			if r.err == nil {
				r.fail("the body ends without its final end")
			}
			return nil, r.err
		}
		at := r.pos - exprStart
		op := r.byte1()
		weight := int64(fuelInstruction)
		switch op {
		case opBlock, opLoop, opIf:
			bt := m.blockType(r)
			b.valueBytes += bt.resultBytes
			ctrls = append(ctrls, ctrl{outer: cur, loop: op == opLoop})
			if op == opLoop {
				b.simple = false
			}
			if !fuel || r.err != nil {
				break
			}
			switch op {
			case opBlock:
			case opLoop:
				startSeg(segLoop, -1)
			case opIf:
				b.segs[cur].cost += fuelInstruction // the conditional branch
				startSeg(segArm, ctrls[len(ctrls)-1].outer)
			}
			weight = 0
		case opElse:
			if len(ctrls) == 0 {
				r.fail("else outside an if")
			}
			if fuel && r.err == nil {
				b.segs[cur].cost += fuelInstruction // the then arm's jump to the end
				startSeg(segArm, ctrls[len(ctrls)-1].outer)
			}
			weight = 0
		case opEnd:
			if len(ctrls) == 0 {
				if r.pos != len(r.b) {
					r.fail("%d bytes after the function's final end", len(r.b)-r.pos)
					return nil, r.err
				}
				b.edits = append(b.edits, edit{at: at, kind: editExit})
				b.expr = r.b[exprStart:]
				return b, nil
			}
			c := ctrls[len(ctrls)-1]
			ctrls = ctrls[:len(ctrls)-1]
			if fuel {
				if c.targeted && !c.loop {
					startSeg(segJoin, c.outer)
				} else {
					cur = c.outer
				}
			}
			weight = 0
		case opBr:
			if branch(r, ctrls) {
				b.edits = append(b.edits, edit{at: at, kind: editExit})
			}
		case opBrIf:
			if branch(r, ctrls) {
				b.edits = append(b.edits, edit{at: at, kind: editBrIf})
				b.scratch = true
			}
		case opBrTable:
			n := r.count(1, "br_table targets")
			outer := make([]bool, n+1)
			some, all := false, true
			for i := range outer {
				outer[i] = branch(r, ctrls)
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
			weight = fuelCall
			switch {
			case int64(f) < int64(m.importedFuncs):
				weight = fuelHostCall
			case r.err == nil:
				b.simple = false
				if op == opCall {
					b.calls = append(b.calls, callSite{at: at, next: r.pos - exprStart, callee: f, seg: cur})
				} else {
					// A tail call's callee replaces the caller's frame: no caller is
					// left to reserve room for it or to charge it, so it is no leaf.
					m.referenced[f] = true
				}
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
			weight = fuelCall
			b.simple = false
			if op == opCallIndirect && r.err == nil {
				b.calls = append(b.calls, callSite{at: at, next: r.pos - exprStart, callee: noCallee, seg: cur})
			}
		default:
			b.valueBytes += m.instruction(r, op, ft.params+b.locals)
			switch op {
			case 0x01: // nop
				weight = 0
			case 0x40: // memory.grow
				weight = fuelMemoryGrow
			case 0xfc:
				if shift, ok := bulkShift(r.b[exprStart+at+1:]); ok && fuel && r.err == nil {
					b.edits = append(b.edits, edit{at: at, kind: editBulk, shift: shift})
					b.scratch = true
					b.simple = false
				}
			}
		}
		if fuel {
			b.segs[cur].cost += weight
		}
	}
}

// bulkShift tells whether the 0xFC instruction whose sub-opcode starts b takes a count
// on the top of the stack that its time is proportional to, and in what unit: bytes
// for memory.init, memory.copy and memory.fill (2^fuelBulkByteShift per unit of fuel),
// elements for table.init, table.copy, table.grow and table.fill (2^fuelBulkElemShift).
func bulkShift(b []byte) (byte, bool) {
	r := &reader{b: b}
	switch sub := r.u32(); {
	case r.err != nil:
	case sub == 8 || sub == 10 || sub == 11:
		return fuelBulkByteShift, true
	case sub == 12 || sub == 14 || sub == 15 || sub == 17:
		return fuelBulkElemShift, true
	}
	return 0, false
}

// merge folds every arm or join segment that costs at most mergeMax (with what was
// folded into it) into its parent. Children come after their parents, so a backward
// pass folds them first.
func (b *body) merge() {
	for i := len(b.segs) - 1; i > 0; i-- {
		s := &b.segs[i]
		if (s.kind == segArm || s.kind == segJoin) && s.cost <= mergeMax {
			b.segs[s.parent].cost += s.cost
			s.merged = true
		}
	}
}

// branch reads a label index and reports whether it names the function's own label,
// outside the open blocks ctrls; otherwise it marks the block it names as targeted.
func branch(r *reader, ctrls []ctrl) bool {
	l := r.u32()
	depth := len(ctrls)
	switch {
	case r.err != nil:
		return false
	case int64(l) > int64(depth):
		r.fail("branch to label %d, only %d blocks are open", l, depth+1)
		return false
	case int(l) == depth:
		return true
	}
	ctrls[depth-1-int(l)].targeted = true
	return false
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
		if f := r.u32(); r.err == nil && int64(f) >= int64(len(m.funcs)) {
			r.fail("ref.func of function %d, out of range (%d functions)", f, len(m.funcs))
		} else {
			m.referenced[f] = true
		}
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

// cost is the frame cost of the function, its added locals included.
func (b *body) cost(ft funcType) int64 {
	localBytes := b.localBytes + bytesPerSlot*len(b.addedLocals())
	return frameCost(ft, localBytes, b.valueBytes)
}

// addedLocals returns the types of the locals the rewrite adds, in order: the scratch
// i32, the counter at entry (i32), the fuel (i64); each only if needed.
func (b *body) addedLocals() []byte {
	var ts []byte
	if b.scratch {
		ts = append(ts, 0x7f)
	}
	if b.stack {
		ts = append(ts, 0x7f)
	}
	if b.metered {
		ts = append(ts, 0x7e)
	}
	return ts
}

// emit appends the rewritten body (without its size) to out. The added globals are a's;
// maxBytes is the stack limit, when a has a stack counter.
func (b *body) emit(out []byte, ft funcType, a added, maxBytes int) []byte {
	// The added locals follow the function's own.
	next := uint32(ft.params + b.locals)
	local := func(need bool) uint32 {
		if !need {
			return 0
		}
		next++
		return next - 1
	}
	l := locals{scratch: local(b.scratch), old: local(b.stack), fuel: local(b.metered)}
	if b.metered {
		b.merge()
	}
	if added := b.addedLocals(); len(added) > 0 {
		r := &reader{b: b.localDecls}
		groups := r.u32()
		out = appendU32(out, groups+uint32(len(added)))
		out = append(out, b.localDecls[r.pos:]...)
		for _, t := range added {
			out = append(out, 1, t)
		}
	} else {
		out = append(out, b.localDecls...)
	}
	counter := a.counter()
	if b.stack {
		cost := b.cost(ft)
		// Entry: old = counter; trap if old > maxBytes - cost - reserve, else
		// counter = old + cost. Every exit sets the counter back to old. The counter
		// never exceeds maxBytes, so neither the subtraction nor the addition
		// overflows.
		if cost+b.reserve > int64(maxBytes) {
			out = appendTrap(out, counter)
		} else {
			out = appendOpU32(out, opGlobalGet, counter)
			out = appendOpU32(out, opLocalTee, l.old)
			out = append(out, opI32Const)
			out = appendS32(out, int32(int64(maxBytes)-cost-b.reserve))
			out = append(out, opI32GtU, opIf, blockEmpty)
			out = appendTrap(out, counter)
			out = append(out, opEnd)
			out = appendOpU32(out, opLocalGet, l.old)
			out = append(out, opI32Const)
			out = appendS32(out, int32(cost))
			out = append(out, opI32Add)
			out = appendOpU32(out, opGlobalSet, counter)
		}
	}
	if b.metered {
		out = b.appendFuel(out, 0, a, l)
	}

	exits := b.stack || b.metered
	prev := 0
	for _, e := range b.edits {
		out = append(out, b.expr[prev:e.at]...)
		prev = e.at
		switch e.kind {
		case editFuel:
			if b.metered {
				out = b.appendFuel(out, e.seg, a, l)
			}
		case editBulk:
			if b.metered {
				out = appendBulk(out, l, e.shift)
			}
		case editStore:
			out = appendOpU32(out, opLocalGet, l.fuel)
			out = appendOpU32(out, opGlobalSet, a.fuelG())
		case editLoad:
			out = appendOpU32(out, opGlobalGet, a.fuelG())
			out = appendOpU32(out, opLocalSet, l.fuel)
		case editExit:
			out = b.appendExit(out, a, l)
		case editBrIf:
			if !exits {
				break
			}
			// cond -> scratch; if (scratch) { exit }; scratch; br_if L (copied below)
			out = appendOpU32(out, opLocalSet, l.scratch)
			out = appendOpU32(out, opLocalGet, l.scratch)
			out = append(out, opIf, blockEmpty)
			out = b.appendExit(out, a, l)
			out = append(out, opEnd)
			out = appendOpU32(out, opLocalGet, l.scratch)
		case editBrTable:
			if !exits {
				break
			}
			// index -> scratch;
			// block $done { block $exit { br_table (to $exit where the original
			// targets the function's label, else to $done) scratch } exit };
			// scratch; br_table (the original, copied below)
			out = appendOpU32(out, opLocalSet, l.scratch)
			out = append(out, opBlock, blockEmpty, opBlock, blockEmpty)
			out = appendOpU32(out, opLocalGet, l.scratch)
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
			out = b.appendExit(out, a, l)
			out = append(out, opEnd)
			out = appendOpU32(out, opLocalGet, l.scratch)
		}
	}
	return append(out, b.expr[prev:]...)
}

// locals are the indices of the locals the rewrite adds to a function.
type locals struct {
	scratch uint32 // a scratch i32
	old     uint32 // the stack counter at entry
	fuel    uint32 // the function's fuel
}

// appendExit appends what every way out of the function does first: set the stack
// counter back to its value at entry, and store the fuel.
func (b *body) appendExit(out []byte, a added, l locals) []byte {
	if b.stack {
		out = appendOpU32(out, opLocalGet, l.old)
		out = appendOpU32(out, opGlobalSet, a.counter())
	}
	if b.metered {
		out = appendOpU32(out, opLocalGet, l.fuel)
		out = appendOpU32(out, opGlobalSet, a.fuelG())
	}
	return out
}

// appendFuel appends the charge point of segment i, on the function's fuel (a local).
// At the entry (which loads the fuel from the global) and at loop headers:
//
//	fuel = fuel - cost; if (fuel < floor) { store fuel; slow() }
//
// elsewhere only the subtraction.
func (b *body) appendFuel(out []byte, i int, a added, l locals) []byte {
	s := b.segs[i]
	if s.merged {
		return out
	}
	check := s.kind == segEntry || s.kind == segLoop
	cost := s.cost + fuelCharge
	if check {
		cost = s.cost + fuelCheck
	}
	if s.kind == segEntry {
		out = appendOpU32(out, opGlobalGet, a.fuelG())
	} else {
		out = appendOpU32(out, opLocalGet, l.fuel)
	}
	out = appendS64(append(out, opI64Const), cost)
	out = append(out, opI64Sub)
	if !check {
		return appendOpU32(out, opLocalSet, l.fuel)
	}
	out = appendOpU32(out, opLocalTee, l.fuel)
	out = appendOpU32(out, opGlobalGet, a.floorG())
	out = append(out, opI64LtS, opIf, blockEmpty)
	out = appendOpU32(out, opLocalGet, l.fuel)
	out = appendOpU32(out, opGlobalSet, a.fuelG())
	out = appendOpU32(out, opCall, a.slow)
	return append(out, opEnd)
}

// appendBulk appends the charge of a bulk operation whose count (an i32 on the top of
// the stack, left there) is in units of 2^shift:
//
//	scratch = count; fuel = fuel - (u64(scratch) >> shift)
func appendBulk(out []byte, l locals, shift byte) []byte {
	out = appendOpU32(out, opLocalTee, l.scratch)
	out = appendOpU32(out, opLocalGet, l.fuel)
	out = appendOpU32(out, opLocalGet, l.scratch)
	out = append(out, opI64ExtendI32U, opI64Const, shift, opI64ShrU, opI64Sub)
	return appendOpU32(out, opLocalSet, l.fuel)
}

// appendOpU32 appends an instruction with one u32 immediate.
func appendOpU32(out []byte, op byte, idx uint32) []byte {
	return appendU32(append(out, op), idx)
}

// appendTrap appends counter = Exceeded; unreachable.
func appendTrap(out []byte, counter uint32) []byte {
	out = append(out, opI32Const)
	out = appendS32(out, -1)
	out = appendOpU32(out, opGlobalSet, counter)
	return append(out, opUnreachable)
}
