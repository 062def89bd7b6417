// Package cairntest runs Cairn hooks written with the Go SDK natively, under go test,
// the way the server runs them in WebAssembly: it encodes the input of the extension
// point as ABI v1 JSON, calls the hook, and checks and decodes the status and output
// with the host's rules. A hook's logic can so be unit-tested without building a
// module or starting a server.
//
//	host := cairntest.New(t)
//	res, err := host.Precommit(Validate, cairn.OpPut, cairn.NewObject("users", "u1", "application/json", data))
//
// Raw JSON inputs go through Host.Call; the methods of Result interpret its status and
// output for each extension point.
package cairntest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cairnkv/cairn/sdk/abi"
	"github.com/cairnkv/cairn/sdk/go/cairn"
	"github.com/cairnkv/cairn/sdk/go/internal/nativelog"
)

// callMu guards nativelog's sink: the host runs one call at a time, as one module
// instance serves one call at a time.
var callMu sync.Mutex

// Logger receives log lines; *testing.T and *testing.B are Loggers.
type Logger interface {
	Logf(format string, args ...any)
}

// LogLine is one line a hook logged.
type LogLine struct {
	Level cairn.Level
	Msg   string
}

// Host runs hooks natively. It is not safe for concurrent use; give each goroutine its
// own.
type Host struct {
	// Logger, when not nil, also receives every log line.
	Logger Logger
	// Logs holds the lines logged by all calls so far.
	Logs []LogLine
}

// New returns a host whose log lines also go to l (nil for none).
func New(l Logger) *Host { return &Host{Logger: l} }

// Result is what the host receives from one call.
type Result struct {
	// Point is the extension point of the hook called.
	Point cairn.Point
	// Op is the input's "op" for a precommit or postcommit.
	Op string
	// Status is the function's status.
	Status cairn.Status
	// Output is what the function passed to "cairn"."output" (nil for none).
	Output []byte
	// Logs are the lines the call logged.
	Logs []LogLine
}

// Call runs hook on raw input bytes, as the host does after writing them to the
// buffer of cairn_alloc.
func (h *Host) Call(hook cairn.Hook, input []byte) Result {
	callMu.Lock()
	defer callMu.Unlock()
	res := Result{Point: hook.Point()}
	if res.Point == cairn.PointPrecommit || res.Point == cairn.PointPostcommit {
		var in struct {
			Op string `json:"op"`
		}
		_ = json.Unmarshal(input, &in) // the hook reports a bad input itself
		res.Op = in.Op
	}
	restore := nativelog.SetSink(func(level int32, msg string) {
		l := LogLine{Level: cairn.Level(level), Msg: msg}
		res.Logs = append(res.Logs, l)
		if h.Logger != nil {
			h.Logger.Logf("hook log [%s] %s", l.Level, msg)
		}
	})
	defer restore()
	res.Status, res.Output = hook.Call(bytes.Clone(input))
	if len(res.Output) == 0 {
		res.Output = nil
	}
	h.Logs = append(h.Logs, res.Logs...)
	return res
}

// ErrorKind says how a call failed, in the terms of the server's hook errors.
type ErrorKind int

// The kinds of failure the host distinguishes.
const (
	// Failed: the function reported an error (status 2, or status 1 outside precommit).
	Failed ErrorKind = iota
	// BadResult: the status is unknown or the output breaks the extension point's rules.
	BadResult
)

// String returns "failed" or "bad result".
func (k ErrorKind) String() string {
	if k == BadResult {
		return "bad result"
	}
	return "failed"
}

// CallError is a call that the host counts as failed.
type CallError struct {
	Kind  ErrorKind
	Point cairn.Point
	// Message is the function's own message (Failed) or what is wrong (BadResult).
	Message string
}

// Error implements error.
func (e *CallError) Error() string {
	return fmt.Sprintf("cairntest: %s %s: %s", e.Point, e.Kind, e.Message)
}

