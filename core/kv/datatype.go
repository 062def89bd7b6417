package kv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
	"github.com/cairnkv/cairn/core/hooks"
)

// Convergent data types (Riak 2's /types/T/buckets/B/datatypes/K).
//
// A bucket whose type has the datatype property holds values of that type. The value is
// an ordinary object whose sibling has content type DatatypeContentType(kind) and, as
// value, the core/datatype binary encoding; it is listed, deleted and replicated like any
// object. An update is the ordinary write path's read → apply → conditional commit
// (retried on conflict): it merges every datatype sibling of the stored object, applies
// the operation as this node's actor, and writes the result with the stored clock, so
// concurrent writers merge instead of leaving siblings. A record holding several datatype
// siblings (possible after a cluster partition) is merged on read.

// DatatypeContentType is the content type of a stored value of kind k.
func DatatypeContentType(k datatype.Kind) string { return "application/riak_" + k.String() }

// DatatypeResult is a datatype value as the HTTP interface answers it.
type DatatypeResult struct {
	Kind    datatype.Kind
	Value   any    // Riak's JSON form
	Context string // base64 causal context ("" for kinds without one)
	// Expiry is when the key expires (its TTL runs out); zero when it never does.
	Expiry time.Time
}

// resultOf describes v.
func resultOf(v datatype.Data) DatatypeResult {
	return DatatypeResult{Kind: v.Kind(), Value: v.Value(), Context: datatype.EncodeContext(v)}
}

// datatypeKind returns the kind of a datatype bucket, or the refusal Riak gives
// datatype requests on a bucket without one.
func datatypeKind(p *core.BucketProps) (datatype.Kind, error) {
	k, ok := datatype.BucketKind(p.Datatype)
	if !ok {
		return 0, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
			"Bucket datatype '%s' is not a supported type.\n", "undefined")}
	}
	if !p.AllowMult {
		return 0, &core.Error{Code: core.EINVALID, Message: "Bucket must be allow_mult=true\n"}
	}
	return k, nil
}

// datatypeOf merges the datatype siblings of obj (nil: an absent key) into one value of
// kind k. Tombstones and siblings of other content types do not contribute; keep lists
// the latter, which an update leaves in place. A sibling that has the content type but
// does not decode is corrupt: a 500 naming it rather than a guess.
func datatypeOf(obj *core.Object, k datatype.Kind) (v datatype.Data, keep []int, err error) {
	v = datatype.New(k)
	if obj == nil {
		return v, nil, nil
	}
	ct := DatatypeContentType(k)
	for i := range obj.Siblings {
		sib := &obj.Siblings[i]
		switch {
		case sib.Deleted:
		case sib.ContentType != ct:
			keep = append(keep, i)
		default:
			sv, err := datatype.Unmarshal(sib.Value)
			if err == nil {
				v, err = datatype.Merge(v, sv)
			}
			if err != nil {
				return nil, nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
					"Error:\nsibling %s of %s/%s is not a valid %s (%v)\n", sib.VTag, obj.Bucket, obj.Key, k, err)}
			}
		}
	}
	return v, keep, nil
}

// DatatypeFetch returns the value stored under typ/bucket/key of a datatype bucket. A
// missing or deleted key is a not-found *core.Error.
func (s *Service) DatatypeFetch(ctx context.Context, typ, bucket, key string, opts GetOptions) (DatatypeResult, error) {
	_, k, err := s.datatypeProps(ctx, typ, bucket)
	if err != nil {
		return DatatypeResult{}, err
	}
	obj, err := s.Get(ctx, typ, bucket, key, opts)
	if err != nil {
		return DatatypeResult{}, err
	}
	if obj.Deleted() {
		return DatatypeResult{}, errNotFound()
	}
	v, _, err := datatypeOf(obj, k)
	if err != nil {
		return DatatypeResult{}, err
	}
	res := resultOf(v)
	res.Expiry = obj.Expiry
	return res, nil
}

// DatatypeKind returns the kind of a datatype bucket (EINVALID for a bucket without
// one), so the HTTP layer can parse an operation before applying it.
func (s *Service) DatatypeKind(ctx context.Context, typ, bucket string) (datatype.Kind, error) {
	_, k, err := s.datatypeProps(ctx, typ, bucket)
	return k, err
}

// datatypeProps returns a bucket's properties and its datatype's kind.
func (s *Service) datatypeProps(ctx context.Context, typ, bucket string) (*core.BucketProps, datatype.Kind, error) {
	p, err := s.Props(ctx, typ, bucket)
	if err != nil {
		return nil, 0, err
	}
	k, err := datatypeKind(p)
	return p, k, err
}

