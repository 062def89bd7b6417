// Package jsblob is a storage.BlobStore on NATS JetStream: the bytes of large S3
// objects replicated on the cluster's nodes, so that an object written through one
// node is readable on every node and survives the loss of one.
//
// One stream (Config.Stream) holds three kinds of subjects under Config.Subject
// (P), the blob id written in lowercase hex (H):
//
//   - P.h.H, the blob's head: "writing" (Create claims the id), "committed" (size and
//     chunk size, published last by Commit) or "removed" (a tombstone). Each is
//     published on the condition that the subject's last sequence is the one read
//     (JetStream's compare-and-set), so two writers, or a writer and Remove, never
//     both win. The claim's stream sequence is the blob's generation G.
//   - P.c.H.G.N, chunk N of generation G: Config.ChunkSize bytes (the last shorter),
//     read back with a direct get by subject (any replica answers), so any range is
//     one request per chunk away.
//   - P.t.H.G, a removal waiting for Config.ReaderGrace to pass before the chunks of
//     generation G are purged: readers opened before Remove keep reading meanwhile.
//
// The stream keeps one message per subject, so a head is always its latest state.
package jsblob

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairnkv/cairn/core/storage"
)

// Defaults of Config.
const (
	// DefaultStream is the stream's name.
	DefaultStream = "CAIRN_BLOBS"
	// DefaultSubject is the prefix of the stream's subjects.
	DefaultSubject = "cairn.blob"
	// DefaultChunkSize is the size of a chunk message: 256 KiB fits NATS's default
	// max_payload of 1 MiB with room for headers (docs/rationale.md).
	DefaultChunkSize = 256 << 10
	// DefaultWindow is how many chunks a writer has in flight unacknowledged.
	DefaultWindow = 4
	// DefaultReadAhead is how many chunks a reader's CopyRange fetches ahead.
	DefaultReadAhead = 2
	// DefaultReaderGrace is how long the chunks of a removed blob stay readable to the
	// readers opened before the removal.
	DefaultReaderGrace = time.Hour
	// DefaultTimeout bounds one request to JetStream when the caller's context has no
	// earlier deadline.
	DefaultTimeout = 10 * time.Second
)

// Limits on what a caller can ask for.
const (
	// MaxIDLen is the longest blob id, in bytes (its subjects carry it in hex).
	MaxIDLen = 128
	// MaxChunkSize is the largest chunk size Config accepts; the servers' max_payload
	// must exceed it by headerRoom.
	MaxChunkSize = 8 << 20
	// headerRoom is what a chunk message needs beyond its data (subject and headers).
	headerRoom = 1 << 10
)

// Config configures a Store. The zero value of a field takes its default.
type Config struct {
	// Replicas is the stream's replica count (1 if 0): min(3, servers) typically.
	Replicas int
	// Stream is the stream's name (DefaultStream).
	Stream string
	// Subject is the prefix of the stream's subjects (DefaultSubject).
	Subject string
	// ChunkSize is the data size of a chunk message (DefaultChunkSize). A blob's
	// chunk size is recorded in its head, so changing it leaves existing blobs
	// readable.
	ChunkSize int
	// Window is how many chunks a writer publishes ahead of their acknowledgements
	// (DefaultWindow): a writer holds at most Window+1 chunks of memory.
	Window int
	// ReadAhead is how many chunks CopyRange fetches ahead of the one it writes
	// (DefaultReadAhead): a reader holds at most ReadAhead+1 chunks of memory.
	ReadAhead int
	// ReaderGrace is how long a removed blob's chunks stay for the readers opened
	// before the removal (DefaultReaderGrace).
	ReaderGrace time.Duration
	// Timeout bounds each request to JetStream (DefaultTimeout).
	Timeout time.Duration
	// MaxBytes limits the stream's size (no limit if 0); a write past it fails with
	// storage.ErrNoSpace.
	MaxBytes int64
}