// check returns the CallError of a status other than OK (and Reject for precommit).
func (r Result) check() error {
	switch r.Status {
	case cairn.StatusOK:
		if len(r.Output) > abi.MaxOutputBytes {
			return r.bad("output of %d bytes is over the limit of %d", len(r.Output), abi.MaxOutputBytes)
		}
		return nil
	case cairn.StatusReject:
		if r.Point == cairn.PointPrecommit {
			return nil
		}
		return &CallError{Kind: Failed, Point: r.Point, Message: string(r.Output)}
	case cairn.StatusError:
		return &CallError{Kind: Failed, Point: r.Point, Message: string(r.Output)}
	}
	return r.bad("unknown status %d", r.Status)
}

func (r Result) bad(format string, args ...any) error {
	return &CallError{Kind: BadResult, Point: r.Point, Message: fmt.Sprintf(format, args...)}
}

// PrecommitResult is a precommit's verdict as the host reads it.
type PrecommitResult struct {
	// Reject is set when the write is refused; Reason is then what the client sees.
	Reject bool
	Reason string
	// Replacement is the object the hook returned instead of the written one (nil when
	// it accepted the write unchanged).
	Replacement *cairn.Object
}

// String renders the verdict as `cairn hook call` prints it: "accept",
// "reject: REASON" or "replace: OBJECT".
func (p PrecommitResult) String() string {
	switch {
	case p.Reject:
		return "reject: " + p.Reason
	case p.Replacement != nil:
		b, _ := p.Replacement.MarshalJSON()
		return "replace: " + string(b)
	}
	return "accept"
}

// Precommit reads the result of a precommit: accept, reject with a reason, or a
// replacement object, which must decode and pass the checks the host makes before
// storing it (see CheckReplacement). As on the server, a replacement returned for a
// delete is ignored, and the reason of a rejection is what the client sees (the server
// says "rejected by MODULE:FUNCTION" when it is empty).
func (r Result) Precommit() (PrecommitResult, error) {
	if r.Point != cairn.PointPrecommit {
		return PrecommitResult{}, r.bad("not a precommit but a %s", r.Point)
	}
	if err := r.check(); err != nil {
		return PrecommitResult{}, err
	}
	if r.Status == cairn.StatusReject {
		return PrecommitResult{Reject: true, Reason: string(r.Output)}, nil
	}
	if len(r.Output) == 0 || r.Op == cairn.OpDelete {
		return PrecommitResult{}, nil
	}
	var obj cairn.Object
	if err := json.Unmarshal(r.Output, &obj); err != nil {
		return PrecommitResult{}, r.bad("replacement: %v", err)
	}
	if err := CheckReplacement(&obj); err != nil {
		return PrecommitResult{}, r.bad("replacement: %v", err)
	}
	return PrecommitResult{Replacement: &obj}, nil
}

// CheckReplacement makes the checks the host makes on a precommit's replacement before
// it stores its first value (see docs/abi.md): there is a value; its content type is a
// media type (type/subtype); nothing that becomes an HTTP header has control
// characters; user metadata names and index fields are header names; index fields end
// in "_bin" or "_int" and "_int" values are integers; links name a bucket and a key; a
// Last-Modified, though ignored, is an RFC 1123 date. The server also applies its size
// limits, which this does not know.
func CheckReplacement(obj *cairn.Object) error {
	v := obj.First()
	if v == nil {
		return errors.New("no values")
	}
	m := &v.Metadata
	if !isMediaType(m.ContentType) {
		return fmt.Errorf("content-type %q is not a media type (type/subtype)", m.ContentType)
	}
	for name, val := range map[string]string{"content-type": m.ContentType, "charset": m.Charset, "content-encoding": m.ContentEncoding} {
		if !headerSafe(val) {
			return fmt.Errorf("%s %q has control characters", name, val)
		}
	}
	if m.LastModified != "" {
		if _, err := m.LastModifiedTime(); err != nil {
			return err
		}
	}
	for name, val := range m.UserMeta {
		if !isToken(name) {
			return fmt.Errorf("user metadata %q: not a valid header name", name)
		}
		if !headerSafe(val) {
			return fmt.Errorf("user metadata %q: %q has control characters", name, val)
		}
	}
	for field, vals := range m.Indexes {
		isInt := strings.HasSuffix(field, "_int")
		switch {
		case !isInt && !strings.HasSuffix(field, "_bin"):
			return fmt.Errorf("index %q: a field name ends in _bin or _int", field)
		case !isToken(field):
			return fmt.Errorf("index %q: not a valid header name", field)
		}
		for _, s := range vals {
			if isInt && !isInteger(s) {
				return fmt.Errorf("index %q: %q is not an integer", field, s)
			}
			if !headerSafe(s) {
				return fmt.Errorf("index %q: %q has control characters", field, s)
			}
		}
	}
	for _, l := range m.Links {
		if l.Bucket == "" || l.Key == "" {
			return fmt.Errorf("link %v: a link names a bucket and a key", []string{l.Bucket, l.Key, l.Tag})
		}
	}
	return nil
}

