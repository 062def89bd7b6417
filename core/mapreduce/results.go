package mapreduce

import (
	"encoding/json"
	"strconv"
)

// Collector gathers a job's kept outputs into the body of a response sent whole, in the
// reference's shape: with at most one kept phase, a flat array of its outputs; with two
// or more, an array holding one array per kept phase that produced outputs, in phase
// order (kept phases without outputs are left out). Its Add is Run's emit.
type Collector struct {
	multi bool
	limit int64
	size  int64
	// bufs holds each kept phase's outputs so far, as the inside of a JSON array.
	bufs  map[int][]byte
	order []int
}

// NewCollector returns a collector for job's results that refuses to hold more than
// limit bytes of values (a *LimitError).
func NewCollector(job *Job, limit int64) *Collector {
	kept := job.Kept()
	order := kept
	if len(job.Query) == 0 {
		order = []int{0}
	}
	return &Collector{multi: len(kept) >= 2, limit: limit, bufs: map[int][]byte{}, order: order}
}

// Add records values as outputs of phase.
func (c *Collector) Add(phase int, values []json.RawMessage) error {
	b := c.bufs[phase]
	for _, v := range values {
		c.size += int64(len(v)) + 1
		if c.size > c.limit {
			return &LimitError{Limit: c.limit}
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	c.bufs[phase] = b
	return nil
}

// Body returns the response body.
func (c *Collector) Body() []byte {
	out := make([]byte, 0, c.size+int64(4*len(c.order))+2)
	out = append(out, '[')
	first := true
	for _, p := range c.order {
		b, ok := c.bufs[p]
		if !c.multi {
			if ok {
				if !first {
					out = append(out, ',')
				}
				out = append(out, b...)
				first = false
			}
			continue
		}
		if !ok || len(b) == 0 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = append(out, b...)
		out = append(out, ']')
		first = false
	}
	return append(out, ']')
}

// AppendPhaseData appends one part of a streamed result, {"phase":N,"data":[...]}.
func AppendPhaseData(dst []byte, phase int, values []json.RawMessage) []byte {
	dst = append(dst, `{"phase":`...)
	dst = strconv.AppendInt(dst, int64(phase), 10)
	dst = append(dst, `,"data":[`...)
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, v...)
	}
	return append(dst, "]}"...)
}
