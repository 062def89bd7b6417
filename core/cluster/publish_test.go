package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core"
)

// scriptedPublisher answers publish attempts from a script and records the message
// ids it was given.
type scriptedPublisher struct {
	answers []error  // one per attempt; nil: stored at sequence 7
	stored  bool     // storedAlready's answer
	ids     []string // message id of each attempt
}

func (p *scriptedPublisher) publishOnce(ctx context.Context, msgs []pubMsg, msgID string) (uint64, error) {
	i := len(p.ids)
	p.ids = append(p.ids, msgID)
	if i >= len(p.answers) {
		// Out of script: keep not answering until the caller's deadline.
		<-ctx.Done()
		return 0, ctx.Err()
	}
	if err := p.answers[i]; err != nil {
		return 0, err
	}
	return 7, nil
}

func (p *scriptedPublisher) storedAlready(context.Context, streamRef, string, string) (uint64, bool) {
	if p.stored {
		return 7, true
	}
	return 0, false
}

func apiErr(code uint16) error {
	return &jetstream.APIError{Code: 400, ErrorCode: jetstream.ErrorCode(code), Description: "scripted"}
}

// TestPublishOutcomes: an attempt that may have been stored is never followed by a
// conflict (a 412 for a write that was applied); attempts that reached no leader are
// "not applied"; a repeat of a single message carries the first one's id.
func TestPublishOutcomes(t *testing.T) {
	wrongSeq := apiErr(uint16(jetstream.JSErrCodeStreamWrongLastSequence))
	inProcess := apiErr(errCodeMsgIDInProcess)
	one := []pubMsg{{subject: "a"}}
	two := []pubMsg{{subject: "a"}, {subject: "b"}}
	for _, tc := range []struct {
		name     string
		msgs     []pubMsg
		answers  []error
		stored   bool
		want     error // nil, storage.ErrConflict via isWrongSequence, ErrOutcomeUnknown or ErrNoLeader
		conflict bool  // the result is a plain conflict
	}{
		{name: "first attempt stored", msgs: one, answers: []error{nil}},
		{name: "plain conflict", msgs: one, answers: []error{wrongSeq}, conflict: true},
		{name: "refused at once, own write found (a deposed leader answered first)", msgs: one, answers: []error{wrongSeq}, stored: true},
		{name: "timeout then duplicate ack", msgs: one, answers: []error{context.DeadlineExceeded, nil}},
		{name: "timeout then own write found", msgs: one, answers: []error{nats.ErrTimeout, wrongSeq}, stored: true},
		{name: "timeout then conflict, own write not latest", msgs: one, answers: []error{context.DeadlineExceeded, wrongSeq}, want: ErrOutcomeUnknown},
		{name: "in process then conflict", msgs: one, answers: []error{context.DeadlineExceeded, inProcess, wrongSeq}, want: ErrOutcomeUnknown},
		{name: "no responders then conflict", msgs: one, answers: []error{jetstream.ErrNoStreamResponse, wrongSeq}, conflict: true},
		{name: "never answered", msgs: one, answers: nil, want: ErrOutcomeUnknown},
		{name: "no leader until the deadline", msgs: one, answers: repeat(jetstream.ErrNoStreamResponse, 100), want: ErrNoLeader},
		{name: "batch timeout then conflict", msgs: two, answers: []error{context.DeadlineExceeded, wrongSeq}, want: ErrOutcomeUnknown},
		{name: "batch plain conflict", msgs: two, answers: []error{wrongSeq}, conflict: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			p := &scriptedPublisher{answers: tc.answers, stored: tc.stored}
			seq, err := publishWith(ctx, p, streamRef{token: "p0r3", replicas: 3}, tc.msgs)
			switch {
			case tc.conflict:
				if !isWrongSequence(err) {
					t.Fatalf("got %d, %v; want a conflict", seq, err)
				}
			case tc.want == nil:
				if err != nil || seq != 7 {
					t.Fatalf("got %d, %v; want sequence 7", seq, err)
				}
			default:
				if !errors.Is(err, tc.want) || isWrongSequence(err) || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("got %d, %v; want only %v", seq, err, tc.want)
				}
				if core.ErrorCode(err) != core.EUNAVAILABLE {
					t.Fatalf("%v carries code %q, want %q", err, core.ErrorCode(err), core.EUNAVAILABLE)
				}
			}
			for _, id := range p.ids {
				if (len(tc.msgs) == 1) != (id != "") || id != p.ids[0] {
					t.Fatalf("message ids %q: want one id for every attempt of a single message, none for a batch", p.ids)
				}
			}
		})
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}