// isInteger reports whether s is a decimal integer (of any size).
func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// headerSafe reports whether v may be sent in an HTTP header: no control characters
// other than tab.
func headerSafe(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// isToken reports whether v is an HTTP token (a valid header name).
func isToken(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isMediaType reports whether v has the shape type/subtype.
func isMediaType(v string) bool {
	t, sub, ok := strings.Cut(v, "/")
	return ok && t != "" && sub != "" && !strings.Contains(sub, "/") && !strings.ContainsAny(v, " \t;,")
}

// Postcommit reads the result of a postcommit: nil, or the error the host counts.
func (r Result) Postcommit() error {
	if r.Point != cairn.PointPostcommit {
		return r.bad("not a postcommit but a %s", r.Point)
	}
	return r.check()
}

// KeyHash reads the result of a chash_keyfun: 1 to 20 bytes.
func (r Result) KeyHash() ([]byte, error) {
	if r.Point != cairn.PointKeyFun {
		return nil, r.bad("not a chash_keyfun but a %s", r.Point)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	if n := len(r.Output); n == 0 || n > abi.KeyHashMaxBytes {
		return nil, r.bad("hash of %d bytes, want 1 to %d", n, abi.KeyHashMaxBytes)
	}
	return r.Output, nil
}

// Links reads the result of a linkfun: [[bucket, key, tag], ...].
func (r Result) Links() ([]cairn.Link, error) {
	if r.Point != cairn.PointLinkFun {
		return nil, r.bad("not a linkfun but a %s", r.Point)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	var raw [][]string
	if err := json.Unmarshal(r.Output, &raw); err != nil {
		return nil, r.bad("want [[bucket, key, tag], ...]: %v", err)
	}
	if raw == nil {
		return nil, r.bad("want [[bucket, key, tag], ...], have %s", r.Output)
	}
	links := make([]cairn.Link, len(raw))
	for i, l := range raw {
		switch {
		case len(l) != 3:
			return nil, r.bad("link %d: a link is [bucket, key, tag], have %d strings", i, len(l))
		case l[0] == "" || l[1] == "":
			return nil, r.bad("link %d: a link's bucket and key are not empty", i)
		}
		links[i] = cairn.Link{Bucket: l[0], Key: l[1], Tag: l[2]}
	}
	return links, nil
}

// Values reads the result of a map or reduce: a JSON array, one element per value.
func (r Result) Values() ([]json.RawMessage, error) {
	if r.Point != cairn.PointMap && r.Point != cairn.PointReduce {
		return nil, r.bad("not a map or reduce but a %s", r.Point)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	var vals []json.RawMessage
	if err := json.Unmarshal(r.Output, &vals); err != nil || vals == nil {
		return nil, r.bad("want a JSON array, have %q", r.Output)
	}
	return vals, nil
}

// encode marshals an input the way the host writes it (no HTML escaping).
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("cairntest: encode input: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// run encodes in and calls hook with it.
func (h *Host) run(hook cairn.Hook, in any) (Result, error) {
	b, err := encode(in)
	if err != nil {
		return Result{}, err
	}
	return h.Call(hook, b), nil
}

// Precommit runs a precommit on {"op": op, "object": obj}. On put the host passes the
// value being written (one value, the client's causal context, no VTag or
// LastModified); on delete a tombstone (see Tombstone). As on the server, a
// replacement returned on delete is ignored.
func (h *Host) Precommit(hook cairn.Hook, op string, obj *cairn.Object) (PrecommitResult, error) {
	r, err := h.run(hook, cairn.CommitInput{Op: op, Object: obj})
	if err != nil {
		return PrecommitResult{}, err
	}
	return r.Precommit()
}

// Postcommit runs a postcommit on {"op": op, "object": obj}.
func (h *Host) Postcommit(hook cairn.Hook, op string, obj *cairn.Object) error {
	r, err := h.run(hook, cairn.CommitInput{Op: op, Object: obj})
	if err != nil {
		return err
	}
	return r.Postcommit()
}

// KeyFun runs a chash_keyfun on a key's place and returns its hash.
func (h *Host) KeyFun(hook cairn.Hook, bucketType, bucket, key string) ([]byte, error) {
	in := cairn.KeyFunInput{BucketType: bucketType, Bucket: bucket, Key: key}
	r, err := h.run(hook, in)
	if err != nil {
		return nil, err
	}
	return r.KeyHash()
}

// LinkFun runs a linkfun on obj with a spec of bucket and tag (cairn.Wildcard for any).
func (h *Host) LinkFun(hook cairn.Hook, obj *cairn.Object, bucket, tag string) ([]cairn.Link, error) {
	in := cairn.LinkFunInput{Object: obj, Spec: cairn.LinkSpec{Bucket: bucket, Tag: tag}}
	r, err := h.run(hook, in)
	if err != nil {
		return nil, err
	}
	return r.Links()
}

// Map runs a map on obj. keydata and arg are encoded as JSON (nil is null; a
// json.RawMessage passes as is).
func (h *Host) Map(hook cairn.Hook, obj *cairn.Object, keydata, arg any) ([]json.RawMessage, error) {
	r, err := h.run(hook, mapInput{Object: obj, KeyData: keydata, Arg: arg})
	if err != nil {
		return nil, err
	}
	return r.Values()
}

// MapNotFound runs a map on the place of an object that was not found.
func (h *Host) MapNotFound(hook cairn.Hook, place cairn.Place, keydata, arg any) ([]json.RawMessage, error) {
	r, err := h.run(hook, mapInput{NotFound: &place, KeyData: keydata, Arg: arg})
	if err != nil {
		return nil, err
	}
	return r.Values()
}

// mapInput is cairn.MapInput with key data and argument as Go values.
type mapInput struct {
	Object   *cairn.Object `json:"object,omitempty"`
	NotFound *cairn.Place  `json:"not_found,omitempty"`
	KeyData  any           `json:"keydata"`
	Arg      any           `json:"arg"`
}

// Reduce runs a reduce on values (each encoded as JSON) and arg.
func (h *Host) Reduce(hook cairn.Hook, values []any, arg any) ([]json.RawMessage, error) {
	if values == nil {
		values = []any{}
	}
	in := struct {
		Values []any `json:"values"`
		Arg    any   `json:"arg"`
	}{values, arg}
	r, err := h.run(hook, in)
	if err != nil {
		return nil, err
	}
	return r.Values()
}

// Tombstone returns the object a precommit sees on delete: one value with empty data,
// marked deleted.
func Tombstone(bucketType, bucket, key string) *cairn.Object {
	return &cairn.Object{
		BucketType: bucketType,
		Bucket:     bucket,
		Key:        key,
		Values:     []cairn.Value{{Data: []byte{}, Metadata: cairn.Metadata{Deleted: true}}},
	}
}
