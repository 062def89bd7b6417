package goplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// Serve serves impl as a plugin process: it answers go-plugin's handshake on standard
// output and the Hooks service over gRPC, and returns when the server stops the plugin.
// impl is what NewServer takes, usually a *Mux. When impl offers no extension point or
// is otherwise unusable, Serve writes the reason to standard error and exits with
// status 1 (the server logs the plugin's standard error).
func Serve(impl any) {
	srv, err := NewServer(impl)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ServeHooks(srv)
}

// NewServer adapts a typed implementation to the Hooks gRPC service; Serve and the
// Harness use it. impl offers the extension points whose interfaces it implements
// (Precommitter, Postcommitter, KeyHasher, Linker, Mapper, Reducer), and at least one.
// A *Mux offers what was registered on it, and is sealed: registering on it afterwards
// panics. A hookspb.HooksServer is returned as it is.
//
// When impl is a FunctionLister, its functions are the only ones callable, every point
// they list must be implemented, and the points reported by Describe are those some
// function lists. Functions is called once, here.
//
// A precommit's Verdict becomes accept (the zero Verdict), reject (Reject set, even
// with Replace; an empty Reason becomes "rejected by FUN") or replace. Texts sent as
// protobuf strings must be UTF-8: invalid bytes in a reason or an error's text are
// replaced with U+FFFD, and a replacement object whose content type, charset, content
// encoding or vtag is not valid UTF-8 is the function's error.
//
// The service answers:
//   - a point impl does not offer: codes.Unimplemented;
//   - a function a FunctionLister does not list at that point: codes.NotFound;
//   - a request without an object, or with an unknown operation: codes.InvalidArgument;
//   - the function's own error: codes.Unknown with the error's text (the server reports
//     it as the function's failure); a chash_keyfun result that is not 1 to 20 bytes is
//     one too;
//   - an error the function returns because the call's context ended: the context's
//     status (codes.Canceled or codes.DeadlineExceeded);
//   - a panic in the function, recovered (the process goes on serving): codes.Internal,
//     "panic: VALUE", with the stack written to standard error. The server reports it as
//     a crash of the call. A panic in a goroutine the function started is not
//     recovered and ends the process.
//
// A Map stream takes its function name and argument from its first message; later
// messages may leave them empty or repeat them (anything else ends the stream with
// codes.InvalidArgument). It answers one ValuesResponse per input, in order: the
// function's error for an input goes in that answer's error and the stream goes on; a
// panic ends the stream with codes.Internal.
//
// The typed values a function receives share the request's memory (no copies); they
// stay valid after the call, and functions may keep or modify them, except a map
// stream's argument (MapInput.Arg), which all the stream's inputs share.
func NewServer(impl any) (hookspb.HooksServer, error) {
	switch v := impl.(type) {
	case nil:
		return nil, errors.New("goplugin: no implementation given")
	case hookspb.HooksServer:
		return v, nil
	case *Mux:
		if v == nil {
			return nil, errors.New("goplugin: nil *Mux")
		}
		impl = v.seal()
	}
	// what names impl in errors.
	what := fmt.Sprintf("%T", impl)
	if _, ok := impl.(*muxImpl); ok {
		what = "the Mux"
	}
	s := &server{}
	s.pre, _ = impl.(Precommitter)
	s.post, _ = impl.(Postcommitter)
	s.keyHash, _ = impl.(KeyHasher)
	s.links, _ = impl.(Linker)
	s.mapper, _ = impl.(Mapper)
	s.reducer, _ = impl.(Reducer)
	implemented := [numPoints]bool{s.pre != nil, s.post != nil, s.keyHash != nil, s.links != nil, s.mapper != nil, s.reducer != nil}
	offered := implemented
	caps := &hookspb.Capabilities{AbiVersion: ABIVersion}
	if fl, ok := impl.(FunctionLister); ok {
		funs, err := indexFunctions(fl.Functions(), implemented, what)
		if err != nil {
			return nil, err
		}
		s.funs = &funs
		offered = [numPoints]bool{}
		for i := range funs {
			offered[i] = len(funs[i]) > 0
		}
		caps.Functions = describeFunctions(&funs)
	}
	for i, p := range allPoints {
		if offered[i] {
			caps.Points = append(caps.Points, pointToPB(p))
		}
	}
	if len(caps.Points) == 0 {
		if s.funs != nil {
			return nil, fmt.Errorf("goplugin: %s lists no functions", what)
		}
		return nil, fmt.Errorf("goplugin: %T implements no extension point (Precommitter, Postcommitter, KeyHasher, Linker, Mapper or Reducer)", impl)
	}
	// A point no function is listed at is not offered at all.
	if !offered[0] {
		s.pre = nil
	}
	if !offered[1] {
		s.post = nil
	}
	if !offered[2] {
		s.keyHash = nil
	}
	if !offered[3] {
		s.links = nil
	}
	if !offered[4] {
		s.mapper = nil
	}
	if !offered[5] {
		s.reducer = nil
	}
	s.caps = caps
	return s, nil
}

// functionIndex holds, per point (by pointIndex), the names of the functions listed
// there.
type functionIndex [numPoints]map[string]struct{}

