package kvapi

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// counterBodyLimit bounds a counter update's body: a decimal int64 with a sign and some
// surrounding whitespace fits many times over.
const counterBodyLimit = 1024

// counterOffers is what the counter resource produces.
var counterOffers = []string{"text/plain"}

// counterResource serves 1.4-style counters, /buckets/B/counters/K (default type only):
// POST adds the body's integer, GET answers the value. kv.CounterAdd documents the
// counter's semantics and stored form.
func (a *API) counterResource() resource {
	return resource{name: "kv_wm_counter", methods: []string{"GET", "POST"}, guard: objectGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if r.Method == http.MethodPost {
			return a.postCounter(w, r, l)
		}
		return a.getCounter(w, r, l)
	}}
}

// getCounter answers the counter's value, checking as the reference does: parameters
// (400), then the fetch (404 for a missing or deleted counter), then Accept (406).
func (a *API) getCounter(w http.ResponseWriter, r *http.Request, l loc) error {
	p, err := parseParams(query(r))
	if err != nil {
		return err
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	v, err := a.kv.CounterValue(ctx, l.bucket, l.key, kv.GetOptions{R: p.r, PR: p.pr})
	if err != nil {
		return err
	}
	if _, ok := wire.Negotiate(r.Header.Get("Accept"), counterOffers); !ok {
		return errNotAcceptable
	}
	_ = httpx.WriteFull(w, http.StatusOK, "text/plain", strconv.AppendInt(nil, v, 10)) // a failed write means the client left
	return nil
}

// postCounter applies an update, checking as the reference does: the body (400 page),
// parameters (400), Accept (406), then the update itself (409 without allow_mult, 400
// for a quorum above n_val). It answers 204, or 200 with the new value when asked with
// returnvalue=true.
func (a *API) postCounter(w http.ResponseWriter, r *http.Request, l loc) error {
	body, err := readBody(w, r, counterBodyLimit)
	if err != nil {
		if httpx.IsTooLarge(err) {
			return errBadRequest // no integer is that long
		}
		return err
	}
	delta, err := parseCounterDelta(body)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return badRequest("Counter increment out of range: " + string(bytes.TrimSpace(body)) +
				" does not fit in a signed 64-bit integer\n")
		}
		return errBadRequest
	}
	q := query(r)
	p, err := parseParams(q)
	if err != nil {
		return err
	}
	if _, ok := wire.Negotiate(r.Header.Get("Accept"), counterOffers); !ok {
		return errNotAcceptable
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	v, err := a.kv.CounterAdd(ctx, l.bucket, l.key, delta, kv.PutOptions{W: p.w, DW: p.dw, PW: p.pw})
	if err != nil {
		return err
	}
	if q.get("returnvalue") != "true" {
		writeEmpty(w, http.StatusNoContent, "text/plain")
		return nil
	}
	_ = httpx.WriteFull(w, http.StatusOK, "text/plain", strconv.AppendInt(nil, v, 10)) // a failed write means the client left
	return nil
}

// parseCounterDelta reads a counter update's body: a decimal integer with an optional
// sign, surrounded by optional whitespace. An integer outside the int64 range gives an
// error wrapping strconv.ErrRange.
func parseCounterDelta(body []byte) (int64, error) {
	s := string(bytes.TrimSpace(body))
	if s == "" {
		return 0, errors.New("empty counter update")
	}
	digits := s
	if s[0] == '-' || s[0] == '+' {
		digits = s[1:]
	}
	if digits == "" || strings.IndexFunc(digits, func(c rune) bool { return c < '0' || c > '9' }) >= 0 {
		return 0, errors.New("counter update is not a decimal integer")
	}
	return strconv.ParseInt(s, 10, 64)
}
