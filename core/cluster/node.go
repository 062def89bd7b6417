package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/cairnkv/cairn/core/storage"
)

// Node is one running cluster member: its embedded NATS server (unless it uses an
// existing NATS), its connection, the streams' appliers into the local DB and the
// replicated Store.
type Node struct {
	cfg     Config
	log     *slog.Logger
	local   *storage.DB
	srv     *server.Server // nil with NATSURLs
	nc      *nats.Conn
	js      jetstream.JetStream
	servers int // JetStream servers replicas are clamped to
	// members is the size of JetStream's meta group as watchStreams last counted it
	// (0 until then): servers added or forgotten since the start change it.
	members  atomic.Int32
	store    *Store
	ctx      context.Context // ends at Close: the appliers' and the watcher's
	stop     context.CancelFunc
	wg       sync.WaitGroup // the appliers and the watcher
	mu       sync.Mutex     // guards appliers and closed
	appliers map[string]*applier
	closed   bool
	token    string // the embedded server's client token
	// ensured records the streams known to exist (by name), so that a write creates a
	// stream at most once per process.
	ensured sync.Map
	// handles caches the jetstream.Stream of each stream name (for Sync's gets).
	handles sync.Map
	// readIndexes holds the *readIndex of each stream and leader (Sync's shared
	// rounds, see readindex.go); leaders the last known leader (server name) of each
	// stream name.
	readIndexes, leaders sync.Map
	// readIndexReads counts the reads that waited for a read-index round,
	// readIndexRounds the rounds (their requests to a leader or a stream): their ratio
	// is how many reads a round serves.
	readIndexReads, readIndexRounds atomic.Uint64
}

// streamHandle returns the handle of stream name (cached).
func (n *Node) streamHandle(ctx context.Context, name string) (jetstream.Stream, error) {
	if h, ok := n.handles.Load(name); ok {
		return h.(jetstream.Stream), nil
	}
	h, err := n.js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	n.handles.Store(name, h)
	return h, nil
}

// Open starts the cluster node of cfg over the local DB local: the embedded NATS
// server (or a connection to cfg.NATSURLs), a bounded wait for JetStream's meta
// leader, the streams, and one applier per stream. The node owns local from now on:
// Close (or its Store's Close) closes it.
func Open(ctx context.Context, cfg Config, local *storage.DB, log *slog.Logger) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	n := &Node{cfg: cfg, log: log.With("cluster", cfg.Name, "node", cfg.NodeName), local: local,
		appliers: map[string]*applier{}}
	n.ctx, n.stop = context.WithCancel(context.Background())
	n.store = &Store{node: n, local: local}
	if err := n.start(ctx); err != nil {
		n.shutdown()
		return nil, err
	}
	return n, nil
}

// start connects, waits for JetStream and sets the streams and appliers up.
func (n *Node) start(ctx context.Context) error {
	if err := n.connect(); err != nil {
		return err
	}
	js, err := jetstream.New(n.nc)
	if err != nil {
		return fmt.Errorf("cluster: jetstream: %w", err)
	}
	n.js = js
	if err := n.waitJetStream(ctx); err != nil {
		return err
	}
	if err := n.setupStreams(ctx); err != nil {
		return err
	}
	if n.srv != nil {
		if err := n.serveReadIndex(); err != nil {
			return err
		}
	}
	n.wg.Add(1)
	go n.watchStreams()
	return nil
}

// connect starts the embedded server and connects in-process, or connects to
// cfg.NATSURLs.
func (n *Node) connect() error {
	name := nats.Name("cairn " + n.cfg.NodeName)
	if len(n.cfg.NATSURLs) > 0 {
		nc, err := nats.Connect(strings.Join(n.cfg.NATSURLs, ","), name, nats.MaxReconnects(-1))
		if err != nil {
			return fmt.Errorf("cluster: connect to %s: %w", strings.Join(n.cfg.NATSURLs, ","), err)
		}
		n.nc, n.servers = nc, 0 // learnt when the META stream is created
		return nil
	}
	n.token = nuid.Next() + nuid.Next()
	srv, err := n.startServer()
	if err != nil {
		return err
	}
	n.srv, n.servers = srv, n.cfg.servers()
	nc, err := nats.Connect("", nats.InProcessServer(srv), name, nats.UserInfo(appUser, n.token), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("cluster: connect in-process: %w", err)
	}
	n.nc = nc
	return nil
}

// appUser is the embedded server's user of Cairn's own connection (password: the
// node's token).
const appUser = "cairn"

// Route liveness: see startServer.
const (
	routePingInterval = time.Second
	routeMaxPingsOut  = 3
)

