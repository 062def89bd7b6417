package datatype

import (
	"crypto/sha1"
	"encoding/binary"
	"math"
	"math/bits"
)

// HLLPrecision is the HyperLogLog precision: 2^14 registers, Riak's default
// (hll_precision 14), for a standard error of 1.04/√16384 ≈ 0.81%.
const HLLPrecision = 14

// hllRegisters is the number of registers.
const hllRegisters = 1 << HLLPrecision

// hllMaxRank is the largest register value: leading zeros of the 50 hash bits left, + 1.
const hllMaxRank = 64 - HLLPrecision + 1

// hll is a HyperLogLog sketch of the distinct elements added; merge is the register-wise
// maximum.
type hll struct {
	r []uint8 // hllRegisters registers
}

func newHLL() *hll { return &hll{r: make([]uint8, hllRegisters)} }

func (h *hll) Kind() Kind      { return HLL }
func (h *hll) Context() []byte { return nil }

// Value is the cardinality estimate: the HyperLogLog estimator, with linear counting
// while the estimate is small (below 2.5 × registers with empty registers left).
func (h *hll) Value() any {
	m := float64(hllRegisters)
	sum, zeros := 0.0, 0
	for _, x := range h.r {
		sum += math.Ldexp(1, -int(x))
		if x == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return uint64(math.Round(e))
}

func (h *hll) merge(o Data) Data {
	b := o.(*hll)
	out := newHLL()
	for i := range out.r {
		out.r[i] = max(h.r[i], b.r[i])
	}
	return out
}

func (h *hll) apply(op Op, _ Writer) error {
	for _, x := range op.body.(setOp).add {
		h.add(x)
	}
	return nil
}

// add records element x: the first 14 bits of its SHA-1 pick a register, which keeps
// the largest rank (position of the first 1 bit) the remaining bits have shown.
func (h *hll) add(x string) {
	sum := sha1.Sum([]byte(x))
	v := binary.BigEndian.Uint64(sum[:8])
	idx := v >> (64 - HLLPrecision)
	rank := uint8(bits.LeadingZeros64(v<<HLLPrecision|1<<(HLLPrecision-1)) + 1)
	h.r[idx] = max(h.r[idx], rank)
}

// encode writes the registers sparse (count, then index delta and value of each
// non-zero register) when that is shorter, else dense (all 16384 bytes).
func (h *hll) encode(e *enc) {
	nz := h.nonZero()
	if nz*3 >= hllRegisters {
		e.byte1(1)
		e.raw(h.r)
		return
	}
	e.byte1(0)
	e.count(nz)
	last := -1
	for i, x := range h.r {
		if x != 0 {
			e.uv(uint64(i - last))
			e.byte1(x)
			last = i
		}
	}
}

func decodeHLL(d *dec) *hll {
	h := newHLL()
	switch d.byte1() {
	case 1:
		if len(d.b) < hllRegisters {
			d.fail("short registers")
			return h
		}
		copy(h.r, d.b)
		d.b = d.b[hllRegisters:]
		if nz := h.nonZero(); nz*3 < hllRegisters || h.maxRegister() > hllMaxRank {
			d.fail("dense registers not canonical")
		}
	case 0:
		n := d.count(2)
		if n*3 >= hllRegisters {
			d.fail("sparse registers not canonical")
		}
		last := -1
		for i := 0; i < n && d.err == nil; i++ {
			delta := d.uv()
			x := d.byte1()
			if d.err != nil || (delta == 0 || delta > uint64(hllRegisters-1-last) || x == 0 || x > hllMaxRank) {
				d.fail("bad sparse register")
				break
			}
			last += int(delta)
			h.r[last] = x
		}
	default:
		d.fail("bad register encoding")
	}
	return h
}

// nonZero counts the registers set.
func (h *hll) nonZero() int {
	n := 0
	for _, x := range h.r {
		if x != 0 {
			n++
		}
	}
	return n
}

// maxRegister returns the largest register value.
func (h *hll) maxRegister() uint8 {
	m := uint8(0)
	for _, x := range h.r {
		m = max(m, x)
	}
	return m
}
