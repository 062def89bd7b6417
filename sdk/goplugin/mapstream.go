package goplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// mapQueueLen bounds the inputs received and decoded ahead of the one being mapped.
const mapQueueLen = 64

// Map serves a Map stream: the inputs of one map phase, answered one ValuesResponse
// each, in order.
//
// The stream's first message names the function and carries the phase's argument;
// later messages may leave fun and arg_json empty, and when they set them they must
// repeat the first message's values (codes.InvalidArgument otherwise). A function's
// own error for one input goes in that input's ValuesResponse.error and the stream
// goes on; a panic ends the stream with codes.Internal.
//
// Receiving and decoding run in a goroutine of their own, ahead of the function by up
// to mapQueueLen inputs, so that they overlap with the function and with sending. The
// argument given to every call is the same slice (the first message's): functions must
// not modify it.
func (s *server) Map(stream hookspb.Hooks_MapServer) error {
	if s.mapper == nil {
		return unimplemented(PointMap)
	}
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	fun := first.GetFun()
	if err := s.check(PointMap, fun); err != nil {
		return err
	}
	r := &mapReceiver{
		stream: stream,
		fun:    fun,
		arg:    rawOrNil(first.GetArgJson()),
		inputs: make(chan MapInput, mapQueueLen),
		done:   make(chan struct{}),
	}
	// The receiver is stopped by closing done (it may be sending to inputs) and by the
	// end of the stream, which the return of this handler causes (it may be in Recv).
	defer close(r.done)
	go r.run(first)
	return s.mapInputs(stream, r, fun)
}

// mapInputs calls the function for each input the receiver decodes and sends the
// answers, until the receiver stops.
func (s *server) mapInputs(stream hookspb.Hooks_MapServer, r *mapReceiver, fun string) error {
	ctx := stream.Context()
	for {
		var in MapInput
		var ok bool
		select {
		case in, ok = <-r.inputs:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
		if !ok {
			// r.err was written before inputs was closed.
			return r.err
		}
		resp, err := s.mapOne(ctx, fun, in)
		if err != nil {
			return err
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// mapOne calls the function for one input. Its error goes in the response; a panic or
// the end of the stream's context is returned.
func (s *server) mapOne(ctx context.Context, fun string, in MapInput) (_ *hookspb.ValuesResponse, err error) {
	defer recoverCall(PointMap, fun, &err)
	out, err := s.mapper.Map(ctx, fun, in)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, status.FromContextError(ctxErr).Err()
		}
		return &hookspb.ValuesResponse{Error: funcErrorText(PointMap, fun, err)}, nil
	}
	return &hookspb.ValuesResponse{ValuesJson: byteValues(out)}, nil
}

// mapReceiver receives and decodes the inputs of a Map stream, owned by the stream's
// handler.
type mapReceiver struct {
	stream hookspb.Hooks_MapServer
	fun    string
	arg    json.RawMessage
	// inputs carries the decoded inputs to the handler; closed when the receiver ends.
	inputs chan MapInput
	// done is closed by the handler when it returns.
	done chan struct{}
	// err is why the receiver ended, nil at the end of the inputs. Written before
	// inputs is closed, read after.
	err error
}

// run decodes first and then every message received, until the end of the inputs, an
// error, or the handler's return.
func (r *mapReceiver) run(first *hookspb.MapRequest) {
	defer close(r.inputs)
	req := first
	for {
		if req.GetObject() == nil {
			r.err = errNoObject
			return
		}
		if fun := req.GetFun(); fun != "" && fun != r.fun {
			r.err = status.Errorf(codes.InvalidArgument, "map stream input names function %q, the stream's first names %q", fun, r.fun)
			return
		}
		if arg := req.GetArgJson(); len(arg) > 0 && !bytes.Equal(arg, r.arg) {
			r.err = status.Error(codes.InvalidArgument, "map stream input has an argument other than the stream's first")
			return
		}
		select {
		case r.inputs <- mapInputFromPB(req, r.arg):
		case <-r.done:
			return
		}
		select {
		case <-r.done: // the handler is gone: no more receiving
			return
		default:
		}
		var err error
		req, err = r.stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			return
		}
	}
}