// withDefaults returns c with its zero fields set, or an error for a field out of
// range.
func (c Config) withDefaults() (Config, error) {
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.Subject == "" {
		c.Subject = DefaultSubject
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.ReadAhead <= 0 {
		c.ReadAhead = DefaultReadAhead
	}
	if c.ReaderGrace <= 0 {
		c.ReaderGrace = DefaultReaderGrace
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.Replicas > 5:
		return c, fmt.Errorf("jsblob: %d replicas: JetStream replicates a stream on at most 5", c.Replicas)
	case c.ChunkSize < 1 || c.ChunkSize > MaxChunkSize:
		return c, fmt.Errorf("jsblob: chunk size %d outside 1..%d", c.ChunkSize, MaxChunkSize)
	case strings.ContainsAny(c.Subject, "*> \t\r\n") || strings.HasPrefix(c.Subject, ".") || strings.HasSuffix(c.Subject, "."):
		return c, fmt.Errorf("jsblob: subject prefix %q is no literal subject", c.Subject)
	}
	return c, nil
}

// Store is the BlobStore on JetStream. Its sweeper goroutine (purging removed blobs
// after ReaderGrace) is owned by the Store: Close stops it.
type Store struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	cfg    Config
	// leaderSubj is the API subject of the stream's leader-answered message get.
	leaderSubj string

	stop   context.CancelFunc
	done   sync.WaitGroup
	closed sync.Once
}

var _ storage.BlobStore = (*Store)(nil)

// New creates (or updates to cfg) the blob stream and returns the store on it. Every
// node calls it at start: creating the stream is idempotent.
func New(ctx context.Context, js jetstream.JetStream, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if mp := js.Conn().MaxPayload(); mp > 0 && int64(cfg.ChunkSize+headerRoom) > mp {
		return nil, fmt.Errorf("jsblob: chunks of %d bytes need a max_payload of %d, the server allows %d", cfg.ChunkSize, cfg.ChunkSize+headerRoom, mp)
	}
	sc := jetstream.StreamConfig{
		Name:              cfg.Stream,
		Description:       "Cairn: the bytes of S3 objects (core/cluster/jsblob)",
		Subjects:          []string{cfg.Subject + ".>"},
		Storage:           jetstream.FileStorage,
		Replicas:          cfg.Replicas,
		MaxMsgsPerSubject: 1,
		MaxMsgSize:        int32(cfg.ChunkSize + headerRoom),
		AllowDirect:       true,
		Discard:           jetstream.DiscardNew,
		MaxBytes:          -1,
		MaxMsgs:           -1,
		MaxAge:            0,
	}
	if cfg.MaxBytes > 0 {
		sc.MaxBytes = cfg.MaxBytes
	}
	stream, err := createStream(ctx, js, sc)
	if err != nil {
		return nil, fmt.Errorf("jsblob: create stream %s: %w", cfg.Stream, err)
	}
	prefix := js.Options().APIPrefix
	if prefix == "" {
		prefix = jetstream.DefaultAPIPrefix
	}
	if !strings.HasSuffix(prefix, ".") {
		prefix += "."
	}
	s := &Store{js: js, stream: stream, cfg: cfg, leaderSubj: prefix + "STREAM.MSG.GET." + cfg.Stream}
	sctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.done.Add(1)
	go s.sweepLoop(sctx)
	return s, nil
}

// streamAttempt bounds one attempt to create or update the stream: JetStream drops
// API requests while its meta group has no leader (nodes starting together).
const streamAttempt = 5 * time.Second

// createStream creates the stream, or updates it to sc, retrying until ctx ends: nodes
// starting together race to create it (the loser's create finds the name taken and its
// next update succeeds), and the meta group may still be electing its leader.
func createStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.Stream, error) {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, streamAttempt)
		stream, err := js.CreateOrUpdateStream(actx, sc)
		cancel()
		if err == nil {
			return stream, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (after %d attempts; the last: %w)", ctx.Err(), attempt, err)
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, time.Second)):
		}
	}
}

// Close stops the sweeper. It does not close the NATS connection, which the caller
// owns.
func (s *Store) Close() error {
	s.closed.Do(func() {
		s.stop()
		s.done.Wait()
	})
	return nil
}

