package kvapi

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

var objectMethods = []string{"HEAD", "GET", "POST", "PUT", "DELETE"}

func (a *API) objectResource() resource {
	return resource{name: "kv_wm_object", methods: objectMethods, guard: objectGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			return a.getObject(w, r, l)
		case http.MethodPut, http.MethodPost:
			return a.putObject(w, r, l, false)
		default: // DELETE: the resource allows no other method
			return a.deleteObject(w, r, l)
		}
	}}
}

// createResource is POST to a bucket: a store with a server-assigned key.
func (a *API) createResource() resource {
	return resource{name: "kv_wm_object", methods: objectMethods, guard: objectGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		l.key = core.NewKey()
		return a.putObject(w, r, l, true)
	}}
}

// header returns a request header in either dialect (X-Store-suffix or X-Riak-suffix).
func header(r *http.Request, suffix string) (string, bool) {
	for _, p := range [...]string{"X-Riak-", "X-Store-"} {
		if v, ok := r.Header[p+suffix]; ok && len(v) > 0 {
			return v[0], true
		}
	}
	return "", false
}

func clockHeader(h http.Header, d wire.Dialect, clock []byte) {
	h[d.VclockHeader()] = []string{base64.StdEncoding.EncodeToString(clock)}
}

// Header values shared by every response; net/http only reads them.
var (
	varyAcceptEncoding       = []string{"Accept-Encoding"}
	varyAcceptAcceptEncoding = []string{"Accept, Accept-Encoding"}
	headerTrue               = []string{"true"}
	zeroLength               = []string{"0"}
)

// writeEmpty answers status with no body. webmachine writes the negotiated Content-Type
// on every response, bodiless 204s and 201s too, and Riak clients parse each response by
// its Content-Type, so ct (the resource's type) is always sent.
func writeEmpty(w http.ResponseWriter, status int, ct string) {
	h := w.Header()
	h["Content-Type"] = []string{ct}
	if status != http.StatusNoContent {
		h["Content-Length"] = zeroLength
	}
	w.WriteHeader(status)
}

// requestClock decodes the vector clock a client sent, if any.
func requestClock(r *http.Request) ([]byte, bool, error) {
	v, ok := header(r, "Vclock")
	if !ok || v == "" {
		return nil, false, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, true, badRequest("Invalid vector clock: not base64\n")
	}
	return b, true, nil
}