// DatatypeUpdate applies op to the value stored under typ/bucket/key (an empty value
// when there is none, or when the stored one has expired) and returns the new value. A
// remove of something absent is an EPRECONDITION *core.Error with Riak's text, an
// operation out of bounds EINVALID. The update goes through the ordinary write path
// (quorum checks, one conditional commit retried on conflict, the object cache, hooks,
// statistics) and gives the key the expiry opts.TTL asks for (the bucket's ttl without
// one), as a PUT does. Precommit hooks see the new value's data-type view (see
// DatatypeMetaName) and may reject the update, not change it; postcommit hooks see the
// view of what was stored.
func (s *Service) DatatypeUpdate(ctx context.Context, typ, bucket, key string, op datatype.Op, opts PutOptions) (DatatypeResult, error) {
	start := time.Now()
	p, k, err := s.datatypeProps(ctx, typ, bucket)
	if err != nil {
		return DatatypeResult{}, err
	}
	if op.Kind() != k {
		return DatatypeResult{}, &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
			"Invalid operation on datatype '%s'\n", k)}
	}
	if err := checkQuorum(p, opts.W, opts.DW, opts.PW); err != nil {
		return DatatypeResult{}, err
	}
	ttl, err := writeTTL(p, opts.TTL)
	if err != nil {
		return DatatypeResult{}, err
	}
	var result datatype.Data
	stored := 0 // the bytes of the value written
	update := func(cur *core.Object) (core.Sibling, []int, error) {
		v, keep, err := datatypeOf(cur, k)
		if err != nil {
			return core.Sibling{}, nil, err
		}
		if result, err = datatype.Apply(v, op, datatype.Writer{Actor: s.nodeID, Micros: time.Now().UnixMicro()}); err != nil {
			return core.Sibling{}, nil, datatypeError(err)
		}
		sib := core.Sibling{Value: datatype.Marshal(result), ContentType: DatatypeContentType(k)}
		if n := int64(len(sib.Value)); n > s.cfg.MaxValueSize {
			return core.Sibling{}, nil, errTooLarge(n, s.cfg.MaxValueSize)
		}
		if err := s.datatypePrecommit(ctx, p, typ, bucket, key, cur, result); err != nil {
			return core.Sibling{}, nil, err
		}
		stored = len(sib.Value)
		return sib, keep, nil
	}
	sync := opts.DW.Resolve(p.NVal, p.DW) >= 1
	obj, err := s.runWrite(ctx, writeOp{p: p, typ: typ, bucket: bucket, key: key, k: objectKey(typ, bucket, key),
		sync: sync, pre: opts.Precondition, useStored: true, update: update, ttl: ttl})
	if err != nil {
		return DatatypeResult{}, err
	}
	if view := s.postcommitView(p, obj, k); view != nil {
		s.queuePostcommit(p, hooks.OpPut, view)
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.RecordPut(time.Since(start), stored)
	}
	res := resultOf(result)
	res.Expiry = obj.Expiry
	return res, nil
}

// datatypePrecommit runs the bucket's precommit hooks on the data-type view of v, the
// value an update of the stored object cur (nil: none) is about to write.
func (s *Service) datatypePrecommit(ctx context.Context, p *core.BucketProps, typ, bucket, key string, cur *core.Object, v datatype.Data) error {
	if len(p.Precommit) == 0 || s.cfg.Hooks == nil {
		return nil
	}
	view, err := viewSibling(v)
	if err != nil {
		return err
	}
	var clock []byte
	if cur != nil {
		clock = cur.VClock
	}
	_, err = s.runPrecommitChain(ctx, p, hooks.OpPut, typ, bucket, key, clock, view, sameView(v.Kind()))
	return err
}

// datatypeError turns a core/datatype error into the *core.Error the HTTP layer answers.
func datatypeError(err error) error {
	var pe *datatype.PreconditionError
	if errors.As(err, &pe) {
		return &core.Error{Code: core.EPRECONDITION, Message: pe.Body()}
	}
	var oe *datatype.OpError
	if errors.As(err, &oe) {
		return &core.Error{Code: core.EINVALID, Message: oe.Msg}
	}
	return fmt.Errorf("kv: datatype update: %w", err)
}

// errPlainInDatatypeBucket refuses a plain object write into a datatype bucket.
func errPlainInDatatypeBucket(typ string) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
		"Bucket type '%s' holds data types: update its keys through /types/%s/buckets/B/datatypes/K\n", typ, typ)}
}