// Config returns the store's configuration with its defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// Errors of the store.
var (
	// ErrExists is returned by Create for an id that is committed or being written.
	ErrExists = fmt.Errorf("jsblob: blob exists: %w", fs.ErrExist)
	// errDone is returned by a writer used after Commit, Abort or a failure.
	errDone = errors.New("jsblob: the blob is already committed or removed")
	// errRange is returned by CopyRange for a range outside the blob.
	errRange = errors.New("jsblob: range outside the blob")
	// errClosed is returned by a reader used after Close.
	errClosed = errors.New("jsblob: reader closed")
)

// checkID refuses an id that is empty or longer than MaxIDLen.
func checkID(id []byte) error {
	switch {
	case len(id) == 0:
		return errors.New("jsblob: empty id")
	case len(id) > MaxIDLen:
		return fmt.Errorf("jsblob: id of %d bytes, longer than %d", len(id), MaxIDLen)
	}
	return nil
}

// Head states.
const (
	stateWriting   = "writing"
	stateCommitted = "committed"
	stateRemoved   = "removed"
)

// headRec is a head message's data (JSON).
type headRec struct {
	State string `json:"state"`
	// Gen is the generation: the stream sequence of the claim (0 in the claim itself).
	Gen uint64 `json:"gen,omitempty"`
	// Size and Chunk are the committed blob's length and chunk size.
	Size  int64 `json:"size,omitempty"`
	Chunk int64 `json:"chunk,omitempty"`
}

// head is a blob's head as read: its record and its stream sequence (0: no head).
type head struct {
	headRec
	seq uint64
}

// gen returns the generation the head speaks for: a claim's is its own sequence.
func (h head) gen() uint64 {
	if h.State == stateWriting {
		return h.seq
	}
	return h.Gen
}

// decodeHead parses and checks a head message.
func decodeHead(seq uint64, data []byte) (head, error) {
	var h head
	if err := json.Unmarshal(data, &h.headRec); err != nil {
		return h, fmt.Errorf("jsblob: head at sequence %d: %w", seq, err)
	}
	h.seq = seq
	switch h.State {
	case stateWriting:
	case stateCommitted:
		if h.Size < 0 || h.Chunk <= 0 || h.Chunk > MaxChunkSize || h.Gen == 0 {
			return h, fmt.Errorf("jsblob: head at sequence %d: bad committed record %+v", seq, h.headRec)
		}
	case stateRemoved:
		if h.Gen == 0 {
			return h, fmt.Errorf("jsblob: head at sequence %d: removal without a generation", seq)
		}
	default:
		return h, fmt.Errorf("jsblob: head at sequence %d: unknown state %q", seq, h.State)
	}
	return h, nil
}

// Subjects.
func (s *Store) headSubj(hid string) string { return s.cfg.Subject + ".h." + hid }
func (s *Store) chunkPrefix(hid string, gen uint64) string {
	return s.cfg.Subject + ".c." + hid + "." + strconv.FormatUint(gen, 10)
}
func (s *Store) chunkSubj(hid string, gen uint64, n int64) string {
	return s.chunkPrefix(hid, gen) + "." + strconv.FormatInt(n, 10)
}
func (s *Store) trashSubj(hid string, gen uint64) string {
	return s.cfg.Subject + ".t." + hid + "." + strconv.FormatUint(gen, 10)
}

// withTimeout bounds ctx by the store's request timeout.
func (s *Store) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

// readHead returns the head of the blob hid (seq 0 if none). With leader false it
// asks any replica first and confirms with the leader only an answer other than
// "committed" (a replica may lag behind a write acknowledged by the quorum).
func (s *Store) readHead(ctx context.Context, hid string, leader bool) (head, error) {
	subj := s.headSubj(hid)
	if !leader {
		m, err := s.getDirect(ctx, subj)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return head{}, err
		}
		if m != nil {
			if h, err := decodeHead(m.Sequence, m.Data); err == nil && h.State == stateCommitted {
				return h, nil
			}
		}
	}
	m, err := s.getLeader(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return head{}, nil
	}
	if err != nil {
		return head{}, err
	}
	return decodeHead(m.Sequence, m.Data)
}

