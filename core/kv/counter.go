package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// 1.4-style counters (the reference's /buckets/B/counters/K).
//
// A counter is an ordinary object of the default bucket type whose value is a PN-counter:
// for every actor that ever updated it, the total of its increments (P) and the total of
// its decrements (N). The counter's value is the sum of P−N over the actors. Updates
// made on this node are recorded under this node's id (Service.NodeID).
//
// Stored form: content type CounterContentType and, as the value, compact JSON with the
// actors in byte order:
//
//	{"pncounter":{"<actor>":[P,N],...}}
//
// where P and N are integers in [0, 2^63−1]. The object is listed, fetched, deleted
// and replicated like any other; a client may also write it through the object routes.
//
// Convergence: concurrent writes to the key (counter updates from elsewhere, or a client
// storing a counter object directly) become siblings, as for any object in a bucket
// with allow_mult=true. Reading merges every counter sibling by taking, per actor, the
// larger P and the larger N, which neither loses nor double-counts an update however the
// siblings overlap. An update is a read-modify-write under the key's lock: it merges the
// siblings, adds the delta to this node's P (or, for a negative delta, to its N), and
// writes the result with the stored clock as its context, so the merged value replaces
// the counter siblings it was computed from.
//
// Siblings that are not counters (another content type, stored through the object
// routes) are left alone, as the reference does: they do not contribute to the value
// and an update keeps them next to the new counter value. Tombstones do not contribute
// either and are superseded by an update, so incrementing a deleted counter starts from
// zero. A sibling that has the counter content type but does not decode is corrupt: reads
// and updates fail with a 500 naming it rather than guess a value; writing the key
// through the object route with its clock repairs it.
//
// Values are int64: an update whose delta would take the value or an actor's totals
// beyond 2^63−1 is refused with EINVALID, and nothing is written.

// CounterContentType is the content type of a stored counter.
const CounterContentType = "application/riak_counter"

// pnCounter is a PN-counter's state: per actor, its increments and decrements.
type pnCounter map[string]pnTotals

// pnTotals are one actor's totals; both are in [0, math.MaxInt64].
type pnTotals struct{ P, N int64 }

// errCounterEncoding is wrapped by every error decodeCounter returns.
var errCounterEncoding = errors.New("kv: invalid counter encoding")

