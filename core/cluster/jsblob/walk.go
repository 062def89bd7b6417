package jsblob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// scanBatch is how many messages a scan fetches per request.
const scanBatch = 256

// scan calls fn with the last message of every subject matching filter (only its
// headers if headersOnly), through an ephemeral consumer it deletes at the end. It
// stops at the first error of fn and when ctx is done.
func (s *Store) scan(ctx context.Context, filter string, headersOnly bool, fn func(jetstream.Msg) error) error {
	// No server answers while the stream elects a leader (just after a start, after
	// the loss of a node): asked again until the store's timeout.
	cctx, cancel := s.withTimeout(ctx)
	cons, err := retry(cctx, func() (jetstream.Consumer, error) {
		return s.stream.CreateConsumer(cctx, jetstream.ConsumerConfig{
			DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
			AckPolicy:         jetstream.AckNonePolicy,
			FilterSubject:     filter,
			HeadersOnly:       headersOnly,
			InactiveThreshold: time.Minute,
			MemoryStorage:     true,
			Replicas:          1,
		})
	})
	cancel()
	if err != nil {
		return fmt.Errorf("jsblob: scan %s: %w", filter, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
		defer cancel()
		_ = s.stream.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	if cons.CachedInfo().NumPending == 0 {
		return ctx.Err()
	}
	progress := time.Now() // the last fetch that was answered
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The messages are all stored: a fetch that does not wait gets a full batch
		// but at the end.
		batch, err := cons.FetchNoWait(scanBatch)
		if err != nil {
			return fmt.Errorf("jsblob: scan %s: %w", filter, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(m); err != nil {
				return err
			}
			if md, err := m.Metadata(); err == nil && md.NumPending == 0 {
				return nil
			}
		}
		err = batch.Error()
		if got == 0 && errors.Is(err, nats.ErrNoResponders) && time.Now().Before(progress.Add(s.cfg.Timeout)) {
			// The consumer is not served yet (or its server was lost): ask again.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(retryWait):
			}
			continue
		}
		if err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("jsblob: scan %s: %w", filter, err)
		}
		progress = time.Now()
		if got == 0 {
			return nil
		}
	}
}

// Walk calls fn for every blob: a committed one with its size, an unfinished one
// (being written, or left by a writer that died) with size 0, and every chunk that
// belongs to no blob (left by a writer that kept writing after its blob was removed)
// with a nil id. Removed blobs whose chunks wait for ReaderGrace are not reported.
// Names are "stream:subject".
func (s *Store) Walk(ctx context.Context, fn func(id []byte, name string, size int64) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.scan(ctx, s.cfg.Subject+".h.*", false, func(m jetstream.Msg) error {
		return s.walkHead(m, fn)
	}); err != nil {
		return err
	}
	owned := map[string]bool{} // "hid.gen" → the chunks belong to a blob
	return s.scan(ctx, s.cfg.Subject+".c.>", true, func(m jetstream.Msg) error {
		hid, gen, ok := s.parseChunkSubj(m.Subject())
		if ok {
			key := hid + "." + strconv.FormatUint(gen, 10)
			mine, seen := owned[key]
			if !seen {
				var err error
				if mine, err = s.genOwned(ctx, hid, gen); err != nil {
					return err
				}
				if len(owned) >= 1024 {
					clear(owned)
				}
				owned[key] = mine
			}
			if mine {
				return nil
			}
		}
		size, _ := strconv.ParseInt(m.Headers().Get(nats.MsgSize), 10, 64)
		return fn(nil, s.cfg.Stream+":"+m.Subject()+" (a chunk of no blob)", size)
	})
}

// walkHead reports the blob whose head is m.
func (s *Store) walkHead(m jetstream.Msg, fn func(id []byte, name string, size int64) error) error {
	name := s.cfg.Stream + ":" + m.Subject()
	id, err := hex.DecodeString(strings.TrimPrefix(m.Subject(), s.cfg.Subject+".h."))
	if err != nil || checkID(id) != nil {
		return fn(nil, name, int64(len(m.Data())))
	}
	md, err := m.Metadata()
	if err != nil {
		return fn(nil, name, int64(len(m.Data())))
	}
	h, err := decodeHead(md.Sequence.Stream, m.Data())
	switch {
	case err != nil:
		return fn(nil, name+" (unreadable head)", int64(len(m.Data())))
	case h.State == stateCommitted:
		return fn(id, name, h.Size)
	case h.State == stateWriting:
		return fn(id, name+" (unfinished)", 0)
	}
	return nil
}

// parseChunkSubj returns the id (hex) and generation of a chunk's subject.
func (s *Store) parseChunkSubj(subj string) (string, uint64, bool) {
	rest, ok := strings.CutPrefix(subj, s.cfg.Subject+".c.")
	if !ok {
		return "", 0, false
	}
	toks := strings.Split(rest, ".")
	if len(toks) != 3 {
		return "", 0, false
	}
	gen, ok := parseGen(toks[1])
	return toks[0], gen, ok
}

// parseGen parses a generation token.
func parseGen(tok string) (uint64, bool) {
	g, err := strconv.ParseUint(tok, 10, 64)
	return g, err == nil && g > 0
}

// genOwned reports whether generation gen of hid belongs to a blob: its head speaks
// for it, or a removal waits to purge it.
func (s *Store) genOwned(ctx context.Context, hid string, gen uint64) (bool, error) {
	h, err := s.readHead(ctx, hid, true)
	if err != nil {
		return false, err
	}
	if h.seq != 0 && h.gen() == gen {
		return true, nil
	}
	_, err = s.getLeader(ctx, s.trashSubj(hid, gen))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	return err == nil, err
}

// sweepLoop purges removed blobs once their grace has passed, until ctx is done.
func (s *Store) sweepLoop(ctx context.Context) {
	defer s.done.Done()
	t := time.NewTicker(min(max(s.cfg.ReaderGrace/4, 100*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A failed pass is retried at the next tick; every node sweeps.
		_, _ = s.Sweep(ctx)
	}
}

// Sweep purges the chunks of the blobs removed more than ReaderGrace ago, and returns
// how many removals it completed. The store runs it periodically.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	n := 0
	err := s.scan(ctx, s.cfg.Subject+".t.>", true, func(m jetstream.Msg) error {
		md, err := m.Metadata()
		if err != nil || time.Since(md.Timestamp) < s.cfg.ReaderGrace {
			return nil
		}
		rest, _ := strings.CutPrefix(m.Subject(), s.cfg.Subject+".t.")
		hid, genTok, ok := strings.Cut(rest, ".")
		gen, gok := parseGen(genTok)
		if !ok || !gok {
			return s.purge(ctx, m.Subject(), 0)
		}
		if err := s.sweepOne(ctx, hid, gen); err != nil {
			return err
		}
		n++
		return s.purge(ctx, m.Subject(), 0)
	})
	return n, err
}

// sweepOne purges generation gen of hid, whose removal's grace has passed, unless the
// removal never happened (its head still names gen as committed).
func (s *Store) sweepOne(ctx context.Context, hid string, gen uint64) error {
	h, err := s.readHead(ctx, hid, true)
	if err != nil {
		return err
	}
	switch {
	case h.State == stateCommitted && h.Gen == gen:
		return nil
	case h.State == stateRemoved && h.Gen == gen:
		return s.purgeGen(ctx, hid, gen, h.seq)
	}
	return s.purgeGen(ctx, hid, gen, 0)
}