// indexFunctions checks a FunctionLister's list and indexes it.
func indexFunctions(fs []Function, implemented [numPoints]bool, what string) (functionIndex, error) {
	var idx functionIndex
	for _, f := range fs {
		if f.Name == "" {
			return idx, fmt.Errorf("goplugin: %s lists a function without a name", what)
		}
		if !utf8.ValidString(f.Name) {
			return idx, fmt.Errorf("goplugin: %s lists function %q, whose name is not valid UTF-8", what, f.Name)
		}
		if len(f.Points) == 0 {
			return idx, fmt.Errorf("goplugin: %s lists function %q at no point", what, f.Name)
		}
		for _, p := range f.Points {
			i := pointIndex(p)
			switch {
			case i < 0:
				return idx, fmt.Errorf("goplugin: %s lists function %q at unknown point %q", what, f.Name, p)
			case !implemented[i]:
				return idx, fmt.Errorf("goplugin: %s lists function %q at point %s but does not implement %s", what, f.Name, p, pointInterface[i])
			}
			if idx[i] == nil {
				idx[i] = make(map[string]struct{})
			}
			idx[i][f.Name] = struct{}{}
		}
	}
	return idx, nil
}

// pointInterface names the interface of each point (by pointIndex).
var pointInterface = [numPoints]string{"Precommitter", "Postcommitter", "KeyHasher", "Linker", "Mapper", "Reducer"}

// describeFunctions lists the indexed functions by name, each with its points in the
// canonical order.
func describeFunctions(idx *functionIndex) []*hookspb.Function {
	byName := make(map[string]*hookspb.Function)
	for i := range idx {
		for name := range idx[i] {
			f := byName[name]
			if f == nil {
				f = &hookspb.Function{Name: name}
				byName[name] = f
			}
			f.Points = append(f.Points, pointToPB(allPoints[i]))
		}
	}
	out := make([]*hookspb.Function, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *hookspb.Function) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// server is the Hooks service over a typed implementation. It holds no mutable state:
// calls run concurrently, as the implementation's methods must allow.
type server struct {
	hookspb.UnimplementedHooksServer

	// caps is Describe's answer, shared by all calls (never modified).
	caps *hookspb.Capabilities
	// The implementation, per point; nil where it is not offered.
	pre     Precommitter
	post    Postcommitter
	keyHash KeyHasher
	links   Linker
	mapper  Mapper
	reducer Reducer
	// funs is the function list of a FunctionLister; nil: any name is taken.
	funs *functionIndex
}

// Shared responses: gRPC only reads a response (it encodes it), so identical ones need
// not be allocated per call.
var (
	acceptResponse = &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Accept{Accept: true}}
	emptyResponse  = &hookspb.Empty{}
)

// maxKeyHash is the longest ring position, in bytes (160 bits).
const maxKeyHash = 20

// Describe answers the plugin's capabilities.
func (s *server) Describe(context.Context, *hookspb.Empty) (*hookspb.Capabilities, error) {
	return s.caps, nil
}

// check answers whether fun may be called at point p.
func (s *server) check(p Point, fun string) error {
	if s.funs == nil {
		return nil
	}
	if _, ok := s.funs[pointIndex(p)][fun]; !ok {
		return status.Errorf(codes.NotFound, "no function %q at point %s", fun, p)
	}
	return nil
}

// unimplemented is the answer at a point the plugin does not offer.
func unimplemented(p Point) error {
	return status.Errorf(codes.Unimplemented, "the plugin does not offer %s functions", p)
}

// errNoObject is the answer to a request without its object.
var errNoObject = status.Error(codes.InvalidArgument, "the request has no object")

// recoverCall turns a panic of the function into codes.Internal in *errp and writes the
// stack to standard error. It must be deferred directly.
func recoverCall(p Point, fun string, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	// os.Stderr is read now: go-plugin replaces it with a pipe to the server.
	fmt.Fprintf(os.Stderr, "goplugin: panic in %s function %q: %v\n%s", p, fun, r, debug.Stack())
	*errp = status.Errorf(codes.Internal, "panic: %v", r)
}

// funcError converts a function's own error.
func funcError(ctx context.Context, p Point, fun string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return status.FromContextError(ctxErr).Err()
	}
	return status.Error(codes.Unknown, funcErrorText(p, fun, err))
}

// funcErrorText is the text of a function's error, never empty, and valid UTF-8 (a
// protobuf string must be; an error may quote a binary key).
func funcErrorText(p Point, fun string, err error) string {
	if msg := err.Error(); msg != "" {
		return strings.ToValidUTF8(msg, "\uFFFD")
	}
	return fmt.Sprintf("%s function %q failed", p, fun)
}

// checkStrings checks that the string fields of a replacement object are valid UTF-8,
// as protobuf strings must be (the bytes fields may hold anything).
func checkStrings(fun string, obj *Object) error {
	for i := range obj.Contents {
		c := &obj.Contents[i]
		for _, f := range [...]struct{ name, value string }{
			{"content type", c.ContentType}, {"charset", c.Charset},
			{"content encoding", c.ContentEncoding}, {"vtag", c.VTag},
		} {
			if !utf8.ValidString(f.value) {
				return status.Errorf(codes.Unknown, "precommit function %q replaced the object with a %s that is not valid UTF-8", fun, f.name)
			}
		}
	}
	return nil
}