func (a *API) getObject(w http.ResponseWriter, r *http.Request, l loc) error {
	q := query(r)
	p, err := parseParams(q)
	if err != nil {
		return err
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	obj, err := a.kv.Get(ctx, l.typ, l.bucket, l.key, kv.GetOptions{R: p.r, PR: p.pr})
	if err != nil {
		return err
	}
	if vtag, ok := q.lookup("vtag"); ok {
		for i := range obj.Siblings {
			if obj.Siblings[i].VTag == vtag {
				return a.writeValue(w, r, l, obj, &obj.Siblings[i], http.StatusOK)
			}
		}
		return errNotFound
	}
	if obj.Deleted() {
		return tombstoneError(l, obj)
	}
	if len(obj.Siblings) == 1 {
		return a.writeValue(w, r, l, obj, &obj.Siblings[0], http.StatusOK)
	}
	return a.writeSiblings(w, r, l, obj, http.StatusMultipleChoices)
}

// tombstoneError is the answer to a fetch or delete of a deleted-but-visible object: 404
// with the Deleted header and the tombstone's clock, so a client can write over it.
func tombstoneError(l loc, obj *core.Object) error {
	return statusError(http.StatusNotFound, "not found\n",
		[2]string{l.d.DeletedHeader(), "true"},
		[2]string{l.d.VclockHeader(), base64.StdEncoding.EncodeToString(obj.VClock)})
}

// writeValue writes one sibling with every fetch header, or returns the error to answer
// instead (406, a failed condition) before writing anything.
func (a *API) writeValue(w http.ResponseWriter, r *http.Request, l loc, obj *core.Object, s *core.Sibling, status int) error {
	ct := wire.FormatContentType(s.ContentType, s.Charset)
	if _, ok := wire.Negotiate(r.Header.Get("Accept"), []string{ct}); !ok {
		return errNotAcceptable
	}
	if status == http.StatusOK {
		if done, err := conditionalDone(w, r, s.VTag, s.LastModified); done || err != nil {
			return err
		}
	}
	h := w.Header()
	// One backing array for the per-response header values (vclock, Link, ETag,
	// Last-Modified, Content-Encoding).
	vals := [5]string{
		base64.StdEncoding.EncodeToString(obj.VClock),
		wire.FormatLinks(s.Links, l.api, l.d, l.typ, l.bucket),
		`"` + s.VTag + `"`,
		wire.FormatHTTPDate(s.LastModified),
		s.Encoding,
	}
	vs := vals[:]
	h[l.d.VclockHeader()] = vs[0:1:1]
	h["Link"] = vs[1:2:2]
	h["ETag"] = vs[2:3:3]
	h["Last-Modified"] = vs[3:4:4]
	if s.Encoding != "" {
		h["Content-Encoding"] = vs[4:5:5]
	} else {
		h["Vary"] = varyAcceptEncoding
	}
	for _, m := range s.Meta {
		name := wire.MetaHeaderName(l.d, m.Name)
		h[name] = append(h[name], m.Value)
	}
	for _, kv := range wire.FormatIndexHeaders(s.Indexes, l.d) {
		h[kv[0]] = []string{kv[1]}
	}
	ttlHeader(h, l.d, obj)
	if s.Deleted {
		h[l.d.DeletedHeader()] = headerTrue
	}
	a.writeBody(w, r, status, ct, s.Value)
	return nil
}

// writeBody writes a complete body with Content-Length (none for HEAD).
func (a *API) writeBody(w http.ResponseWriter, r *http.Request, status int, ct string, body []byte) {
	if r.Method == http.MethodHead {
		h := w.Header()
		h["Content-Type"] = []string{ct}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(status)
		return
	}
	_ = httpx.WriteFull(w, status, ct, body) // a failed write means the client left
}

// writeSiblings answers 300 Multiple Choices: the vtag list as text/plain, or every
// sibling as multipart/mixed when the client prefers it; or it returns the error to
// answer instead (406, a failed condition) before writing anything.
func (a *API) writeSiblings(w http.ResponseWriter, r *http.Request, l loc, obj *core.Object, status int) error {
	ct, ok := wire.Negotiate(r.Header.Get("Accept"), []string{"text/plain", "multipart/mixed"})
	if !ok {
		return errNotAcceptable
	}
	etag := wire.ETagOfClock(obj.VClock)
	lm := obj.LastModified()
	if status == http.StatusMultipleChoices {
		if done, err := conditionalDone(w, r, etag, lm); done || err != nil {
			return err
		}
	}
	h := w.Header()
	clockHeader(h, l.d, obj.VClock)
	h["Vary"] = varyAcceptAcceptEncoding
	h["ETag"] = []string{`"` + etag + `"`}
	h["Last-Modified"] = []string{wire.FormatHTTPDate(lm)}
	ttlHeader(h, l.d, obj)
	if ct == "text/plain" {
		vtags := make([]string, len(obj.Siblings))
		for i := range obj.Siblings {
			vtags[i] = obj.Siblings[i].VTag
		}
		a.writeBody(w, r, status, "text/plain", wire.SiblingsText(vtags))
		return nil
	}
	boundary := wire.NewBoundary()
	parts := make([]wire.Part, len(obj.Siblings))
	for i := range obj.Siblings {
		parts[i] = a.siblingPart(l, &obj.Siblings[i])
	}
	var buf bytes.Buffer
	wire.WriteMultipart(&buf, boundary, parts)
	a.writeBody(w, r, status, wire.MultipartContentType(boundary), buf.Bytes())
	return nil
}

// siblingPart renders one sibling as a multipart part with the reference's header order.
func (a *API) siblingPart(l loc, s *core.Sibling) wire.Part {
	return wire.Part{Headers: wire.SiblingHeaders(s, l.api, l.d, l.typ, l.bucket), Body: s.Value}
}

// conditionalDone evaluates a fetch's conditional headers against the representation's
// etag and last-modified time. It answers 304 (with only the ETag, as the reference
// does) and reports true, returns the failed condition's error (412) to answer instead,
// or reports false when the fetch should proceed. Writes evaluate their conditions
// under the key's lock instead (writePrecondition).
func conditionalDone(w http.ResponseWriter, r *http.Request, etag string, lm time.Time) (bool, error) {
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !hasConditions(r) {
		return false, nil
	}
	switch code := conditions(r).Evaluate(true, etag, lm, true, time.Now()); code {
	case 0:
		return false, nil
	case http.StatusNotModified:
		w.Header()["ETag"] = []string{`"` + etag + `"`}
		w.WriteHeader(http.StatusNotModified)
		return true, nil
	default:
		return false, statusError(code, "")
	}
}

func conditions(r *http.Request) wire.Conditions {
	return wire.Conditions{
		IfMatch:           r.Header.Get("If-Match"),
		IfNoneMatch:       r.Header.Get("If-None-Match"),
		IfModifiedSince:   r.Header.Get("If-Modified-Since"),
		IfUnmodifiedSince: r.Header.Get("If-Unmodified-Since"),
	}
}

func hasConditions(r *http.Request) bool {
	h := r.Header
	return h.Get("If-Match") != "" || h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" || h.Get("If-Unmodified-Since") != ""
}

// writePrecondition returns a check that evaluates the request's conditional headers
// against the stored object under the key's lock. Any failure of a write's condition is
// 412, as the interface specifies (the reference answers 304 for If-Modified-Since).
func writePrecondition(r *http.Request) func(*core.Object) error {
	if !hasConditions(r) {
		return nil
	}
	c := conditions(r)
	return func(cur *core.Object) error {
		exists := cur != nil && !cur.Deleted()
		var etag string
		var lm time.Time
		if exists {
			lm = cur.LastModified()
			if len(cur.Siblings) == 1 {
				etag = cur.Siblings[0].VTag
			} else {
				etag = wire.ETagOfClock(cur.VClock)
			}
		}
		if c.Evaluate(exists, etag, lm, false, time.Now()) != 0 {
			return &core.Error{Code: core.EPRECONDITION}
		}
		return nil
	}
}

func (a *API) putObject(w http.ResponseWriter, r *http.Request, l loc, created bool) error {
	ctHeader := r.Header.Get("Content-Type")
	if ctHeader == "" {
		return badRequest(wire.MissingContentTypeMessage)
	}
	p, err := parseParams(query(r))
	if err != nil {
		return err
	}
	var v core.Sibling
	if lh := r.Header.Values("Link"); len(lh) > 0 {
		links, err := wire.ParseLinks(joinHeader(lh), l.api, l.typ, l.bucket)
		if err != nil {
			return badRequest(wire.LinkErrorMessage(l.api, l.d))
		}
		v.Links = links
	}
	if v.Indexes, err = wire.ParseIndexHeaders(r.Header, l.d); err != nil {
		return badRequest(err.Error())
	}
	if v.ContentType, v.Charset, err = wire.ParseContentType(ctHeader); err != nil {
		return &core.Error{Code: core.EMEDIATYPE, Message: wire.MediaTypeErrorMessage(ctHeader)}
	}
	// A body that will be returned is negotiated before the write, as the reference does,
	// so that a 406 never answers a write that happened.
	if _, ok := wire.Negotiate(r.Header.Get("Accept"), []string{v.ContentType}); p.returnBody && !ok {
		return errNotAcceptable
	}
	v.Encoding = r.Header.Get("Content-Encoding")
	v.Meta = wire.ParseMeta(r.Header)
	// Refused before the body is read: the headers alone decide it.
	if err := a.kv.CheckHeaders(&v); err != nil {
		return err
	}
	clock, _, err := requestClock(r)
	if err != nil {
		return err
	}
	ttl, err := requestTTL(r)
	if err != nil {
		return err
	}
	if v.Value, err = readBody(w, r, a.kv.MaxValueSize()); err != nil {
		return err
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	obj, err := a.kv.Put(ctx, &kv.PutRequest{Type: l.typ, Bucket: l.bucket, Key: l.key, Context: clock, Value: v,
		Options: kv.PutOptions{W: p.w, DW: p.dw, PW: p.pw, Precondition: writePrecondition(r), TTL: ttl}})
	if err != nil {
		return err
	}
	status := http.StatusNoContent
	if created {
		w.Header()["Location"] = []string{wire.ObjectPath(l.api, l.d, l.typ, l.bucket, l.key)}
		status = http.StatusCreated
	}
	if !p.returnBody {
		// The object resource offers the request's media type for a write.
		writeEmpty(w, status, wire.FormatContentType(v.ContentType, v.Charset))
		return nil
	}
	if status == http.StatusNoContent {
		status = http.StatusOK
	}
	if len(obj.Siblings) > 1 {
		if !created {
			status = http.StatusMultipleChoices
		}
		return a.writeSiblings(w, r, l, obj, status)
	}
	return a.writeValue(w, r, l, obj, &obj.Siblings[0], status)
}

func joinHeader(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	var b bytes.Buffer
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v)
	}
	return b.String()
}

