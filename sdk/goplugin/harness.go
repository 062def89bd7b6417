package goplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// Capabilities describes a plugin, as Describe answers: the ABI version it speaks, the
// extension points it offers and, when it lists them, its functions.
type Capabilities struct {
	ABIVersion uint32
	Points     []Point
	Functions  []Function
}

// Harness runs a plugin implementation in the test's own process, for plugin authors'
// tests: it serves the implementation with the same gRPC service and server options as
// a plugin process (NewServer behind go-plugin's glue), over an in-memory connection,
// and calls it with typed methods. The whole protocol runs (encoding, the Map stream,
// status codes), only the process and the handshake are left out.
//
// A failed call returns a *CallError: Failed() tells the function's own error from a
// crash (a panic is codes.Internal). Harness.Map returns a *MapError when the function
// failed for some inputs. A Harness is safe for concurrent use; Close it when done.
type Harness struct {
	client hookspb.HooksClient
	conn   *grpc.ClientConn
	srv    *grpc.Server
	// served is closed when the server's Serve goroutine returns.
	served    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// harnessBufferSize is the in-memory connection's buffer.
const harnessBufferSize = 1 << 20

// NewHarness serves impl (anything NewServer takes) in process and connects to it.
func NewHarness(impl any) (*Harness, error) {
	hs, err := NewServer(impl)
	if err != nil {
		return nil, err
	}
	lis := bufconn.Listen(harnessBufferSize)
	srv := newGRPCServer(nil)
	glue := &GRPCPlugin{Impl: hs}
	if err := glue.GRPCServer(nil, srv); err != nil {
		_ = lis.Close()
		return nil, fmt.Errorf("goplugin: harness: register the service: %w", err)
	}
	h := &Harness{srv: srv, served: make(chan struct{})}
	go func() {
		defer close(h.served)
		_ = srv.Serve(lis) // ends with Stop, in Close
	}()
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	opts := append(GRPCDialOptions(), grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("passthrough:///goplugin-harness", opts...)
	if err != nil {
		srv.Stop()
		<-h.served
		return nil, fmt.Errorf("goplugin: harness: connect: %w", err)
	}
	h.conn = conn
	client, err := (&GRPCPlugin{}).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("goplugin: harness: client: %w", err)
	}
	h.client = client.(hookspb.HooksClient)
	return h, nil
}

// Client returns the raw gRPC client, for tests of the protocol itself.
func (h *Harness) Client() hookspb.HooksClient {
	return h.client
}

// Close closes the connection and stops the server, abandoning calls in progress. It
// is safe to call more than once.
func (h *Harness) Close() error {
	h.closeOnce.Do(func() {
		if err := h.conn.Close(); err != nil {
			h.closeErr = fmt.Errorf("goplugin: harness: close: %w", err)
		}
		h.srv.Stop()
		<-h.served
	})
	return h.closeErr
}

// Describe returns the plugin's capabilities.
func (h *Harness) Describe(ctx context.Context) (Capabilities, error) {
	c, err := h.client.Describe(ctx, &hookspb.Empty{})
	if err != nil {
		return Capabilities{}, callError(err)
	}
	caps := Capabilities{ABIVersion: c.GetAbiVersion()}
	for _, p := range c.GetPoints() {
		caps.Points = append(caps.Points, describedPoint(p))
	}
	for _, f := range c.GetFunctions() {
		fn := Function{Name: f.GetName()}
		for _, p := range f.GetPoints() {
			fn.Points = append(fn.Points, describedPoint(p))
		}
		caps.Functions = append(caps.Functions, fn)
	}
	return caps, nil
}

// describedPoint converts a point of a Describe answer; an unknown one keeps its
// protobuf name, so a test sees it.
func describedPoint(p hookspb.Point) Point {
	if pt, ok := pointFromPB(p); ok {
		return pt
	}
	return Point(p.String())
}

// hookRequest builds the request of a commit hook.
func hookRequest(fun string, op Op, obj *Object) (*hookspb.HookRequest, error) {
	pop, err := opToPB(op)
	if err != nil {
		return nil, err
	}
	req := &hookspb.HookRequest{Fun: fun, Op: pop}
	if obj != nil {
		req.Object = objectToPB(obj)
	}
	return req, nil
}

// Precommit calls precommit function fun. The verdict's Replace object, when there is
// one, is as the server would receive it.
func (h *Harness) Precommit(ctx context.Context, fun string, op Op, obj *Object) (Verdict, error) {
	req, err := hookRequest(fun, op, obj)
	if err != nil {
		return Verdict{}, err
	}
	resp, err := h.client.Precommit(ctx, req)
	if err != nil {
		return Verdict{}, callError(err)
	}
	switch r := resp.GetResult().(type) {
	case *hookspb.PrecommitResponse_Accept:
		return Verdict{}, nil
	case *hookspb.PrecommitResponse_Reject:
		return Verdict{Reject: true, Reason: r.Reject}, nil
	case *hookspb.PrecommitResponse_Replace:
		if r.Replace == nil {
			return Verdict{}, errors.New("goplugin: harness: the precommit replaced the object with nothing")
		}
		return Verdict{Replace: objectFromPB(r.Replace)}, nil
	}
	return Verdict{}, errors.New("goplugin: harness: the precommit answered no result")
}

// Postcommit calls postcommit function fun.
func (h *Harness) Postcommit(ctx context.Context, fun string, op Op, obj *Object) error {
	req, err := hookRequest(fun, op, obj)
	if err != nil {
		return err
	}
	_, err = h.client.Postcommit(ctx, req)
	return callError(err)
}

// KeyHash calls chash_keyfun function fun.
func (h *Harness) KeyHash(ctx context.Context, fun, bucketType, bucket, key string) ([]byte, error) {
	resp, err := h.client.KeyHash(ctx, &hookspb.KeyHashRequest{Fun: fun,
		BucketType: stringBytes(bucketType), Bucket: stringBytes(bucket), Key: stringBytes(key)})
	if err != nil {
		return nil, callError(err)
	}
	return resp.GetHash(), nil
}

// Links calls linkfun function fun for the links of obj that match bucket and tag.
func (h *Harness) Links(ctx context.Context, fun string, obj *Object, bucket, tag string) ([]Link, error) {
	req := &hookspb.LinkRequest{Fun: fun, Bucket: stringBytes(bucket), Tag: stringBytes(tag)}
	if obj != nil {
		req.Object = objectToPB(obj)
	}
	resp, err := h.client.Links(ctx, req)
	if err != nil {
		return nil, callError(err)
	}
	return linksFromPB(resp.GetLinks()), nil
}

// Map calls map function fun for every input, in order, over one stream as the server
// does (fun and arg in the first message only; the inputs' own Arg fields are not
// sent), and returns the outputs of each input. When the function failed for some
// inputs, their outputs are nil and the error is a *MapError listing them; any other
// error is the stream's end (a *CallError).
func (h *Harness) Map(ctx context.Context, fun string, arg json.RawMessage, inputs ...MapInput) ([][]json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := h.client.Map(ctx)
	if err != nil {
		return nil, callError(err)
	}
	// The sender is waited for on every return; it ends at the end of the inputs or
	// when cancel ends the stream.
	var sendErr error
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		sendErr = sendMapInputs(stream, fun, arg, inputs)
	}()
	outputs := make([][]json.RawMessage, 0, len(inputs))
	var failed []InputError
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cancel()
			<-sent
			return nil, callError(err)
		}
		if len(outputs) == len(inputs) {
			cancel()
			<-sent
			return nil, fmt.Errorf("goplugin: harness: the map stream answered more than its %d inputs", len(inputs))
		}
		if msg := resp.GetError(); msg != "" {
			failed = append(failed, InputError{Index: len(outputs), Message: msg})
			outputs = append(outputs, nil)
			continue
		}
		outputs = append(outputs, rawValues(resp.GetValuesJson()))
	}
	<-sent
	if sendErr != nil {
		return nil, sendErr
	}
	if len(outputs) != len(inputs) {
		return nil, fmt.Errorf("goplugin: harness: the map stream answered %d of its %d inputs", len(outputs), len(inputs))
	}
	if failed != nil {
		return outputs, &MapError{Inputs: failed}
	}
	return outputs, nil
}

// sendMapInputs sends the inputs of a map stream and closes its sending side. A stream
// the plugin ended is not an error here: its status comes from Recv.
func sendMapInputs(stream hookspb.Hooks_MapClient, fun string, arg json.RawMessage, inputs []MapInput) error {
	for i, in := range inputs {
		req := &hookspb.MapRequest{NotFound: in.NotFound, KeydataJson: in.KeyData}
		if in.Object != nil {
			req.Object = objectToPB(in.Object)
		}
		if i == 0 {
			req.Fun, req.ArgJson = fun, arg
		}
		if err := stream.Send(req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return callError(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		return callError(err)
	}
	return nil
}

// Reduce calls reduce function fun.
func (h *Harness) Reduce(ctx context.Context, fun string, values []json.RawMessage, arg json.RawMessage) ([]json.RawMessage, error) {
	resp, err := h.client.Reduce(ctx, &hookspb.ReduceRequest{Fun: fun, ValuesJson: byteValues(values), ArgJson: arg})
	if err != nil {
		return nil, callError(err)
	}
	return rawValues(resp.GetValuesJson()), nil
}