// Precommit calls a precommit function.
func (s *server) Precommit(ctx context.Context, req *hookspb.HookRequest) (_ *hookspb.PrecommitResponse, err error) {
	if s.pre == nil {
		return nil, unimplemented(PointPrecommit)
	}
	fun := req.GetFun()
	if err := s.check(PointPrecommit, fun); err != nil {
		return nil, err
	}
	op, obj, err := hookInput(req)
	if err != nil {
		return nil, err
	}
	defer recoverCall(PointPrecommit, fun, &err)
	v, err := s.pre.Precommit(ctx, fun, op, obj)
	switch {
	case err != nil:
		return nil, funcError(ctx, PointPrecommit, fun, err)
	case v.Reject:
		reason := strings.ToValidUTF8(v.Reason, "\uFFFD")
		if reason == "" {
			reason = "rejected by " + fun
		}
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Reject{Reject: reason}}, nil
	case v.Replace != nil:
		if err := checkStrings(fun, v.Replace); err != nil {
			return nil, err
		}
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Replace{Replace: objectToPB(v.Replace)}}, nil
	}
	return acceptResponse, nil
}

// Postcommit calls a postcommit function.
func (s *server) Postcommit(ctx context.Context, req *hookspb.HookRequest) (_ *hookspb.Empty, err error) {
	if s.post == nil {
		return nil, unimplemented(PointPostcommit)
	}
	fun := req.GetFun()
	if err := s.check(PointPostcommit, fun); err != nil {
		return nil, err
	}
	op, obj, err := hookInput(req)
	if err != nil {
		return nil, err
	}
	defer recoverCall(PointPostcommit, fun, &err)
	if err := s.post.Postcommit(ctx, fun, op, obj); err != nil {
		return nil, funcError(ctx, PointPostcommit, fun, err)
	}
	return emptyResponse, nil
}

// hookInput converts the input of a commit hook.
func hookInput(req *hookspb.HookRequest) (Op, *Object, error) {
	op, err := opFromPB(req.GetOp())
	if err != nil {
		return "", nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if req.GetObject() == nil {
		return "", nil, errNoObject
	}
	return op, objectFromPB(req.Object), nil
}

// KeyHash calls a chash_keyfun function and checks the length of its answer.
func (s *server) KeyHash(ctx context.Context, req *hookspb.KeyHashRequest) (_ *hookspb.KeyHashResponse, err error) {
	if s.keyHash == nil {
		return nil, unimplemented(PointKeyFun)
	}
	fun := req.GetFun()
	if err := s.check(PointKeyFun, fun); err != nil {
		return nil, err
	}
	defer recoverCall(PointKeyFun, fun, &err)
	h, err := s.keyHash.KeyHash(ctx, fun, bytesString(req.GetBucketType()), bytesString(req.GetBucket()), bytesString(req.GetKey()))
	if err != nil {
		return nil, funcError(ctx, PointKeyFun, fun, err)
	}
	if len(h) == 0 || len(h) > maxKeyHash {
		return nil, status.Errorf(codes.Unknown, "chash_keyfun function %q returned %d bytes; a ring position is 1 to %d bytes", fun, len(h), maxKeyHash)
	}
	return &hookspb.KeyHashResponse{Hash: h}, nil
}

// Links calls a linkfun function.
func (s *server) Links(ctx context.Context, req *hookspb.LinkRequest) (_ *hookspb.LinkResponse, err error) {
	if s.links == nil {
		return nil, unimplemented(PointLinkFun)
	}
	fun := req.GetFun()
	if err := s.check(PointLinkFun, fun); err != nil {
		return nil, err
	}
	if req.GetObject() == nil {
		return nil, errNoObject
	}
	obj := objectFromPB(req.Object)
	defer recoverCall(PointLinkFun, fun, &err)
	links, err := s.links.Links(ctx, fun, obj, bytesString(req.GetBucket()), bytesString(req.GetTag()))
	if err != nil {
		return nil, funcError(ctx, PointLinkFun, fun, err)
	}
	return &hookspb.LinkResponse{Links: linkListToPB(links)}, nil
}

// Reduce calls a reduce function. The values it receives share the request's memory.
func (s *server) Reduce(ctx context.Context, req *hookspb.ReduceRequest) (_ *hookspb.ValuesResponse, err error) {
	if s.reducer == nil {
		return nil, unimplemented(PointReduce)
	}
	fun := req.GetFun()
	if err := s.check(PointReduce, fun); err != nil {
		return nil, err
	}
	defer recoverCall(PointReduce, fun, &err)
	out, err := s.reducer.Reduce(ctx, fun, rawValues(req.GetValuesJson()), rawOrNil(req.GetArgJson()))
	if err != nil {
		return nil, funcError(ctx, PointReduce, fun, err)
	}
	return &hookspb.ValuesResponse{ValuesJson: byteValues(out)}, nil
}