// readBody reads the whole request body, refusing more than limit bytes with 413. The
// memory it takes grows with the bytes received (httpx.ReadBody); a body too slow
// (408) or over the memory budget (503) is returned as such for writeError.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := httpx.ReadBody(w, r, limit)
	switch {
	case err == nil:
		return b, nil
	case httpx.IsTooLarge(err), httpx.IsBodyTimeout(err), errors.Is(err, httpx.ErrBodyMemory):
		return nil, err
	default:
		return nil, badRequest("Could not read the request body\n")
	}
}

func (a *API) deleteObject(w http.ResponseWriter, r *http.Request, l loc) error {
	p, err := parseParams(query(r))
	if err != nil {
		return err
	}
	clock, _, err := requestClock(r)
	if err != nil {
		return err
	}
	ctx, cancel := p.context(r.Context())
	defer cancel()
	tomb, err := a.kv.Delete(ctx, l.typ, l.bucket, l.key, kv.DeleteOptions{
		RW: p.rw, R: p.r, PR: p.pr, W: p.w, DW: p.dw, PW: p.pw, Context: clock, Precondition: writePrecondition(r)})
	if err != nil {
		if tomb != nil && kv.IsNotFound(err) {
			return tombstoneError(l, tomb)
		}
		return err
	}
	// The reference's object resource offers text/html for DELETE; the negotiated type is
	// written on the 204 too.
	writeEmpty(w, http.StatusNoContent, "text/html")
	return nil
}

// ttlSuffix names the TTL header, X-Riak-TTL or X-Store-TTL, in the canonical form
// net/http keys headers by.
const ttlSuffix = "Ttl"

// requestTTL returns the object's TTL a write asks for in either dialect's TTL header:
// nil when there is none (the bucket's ttl applies), a 400 when it is not whole
// seconds in range (kv.ParseTTL).
func requestTTL(r *http.Request) (*int64, error) {
	v, ok := header(r, ttlSuffix)
	if !ok {
		return nil, nil
	}
	n, err := kv.ParseTTL(v)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// ttlHeader sets the TTL header of a fetch, in the response's dialect, to the seconds
// the object has left (rounded up); an object that never expires gets none.
func ttlHeader(h http.Header, d wire.Dialect, obj *core.Object) {
	if left, ok := kv.ExpiresIn(obj, time.Now()); ok {
		h[d.Header(ttlSuffix)] = []string{strconv.FormatInt(left, 10)}
	}
}