// getDirect reads the last message of subj from any replica, or from the leader if no
// replica answers within leaderAttempt (none serves direct gets yet on a new stream,
// and a replica may not answer while the stream elects a leader).
func (s *Store) getDirect(ctx context.Context, subj string) (*jetstream.RawStreamMsg, error) {
	actx, cancel := context.WithTimeout(ctx, leaderAttempt)
	defer cancel()
	m, err := s.stream.GetLastMsgForSubject(actx, subj)
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return s.getLeader(ctx, subj)
	}
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("jsblob: get %s: %w", subj, err)
	}
	return m, err
}

// retryWait is the pause between the attempts of a request no server answered (the
// stream's leader being elected after the loss of a node; a leader's request that
// timed out counts as one).
const retryWait = 100 * time.Millisecond

// leaderAttempt bounds one attempt of a request to the stream's leader.
const leaderAttempt = time.Second

// retry calls fn until it returns other than nats.ErrNoResponders, or ctx is done.
func retry[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if !errors.Is(err, nats.ErrNoResponders) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(retryWait):
		}
	}
}

// pubRetry makes a publish retry while no server answers, for the store's timeout
// (or until its context ends).
func (s *Store) pubRetry() []jetstream.PublishOpt {
	return []jetstream.PublishOpt{jetstream.WithRetryAttempts(int(s.cfg.Timeout / retryWait)), jetstream.WithRetryWait(retryWait)}
}

// leaderGetRequest and leaderGetResponse are JetStream's STREAM.MSG.GET API, which the
// stream's leader answers (the client's stream handle uses the direct get for a
// stream that allows it).
type leaderGetRequest struct {
	LastFor string `json:"last_by_subj"`
}

type leaderGetResponse struct {
	Message *struct {
		Subject  string    `json:"subject"`
		Sequence uint64    `json:"seq"`
		Data     []byte    `json:"data"`
		Time     time.Time `json:"time"`
	} `json:"message"`
	Error *jetstream.APIError `json:"error"`
}

// getLeader reads the last message of subj from the stream's leader: the latest
// state the quorum acknowledged.
func (s *Store) getLeader(ctx context.Context, subj string) (*jetstream.RawStreamMsg, error) {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	req, err := json.Marshal(leaderGetRequest{LastFor: subj})
	if err != nil {
		return nil, err
	}
	reply, err := retry(ctx, func() (*nats.Msg, error) {
		// A stream without a leader (one being elected) drops the request: each attempt
		// has its own, shorter deadline, and a read is safe to send again.
		actx, cancel := context.WithTimeout(ctx, leaderAttempt)
		defer cancel()
		m, err := s.js.Conn().RequestWithContext(actx, s.leaderSubj, req)
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", nats.ErrNoResponders, err)
		}
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("jsblob: get %s from the leader: %w", subj, err)
	}
	var resp leaderGetResponse
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("jsblob: get %s from the leader: %w", subj, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return nil, fmt.Errorf("jsblob: get %s from the leader: %w", subj, resp.Error)
	case resp.Message == nil:
		return nil, fmt.Errorf("jsblob: get %s from the leader: %w", subj, jetstream.ErrInvalidJetStreamResponse)
	}
	m := resp.Message
	return &jetstream.RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Data: m.Data, Time: m.Time}, nil
}

// publishHead publishes rec on the head hid if the head's last sequence is still
// expect (0: no head), and returns the new sequence. A lost race returns an error
// wrapping errConflict.
func (s *Store) publishHead(ctx context.Context, hid string, rec headRec, expect uint64) (uint64, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	ack, err := s.js.Publish(ctx, s.headSubj(hid), data, append(s.pubRetry(), jetstream.WithExpectLastSequencePerSubject(expect),
		jetstream.WithExpectStream(s.cfg.Stream))...)
	if err != nil {
		return 0, s.pubErr("head "+hid, err)
	}
	return ack.Sequence, nil
}

// errConflict is a compare-and-set a concurrent change won.
var errConflict = errors.New("jsblob: concurrent change")

