package kvapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// datatypeResource is /types/T/buckets/B/datatypes[/K] (Riak's riak_kv_wm_crdt): GET
// answers {"type","value","context"}, POST applies an operation (without K, to a key the
// server chooses, named in Location). For the default type it redirects to the 1.4-style
// counter URL, as the reference does. kv.DatatypeUpdate documents the semantics.
func (a *API) datatypeResource() resource {
	return resource{name: "kv_wm_crdt", methods: []string{"HEAD", "GET", "POST"}, guard: objectGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if l.typ == core.DefaultType {
			return statusError(http.StatusMovedPermanently, "Counters in the default bucket-type should use the legacy URL\n",
				[2]string{"Location", "/buckets/" + wire.QuotePlus(l.bucket) + "/counters/" + wire.QuotePlus(l.key)})
		}
		if _, err := a.kv.TypeProps(r.Context(), l.typ); err != nil {
			return err
		}
		q := query(r)
		p, err := parseParams(q)
		if err != nil {
			return err
		}
		includeCtx, err := boolParam(q, "include_context", true)
		if err != nil {
			return err
		}
		if p.returnBody, err = boolParam(q, "returnbody", false); err != nil {
			return err
		}
		k, err := a.kv.DatatypeKind(r.Context(), l.typ, l.bucket)
		if err != nil {
			return err
		}
		if r.Method == http.MethodPost {
			return a.postDatatype(w, r, l, k, p, includeCtx)
		}
		return a.getDatatype(w, r, l, k, p, includeCtx)
	}}
}

// boolParam reads a true/false query parameter (case-insensitive), answering Riak's 400
// for anything else.
func boolParam(q *queryArgs, name string, def bool) (bool, error) {
	v, ok := q.lookup(name)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "default":
		return def, nil
	}
	return false, badRequest(name + " query parameter must be true or false\n")
}

// getDatatype answers a datatype value, or 404 with Riak's JSON body.
func (a *API) getDatatype(w http.ResponseWriter, r *http.Request, l loc, k datatype.Kind, p params, includeCtx bool) error {
	if l.key == "" {
		return errDatatypeNotFound(k)
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	res, err := a.kv.DatatypeFetch(ctx, l.typ, l.bucket, l.key, kv.GetOptions{R: p.r, PR: p.pr})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return errDatatypeNotFound(k)
	}
	if err != nil {
		return err
	}
	return writeDatatype(w, l.d, http.StatusOK, res, includeCtx)
}

// postDatatype parses the body for the bucket's kind and applies it: 204, or 200 with
// the new value when returnbody=true; a keyless POST names the new key in Location.
func (a *API) postDatatype(w http.ResponseWriter, r *http.Request, l loc, k datatype.Kind, p params, includeCtx bool) error {
	ttl, err := requestTTL(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, a.kv.MaxValueSize())
	if err != nil {
		return err
	}
	op, err := datatype.ParseOp(k, body)
	if err != nil {
		var oe *datatype.OpError
		if errors.As(err, &oe) {
			return badRequest(oe.Msg)
		}
		return err
	}
	if l.key == "" {
		l.key = core.NewKey()
		w.Header()["Location"] = []string{wire.ObjectPath(l.api, l.d, l.typ, l.bucket, l.key)}
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	res, err := a.kv.DatatypeUpdate(ctx, l.typ, l.bucket, l.key, op, kv.PutOptions{W: p.w, DW: p.dw, PW: p.pw, TTL: ttl})
	if err != nil {
		return err
	}
	if !p.returnBody {
		writeEmpty(w, http.StatusNoContent, "application/json")
		return nil
	}
	return writeDatatype(w, l.d, http.StatusOK, res, includeCtx)
}

// writeDatatype writes {"type":…,"value":…,"context":…} (context only for the kinds
// that have one, and only when asked), with the TTL header of a key that expires.
func writeDatatype(w http.ResponseWriter, d wire.Dialect, status int, res kv.DatatypeResult, includeCtx bool) error {
	b, err := res.JSON(includeCtx)
	if err != nil {
		return err
	}
	ttlHeader(w.Header(), d, &core.Object{Expiry: res.Expiry})
	_ = httpx.WriteFull(w, status, "application/json", b) // a failed write means the client left
	return nil
}

// errDatatypeNotFound is Riak's 404 answer, {"type":…,"error":"notfound"}.
func errDatatypeNotFound(k datatype.Kind) error {
	b, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error string `json:"error"`
	}{k.String(), "notfound"})
	return jsonStatusError(http.StatusNotFound, b)
}