// encode returns the stored form of c.
func (c pnCounter) encode() []byte {
	actors := make([]string, 0, len(c))
	for a := range c {
		actors = append(actors, a)
	}
	sort.Strings(actors)
	b := make([]byte, 0, 16+len(actors)*32)
	b = append(b, `{"pncounter":{`...)
	for i, a := range actors {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(a) // a string always marshals
		b = append(b, name...)
		t := c[a]
		b = append(b, ':', '[')
		b = strconv.AppendInt(b, t.P, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, t.N, 10)
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// decodeCounter parses a counter's stored form. It is strict: one JSON object with the
// single member "pncounter", an object mapping non-empty actor names to [P,N] pairs of
// integers in [0, 2^63−1], and nothing after it.
func decodeCounter(data []byte) (pnCounter, error) {
	var doc struct {
		PN map[string][]json.RawMessage `json:"pncounter"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", errCounterEncoding, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the counter", errCounterEncoding)
	}
	if doc.PN == nil {
		return nil, fmt.Errorf("%w: no \"pncounter\" object", errCounterEncoding)
	}
	c := make(pnCounter, len(doc.PN))
	for actor, pair := range doc.PN {
		if actor == "" {
			return nil, fmt.Errorf("%w: empty actor name", errCounterEncoding)
		}
		if len(pair) != 2 {
			return nil, fmt.Errorf("%w: actor %q: want [P,N], got %d numbers", errCounterEncoding, actor, len(pair))
		}
		var t [2]int64
		for i, n := range pair {
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%w: actor %q: %s is not an integer in [0, 2^63-1]", errCounterEncoding, actor, n)
			}
			t[i] = v
		}
		c[actor] = pnTotals{P: t[0], N: t[1]}
	}
	return c, nil
}

// merge folds o into c, keeping per actor the larger of each total.
func (c pnCounter) merge(o pnCounter) {
	for a, t := range o {
		cur, ok := c[a]
		if !ok {
			c[a] = t
			continue
		}
		c[a] = pnTotals{P: max(cur.P, t.P), N: max(cur.N, t.N)}
	}
}

// value returns Σ(P−N); ok is false when the sum does not fit in an int64 (possible
// only for states that several actors or direct writes have built).
func (c pnCounter) value() (v int64, ok bool) {
	var sum, x big.Int
	for _, t := range c {
		sum.Add(&sum, x.SetInt64(t.P))
		sum.Sub(&sum, x.SetInt64(t.N))
	}
	if !sum.IsInt64() {
		return 0, false
	}
	return sum.Int64(), true
}

// add records delta as actor's update: an increment adds to its P, a decrement to its
// N. It refuses (EINVALID, c unchanged) an update that would take either total or the
// value out of the int64 range.
func (c pnCounter) add(actor string, delta int64) error {
	before, ok := c.value()
	if !ok {
		return errCounterRange()
	}
	if (delta > 0 && before > math.MaxInt64-delta) || (delta < 0 && before < math.MinInt64-delta) {
		return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
			"Counter update out of range: %d %+d does not fit in a signed 64-bit integer\n", before, delta)}
	}
	t := c[actor]
	switch {
	case delta > 0:
		if t.P > math.MaxInt64-delta {
			return errActorTotal("increments")
		}
		t.P += delta
	case delta < 0:
		if delta == math.MinInt64 || t.N > math.MaxInt64+delta {
			return errActorTotal("decrements")
		}
		t.N -= delta
	}
	c[actor] = t
	return nil
}

func errActorTotal(which string) error {
	return &core.Error{Code: core.EINVALID, Message: "Counter update out of range: this node's total of " +
		which + " would exceed 9223372036854775807\n"}
}

func errCounterRange() error {
	return &core.Error{Code: core.EINTERNAL, Message: "Error:\ncounter value out of range: it does not fit in a signed 64-bit integer\n"}
}

func errCounterNeedsAllowMult() error {
	return &core.Error{Code: core.ECONFLICT, Message: "Counters require bucket property 'allow_mult=true'"}
}

// counterOf merges the counter siblings of obj (nil: an absent key). keep lists the
// siblings that are neither counters nor tombstones, which an update leaves in place.
func counterOf(obj *core.Object) (c pnCounter, keep []int, err error) {
	c = pnCounter{}
	if obj == nil {
		return c, nil, nil
	}
	for i := range obj.Siblings {
		sib := &obj.Siblings[i]
		switch {
		case sib.Deleted:
		case sib.ContentType != CounterContentType:
			keep = append(keep, i)
		default:
			sc, err := decodeCounter(sib.Value)
			if err != nil {
				return nil, nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
					"Error:\nsibling %s of %s/%s has content type %s but is not a valid counter (%v)\n",
					sib.VTag, obj.Bucket, obj.Key, CounterContentType, err)}
			}
			c.merge(sc)
		}
	}
	return c, keep, nil
}

// CounterValue returns the value of the counter stored under bucket/key in the default
// bucket type. A missing or deleted key is a not-found *core.Error; a key whose
// siblings include no counter has the value 0.
func (s *Service) CounterValue(ctx context.Context, bucket, key string, opts GetOptions) (int64, error) {
	obj, err := s.Get(ctx, core.DefaultType, bucket, key, opts)
	if err != nil {
		return 0, err
	}
	if obj.Deleted() {
		return 0, errNotFound()
	}
	c, _, err := counterOf(obj)
	if err != nil {
		return 0, err
	}
	v, ok := c.value()
	if !ok {
		return 0, errCounterRange()
	}
	return v, nil
}

// CounterAdd adds delta (negative to decrement) to the counter stored under bucket/key
// in the default bucket type, creating it at zero first if needed, and returns the
// new value. The bucket must allow siblings (else ECONFLICT with the reference's
// message). The update goes through the ordinary write path: quorum checks, the key's
// lock, one storage batch, the object cache, postcommit hooks and statistics. Precommit
// hooks run, under the key's lock, on the counter object about to be stored; a hook may
// reject it, or replace it by another valid counter.
func (s *Service) CounterAdd(ctx context.Context, bucket, key string, delta int64, opts PutOptions) (int64, error) {
	start := time.Now()
	typ := core.DefaultType
	p, err := s.Props(ctx, typ, bucket)
	if err != nil {
		return 0, err
	}
	if !p.AllowMult {
		return 0, errCounterNeedsAllowMult()
	}
	if err := checkQuorum(p, opts.W, opts.DW, opts.PW); err != nil {
		return 0, err
	}
	var result int64
	var size int
	update := func(cur *core.Object) (core.Sibling, []int, error) {
		c, keep, err := counterOf(cur)
		if err != nil {
			return core.Sibling{}, nil, err
		}
		if err := c.add(s.nodeID, delta); err != nil {
			return core.Sibling{}, nil, err
		}
		v := core.Sibling{Value: c.encode(), ContentType: CounterContentType}
		var clock []byte
		if cur != nil {
			clock = cur.VClock
		}
		if v, err = s.runPrecommit(ctx, p, hooks.OpPut, typ, bucket, key, clock, v); err != nil {
			return core.Sibling{}, nil, err
		}
		// A hook's replacement must still be a counter.
		final, err := decodeCounter(v.Value)
		if err == nil && v.ContentType != CounterContentType {
			err = fmt.Errorf("content type %s", v.ContentType)
		}
		if err != nil {
			return core.Sibling{}, nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
				"precommit hook replaced the counter by a value that is not one: %v\n", err)}
		}
		var ok bool
		if result, ok = final.value(); !ok {
			return core.Sibling{}, nil, errCounterRange()
		}
		if n := int64(len(v.Value)); n > s.cfg.MaxValueSize {
			return core.Sibling{}, nil, errTooLarge(n, s.cfg.MaxValueSize)
		}
		size = len(v.Value)
		return v, keep, nil
	}
	sync := opts.DW.Resolve(p.NVal, p.DW) >= 1
	obj, err := s.write(ctx, p, typ, bucket, key, nil, core.Sibling{}, sync, opts.Precondition, true, update)
	if err != nil {
		return 0, err
	}
	s.queuePostcommit(p, hooks.OpPut, obj)
	if s.cfg.Observer != nil {
		s.cfg.Observer.RecordPut(time.Since(start), size)
	}
	return result, nil
}