// pubErr wraps the failure of a publish: a lost compare-and-set wraps errConflict,
// a full stream or server storage.ErrNoSpace.
func (s *Store) pubErr(what string, err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant:
			return fmt.Errorf("jsblob: publish %s: %w: %w", what, errConflict, err)
		case 10023, 10047: // insufficient (storage) resources
			return fmt.Errorf("jsblob: publish %s: %w: %w", what, storage.ErrNoSpace, err)
		}
		if strings.Contains(apiErr.Description, "maximum bytes exceeded") {
			return fmt.Errorf("jsblob: publish %s: %w: %w", what, storage.ErrNoSpace, err)
		}
	}
	return fmt.Errorf("jsblob: publish %s: %w", what, err)
}

// purge removes the messages of subj (a subject or a subject.> prefix); with below
// above 0, only those of sequence below it.
func (s *Store) purge(ctx context.Context, subj string, below uint64) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject(subj)}
	if below > 0 {
		opts = append(opts, jetstream.WithPurgeSequence(below))
	}
	if _, err := retry(ctx, func() (struct{}, error) { return struct{}{}, s.stream.Purge(ctx, opts...) }); err != nil {
		return fmt.Errorf("jsblob: purge %s: %w", subj, err)
	}
	return nil
}

// purgeGen purges the chunks of generation gen of the blob hid, then its head if the
// head is still at sequence headSeq (0: leave the head).
func (s *Store) purgeGen(ctx context.Context, hid string, gen, headSeq uint64) error {
	if err := s.purge(ctx, s.chunkPrefix(hid, gen)+".>", 0); err != nil {
		return err
	}
	if headSeq == 0 {
		return nil
	}
	return s.purge(ctx, s.headSubj(hid), headSeq+1)
}

// Stat returns the size of the committed blob id.
func (s *Store) Stat(ctx context.Context, id []byte) (int64, error) {
	h, err := s.committed(ctx, id)
	if err != nil {
		return 0, err
	}
	return h.Size, nil
}

// committed returns the head of the committed blob id, or an error wrapping
// storage.ErrNotFound.
func (s *Store) committed(ctx context.Context, id []byte) (head, error) {
	if err := checkID(id); err != nil {
		return head{}, err
	}
	h, err := s.readHead(ctx, hex.EncodeToString(id), false)
	if err != nil {
		return head{}, fmt.Errorf("jsblob: blob %x: %w", id, err)
	}
	if h.State != stateCommitted {
		return head{}, fmt.Errorf("jsblob: blob %x: %w", id, storage.ErrNotFound)
	}
	return h, nil
}

// Remove deletes the blob id and reports whether there was one. A blob being written
// (or left by a writer that died) is purged at once; a committed one gets a tombstone
// that hides it, and its chunks are purged ReaderGrace later so that readers opened
// before keep reading.
func (s *Store) Remove(ctx context.Context, id []byte) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	hid := hex.EncodeToString(id)
	for {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("jsblob: remove %x: %w", id, err)
		}
		h, err := s.readHead(ctx, hid, true)
		if err != nil {
			return false, fmt.Errorf("jsblob: remove %x: %w", id, err)
		}
		switch h.State {
		case "", stateRemoved:
			return false, nil
		case stateWriting:
			if err := s.purgeGen(ctx, hid, h.gen(), h.seq); err != nil {
				return false, fmt.Errorf("jsblob: remove %x: %w", id, err)
			}
			return true, nil
		}
		// The trash record first: a crash before the tombstone leaves a record the
		// sweeper drops (the head still names the generation as committed).
		if err := s.publishTrash(ctx, hid, h.Gen); err != nil {
			return false, fmt.Errorf("jsblob: remove %x: %w", id, err)
		}
		_, err = s.publishHead(ctx, hid, headRec{State: stateRemoved, Gen: h.Gen}, h.seq)
		if errors.Is(err, errConflict) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("jsblob: remove %x: %w", id, err)
		}
		return true, nil
	}
}

// publishTrash records that generation gen of hid is to be purged after ReaderGrace.
func (s *Store) publishTrash(ctx context.Context, hid string, gen uint64) error {
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if _, err := s.js.Publish(ctx, s.trashSubj(hid, gen), nil, append(s.pubRetry(), jetstream.WithExpectStream(s.cfg.Stream))...); err != nil {
		return s.pubErr("trash "+hid, err)
	}
	return nil
}
