package kvapi

import (
	"context"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// params are the query parameters every object request validates.
type params struct {
	r, pr, w, dw, rw, pw core.Quorum
	// timeout is the client's `timeout`, zero when none was given: object operations on
	// one node finish far inside the reference's 60 s default, so no timer is armed then.
	timeout    time.Duration
	returnBody bool
}

// parseParams validates the quorum, boolean and timeout parameters, answering the
// reference's 400 messages (checked in the reference's order: timeout, then quorums,
// then booleans).
func parseParams(q *queryArgs) (params, error) {
	var p params
	if v, ok := q.lookup("timeout"); ok {
		d, ok := parseTimeout(v, 1)
		if !ok {
			return p, badRequest(wire.TimeoutError(v))
		}
		p.timeout = d
	}
	for _, qp := range []struct {
		name string
		dst  *core.Quorum
	}{{"r", &p.r}, {"pr", &p.pr}, {"w", &p.w}, {"dw", &p.dw}, {"rw", &p.rw}, {"pw", &p.pw}} {
		*qp.dst = core.QuorumDefault
		if v, ok := q.lookup(qp.name); ok {
			qv, ok := core.ParseQuorum(v)
			if !ok {
				return p, badRequest(wire.QuorumParamError(qp.name))
			}
			*qp.dst = qv
		}
	}
	for _, name := range []string{"basic_quorum", "notfound_ok", "asis"} {
		if v, ok := q.lookup(name); ok {
			if _, _, ok := wire.ParseBoolParam(v); !ok {
				return p, badRequest(wire.BoolParamError(name))
			}
		}
	}
	p.returnBody = q.get("returnbody") == "true"
	return p, nil
}

// maxTimeoutMillis is the largest timeout parameter taken, in milliseconds: 2^32−1
// (49.7 days), the longest timer the reference's runtime arms (it fails on more).
const maxTimeoutMillis = 1<<32 - 1

// parseTimeout parses a timeout parameter in milliseconds, at least min and at most
// maxTimeoutMillis, so that no value can overflow a time.Duration.
func parseTimeout(s string, min int64) (time.Duration, bool) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms < min || ms > maxTimeoutMillis {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// context bounds ctx by the client's timeout, if it gave one.
func (p params) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.timeout == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, p.timeout)
}