// startServer starts the embedded NATS server: JetStream on, its store under the data
// directory, routes on cfg.Listen to cfg.Peers, a client listener on loopback behind a
// token (Cairn connects in-process).
func (n *Node) startServer() (*server.Server, error) {
	host, port, _ := splitHostPort(n.cfg.Listen)
	var routes []string
	for _, p := range n.cfg.Peers {
		routes = append(routes, "nats-route://"+p)
	}
	// The server's routing starts only after its client listener, so it has one: on a
	// random loopback port, behind a password drawn at random at each start that only
	// this process knows (Cairn itself connects in-process). Two users: Cairn's own, in
	// the global account (which alone has JetStream, as before there were users), and
	// a system-account one for the membership requests (membership.go).
	sys := server.NewAccount(server.DEFAULT_SYSTEM_ACCOUNT)
	opts := &server.Options{
		ServerName:    n.cfg.NodeName,
		Host:          "127.0.0.1",
		Port:          server.RANDOM_PORT,
		Accounts:      []*server.Account{sys},
		SystemAccount: server.DEFAULT_SYSTEM_ACCOUNT,
		Users: []*server.User{
			{Username: appUser, Password: n.token},
			{Username: sysUser, Password: n.token, Account: sys},
		},
		JetStream:  true,
		StoreDir:   filepath.Join(n.cfg.DataDir, NATSDir),
		MaxPayload: maxPayload,
		NoSigs:     true,
		Cluster: server.ClusterOpts{
			Name: n.cfg.Name,
			Host: host,
			Port: port,
			// A route to a peer that stopped answering (stopped, cut off) is closed
			// after about routePingInterval*routeMaxPingsOut instead of NATS's minutes:
			// requests stop going into it, and after the fault a fresh connection
			// replaces it at once instead of TCP's retransmissions backed off to tens of
			// seconds (docs/rationale.md).
			PingInterval: routePingInterval,
			MaxPingsOut:  routeMaxPingsOut,
		},
		Routes: server.RoutesFromStr(strings.Join(routes, ",")),
	}
	if n.cfg.servers() == 1 {
		// A node alone: a JetStream cluster's Raft groups wait for a route, which a
		// single node never gets, so it runs JetStream as a single server (every stream
		// one replica, no route listener). See docs/cluster.md.
		opts.Cluster, opts.Routes = server.ClusterOpts{}, nil
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: embedded NATS server: %w", err)
	}
	srv.SetLoggerV2(natsLogger{n.log}, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("cluster: embedded NATS server %s did not start", n.cfg.NodeName)
	}
	n.log.Info("cluster: embedded NATS server started", "routes", n.cfg.Listen, "peers", n.cfg.Peers,
		"store", opts.StoreDir)
	return srv, nil
}

// waitJetStream waits until JetStream answers (in a cluster: its meta group has a
// leader), bounded by cfg.StartTimeout and ctx, logging while it waits.
func (n *Node) waitJetStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	start, logged := time.Now(), time.Now()
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := n.js.AccountInfo(actx)
		acancel()
		if err == nil {
			n.log.Info("cluster: JetStream ready", "after", time.Since(start).Round(time.Millisecond))
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("cluster: JetStream not ready after %v (is a majority of the peers up?): %w",
				time.Since(start).Round(time.Second), err)
		}
		if time.Since(logged) > 5*time.Second {
			n.log.Info("cluster: waiting for JetStream's meta leader", "waited", time.Since(start).Round(time.Second), "err", err)
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// clusterSettings are the settings every node must share, kept in the META stream.
type clusterSettings struct {
	Partitions int `json:"partitions"`
}

// setupStreams creates the META stream and the partition streams of the default
// replica count (idempotently), checks the cluster's fixed settings and starts the
// appliers of every Cairn stream that exists.
func (n *Node) setupStreams(ctx context.Context) error {
	meta := streamRef{token: metaToken, replicas: n.clamp(3)}
	r, err := n.ensureStream(ctx, meta)
	if err != nil {
		return err
	}
	if n.servers == 0 {
		n.servers = r // with an existing NATS: what the META stream could get
	}
	if err := n.checkSettings(ctx, meta); err != nil {
		return err
	}
	for p := range n.cfg.Partitions {
		if _, err := n.ensureStream(ctx, partitionStream(p, n.clamp(DefaultNVal))); err != nil {
			return err
		}
	}
	// Consumers created before their stream has a leader stall until their pull
	// expires: wait for the leaders first.
	if err := n.waitLeaders(ctx); err != nil {
		return err
	}
	return n.attachAll(ctx)
}

// waitLeaders waits (bounded by cfg.StartTimeout) until every stream this node
// created or found has a leader, so that the node serves once writes can be
// acknowledged rather than letting its first writes wait for elections.
func (n *Node) waitLeaders(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	var names []string
	n.ensured.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	start := time.Now()
	for _, name := range names {
		for {
			info, err := n.streamInfo(ctx, name)
			if err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("cluster: stream %s has no leader after %v: %w", name,
					time.Since(start).Round(time.Second), ctx.Err())
			}
			sleepCtx(ctx, 50*time.Millisecond)
		}
	}
	n.log.Info("cluster: every stream has a leader", "streams", len(names), "after", time.Since(start).Round(time.Millisecond))
	return nil
}

// streamInfo returns a stream's current info.
func (n *Node) streamInfo(ctx context.Context, name string) (*jetstream.StreamInfo, error) {
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := n.streamHandle(ictx, name)
	if err != nil {
		return nil, err
	}
	return s.Info(ictx)
}

// DefaultNVal is the replica count of keys whose n_val is not known (kv's default).
const DefaultNVal = 3

// clamp returns the replicas of a stream for n_val r: r within [1, min(5, servers)].
func (n *Node) clamp(r int) int {
	limit := min(5, n.servers)
	if limit < 1 {
		limit = 5 // not known yet: JetStream refuses what it cannot place
	}
	return max(1, min(r, limit))
}

// ensureStream creates the stream s unless it exists; with an existing NATS whose
// size is unknown, a placement failure retries with one replica less. It returns the
// stream's replicas.
func (n *Node) ensureStream(ctx context.Context, s streamRef) (int, error) {
	if r, ok := n.ensured.Load(s.name()); ok {
		return r.(int), nil
	}
	for r := s.replicas; ; r-- {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := n.js.CreateStream(cctx, streamConfig(s, r))
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			n.ensured.Store(s.name(), r)
			return r, nil
		}
		if n.srv == nil && r > 1 && isPlacementError(err) {
			continue
		}
		return 0, fmt.Errorf("cluster: create stream %s (replicas %d): %w", s.name(), r, err)
	}
}

// isPlacementError reports whether err says JetStream has too few servers for the
// replicas asked.
func isPlacementError(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == 10005 /* no suitable peers */ || apiErr.ErrorCode == 10023 /* insufficient resources */
	}
	return false
}

// streamConfig is the JetStream configuration of s with r replicas: one message per
// subject (each key's latest record), atomic batches.
func streamConfig(s streamRef, r int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              s.name(),
		Subjects:          []string{s.subjects()},
		Retention:         jetstream.LimitsPolicy,
		MaxMsgsPerSubject: 1,
		Discard:           jetstream.DiscardOld,
		Storage:           jetstream.FileStorage,
		Replicas:          r,
		// No direct gets: followers answer those and may lag; Sync asks the leader.
		AllowDirect:        false,
		AllowAtomicPublish: true,
		MaxMsgSize:         maxPayload,
		// Message ids only need to outlive a commit's attempts (publishTimeout).
		Duplicates: publishTimeout + 10*time.Second,
	}
}

// checkSettings records the cluster's fixed settings in the META stream, or checks
// this node's against the ones recorded: a node with another partition count would
// put keys in other streams.
func (n *Node) checkSettings(ctx context.Context, meta streamRef) error {
	mine, _ := json.Marshal(clusterSettings{Partitions: n.cfg.Partitions})
	subj := meta.subject(configSuffix)
	msg := nats.NewMsg(subj)
	msg.Data = append([]byte{kindConfig}, mine...)
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
	pctx, cancel := context.WithTimeout(ctx, n.cfg.StartTimeout)
	defer cancel()
	_, err := retryUnanswered(pctx, msgAttempt, func(ctx context.Context) (*jetstream.PubAck, error) { return n.js.PublishMsg(ctx, msg) })
	if err == nil || !isWrongSequence(err) {
		if err != nil {
			return fmt.Errorf("cluster: record settings: %w", err)
		}
		return nil
	}
	s, err := n.js.Stream(pctx, meta.name())
	if err != nil {
		return fmt.Errorf("cluster: read settings: %w", err)
	}
	// A stream leader elected a moment ago may not have applied the record that
	// refused ours yet: a missing record is asked for again while the start may wait.
	raw, err := s.GetLastMsgForSubject(pctx, subj)
	for errors.Is(err, jetstream.ErrMsgNotFound) {
		select {
		case <-pctx.Done():
			return fmt.Errorf("cluster: read settings: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
		raw, err = s.GetLastMsgForSubject(pctx, subj)
	}
	if err != nil {
		return fmt.Errorf("cluster: read settings: %w", err)
	}
	var theirs clusterSettings
	if len(raw.Data) < 1 || json.Unmarshal(raw.Data[1:], &theirs) != nil {
		return fmt.Errorf("cluster: the cluster's recorded settings are unreadable: %q", raw.Data)
	}
	if theirs.Partitions != n.cfg.Partitions {
		return fmt.Errorf("cluster: this node has --cluster-partitions %d, the cluster %d: use the cluster's",
			n.cfg.Partitions, theirs.Partitions)
	}
	return nil
}

// isWrongSequence reports whether err is JetStream refusing a publish on an expected
// last sequence.
func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// attachAll starts an applier for every Cairn stream not yet applied.
func (n *Node) attachAll(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	names := n.js.StreamNames(lctx)
	for name := range names.Name() {
		s, ok := parseStreamName(name)
		if !ok {
			continue
		}
		if err := n.attach(s); err != nil {
			return err
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("cluster: list streams: %w", err)
	}
	return nil
}

// watchInterval is how often a node looks for streams created elsewhere (partition
// streams of another replica count are created by the first write that needs them).
const watchInterval = 2 * time.Second

// watchStreams attaches appliers to streams other nodes create, until Close.
func (n *Node) watchStreams() {
	defer n.wg.Done()
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		if err := n.attachAll(n.ctx); err != nil && n.ctx.Err() == nil {
			n.log.Warn("cluster: look for new streams", "err", err)
		}
		if n.srv != nil && n.servers > 1 {
			if ms, err := n.Members(); err == nil {
				n.members.Store(int32(len(ms)))
			}
		}
	}
}

// clusterSize is the number of servers of the cluster: the meta group's, once
// counted, else the configured peers'.
func (n *Node) clusterSize() int {
	if m := int(n.members.Load()); m > 0 {
		return m
	}
	return n.servers
}

// attach starts the applier of s unless it runs.
func (n *Node) attach(s streamRef) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errClosed
	}
	if _, ok := n.appliers[s.name()]; ok {
		return nil
	}
	a, err := newApplier(n, s)
	if err != nil {
		return err
	}
	n.appliers[s.name()] = a
	n.wg.Add(1)
	go a.run()
	return nil
}

var errClosed = errors.New("cluster: node closed")

// applierOf returns the applier of the stream named name, starting it if needed.
func (n *Node) applierOf(s streamRef) (*applier, error) {
	n.mu.Lock()
	a := n.appliers[s.name()]
	n.mu.Unlock()
	if a != nil {
		return a, nil
	}
	if err := n.attach(s); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.appliers[s.name()], nil
}

// Store returns the node's replicated store.
func (n *Node) Store() storage.Store { return n.store }

// Local returns the node's local replica.
func (n *Node) Local() *storage.DB { return n.local }

// JetStream returns the node's JetStream context, for other replicated stores on the
// same connection (S3 blobs).
func (n *Node) JetStream() jetstream.JetStream { return n.js }

// Conn returns the node's NATS connection.
func (n *Node) Conn() *nats.Conn { return n.nc }

// Replicas returns the replicas a cluster-wide store should use: 3, or fewer when the
// cluster has fewer JetStream servers.
func (n *Node) Replicas() int { return n.clamp(3) }

// Name returns the node's name.
func (n *Node) Name() string { return n.cfg.NodeName }

// Embedded reports whether the node runs its own NATS server (not --nats-url).
func (n *Node) Embedded() bool { return n.srv != nil }

// Close stops the appliers, drains the connection, shuts the embedded server down and
// closes the local DB. It is idempotent.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.shutdown()
	return n.local.Close()
}

// shutdown stops everything but the local DB.
func (n *Node) shutdown() {
	n.stop()
	n.mu.Lock()
	for _, a := range n.appliers {
		a.stopConsuming()
	}
	n.mu.Unlock()
	n.wg.Wait()
	if n.nc != nil {
		n.nc.Close()
	}
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
	}
}

// natsLogger sends the embedded server's log to slog: notices at debug level (it is
// chatty), warnings and errors as such.
type natsLogger struct{ log *slog.Logger }

func (l natsLogger) Noticef(format string, v ...any) {
	l.log.Debug("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Warnf(format string, v ...any) { l.log.Warn("nats: " + fmt.Sprintf(format, v...)) }
func (l natsLogger) Fatalf(format string, v ...any) {
	l.log.Error("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Errorf(format string, v ...any) {
	l.log.Error("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Debugf(format string, v ...any) {
	l.log.Debug("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Tracef(format string, v ...any) {
	l.log.Debug("nats: " + fmt.Sprintf(format, v...))
}

var _ = strconv.Itoa
