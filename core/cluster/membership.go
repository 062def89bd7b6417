package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Membership: adding a node is starting it with the cluster's name and routes (its
// embedded server joins JetStream's meta group, its appliers apply every stream);
// retiring one is moving every stream replica it holds to the other servers
// (JetStream's server evacuation, which picks the replacements), stopping it, then
// forgetting it (removing it from the meta group, so that the group's quorum counts
// the servers that remain). Both JetStream requests are the system account's: the
// embedded server has a system user that only this process knows, as it has a user
// for Cairn's own connection. See docs/cluster.md, "Adding and retiring nodes".

// Membership errors: the HTTP layer answers ErrMembershipConflict with 409 and
// ErrUnknownServer with 404; each is wrapped with the details.
var (
	// ErrUnknownServer: no server of that name is a member of the cluster.
	ErrUnknownServer = errors.New("cluster: no such server in the cluster")
	// ErrMembershipConflict: the change cannot be made in the cluster's state (too few
	// servers would remain for the streams' replicas, the server is still connected, a
	// node without an embedded server).
	ErrMembershipConflict = errors.New("cluster: the membership change cannot be made now")
)

// sysUser is the embedded server's system-account user (password: the node's token).
const sysUser = "cairn-sys"

// ServerMember is one server of the JetStream meta group.
type ServerMember struct {
	Name    string `json:"name"`
	Leader  bool   `json:"leader,omitempty"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
}

// RetireStatus is the state of a retirement: the streams that still have a replica on
// the server, and the servers that remain.
type RetireStatus struct {
	Server string `json:"server"`
	// Done is set once no stream has a replica on the server and every stream's
	// replicas are current: the server can be stopped, then forgotten.
	Done bool `json:"done"`
	// Pending lists the streams still moving (their replica on the server, or a new
	// replica not yet current).
	Pending []string `json:"pending,omitempty"`
	// Remaining is the servers that stay.
	Remaining []string `json:"remaining"`
}

// Members returns the servers of the JetStream meta group, as this node's server
// sees them (itself included).
func (n *Node) Members() ([]ServerMember, error) {
	if n.srv == nil {
		return nil, fmt.Errorf("cluster: members: the node uses an external NATS (--nats-url): %w", ErrMembershipConflict)
	}
	if n.servers <= 1 {
		return []ServerMember{{Name: n.cfg.NodeName, Leader: true, Current: true}}, nil
	}
	info, err := n.srv.Jsz(&server.JSzOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster: members: %w", err)
	}
	if info.Meta == nil {
		return nil, errors.New("cluster: members: JetStream reports no meta group")
	}
	out := []ServerMember{}
	if info.Meta.Leader != "" {
		out = append(out, ServerMember{Name: info.Meta.Leader, Leader: true, Current: true})
	}
	for _, p := range info.Meta.Replicas {
		if p.Name != info.Meta.Leader {
			out = append(out, ServerMember{Name: p.Name, Current: p.Current, Offline: p.Offline})
		}
	}
	// A follower's view lists the other servers: this one is a member too.
	if _, ok := member(out, n.cfg.NodeName); !ok {
		out = append(out, ServerMember{Name: n.cfg.NodeName, Current: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// member returns the member named name.
func member(ms []ServerMember, name string) (ServerMember, bool) {
	i := slices.IndexFunc(ms, func(m ServerMember) bool { return m.Name == name })
	if i < 0 {
		return ServerMember{}, false
	}
	return ms[i], true
}

// Retire starts moving every stream replica held by the server named name to the
// other servers (or checks how far the move went, when called again), and waits, up to
// ctx, until it is done. It refuses (ErrMembershipConflict) when fewer servers would
// remain than a stream's replicas: add a node first.
func (n *Node) Retire(ctx context.Context, name string) (RetireStatus, error) {
	ms, err := n.Members()
	if err != nil {
		return RetireStatus{}, err
	}
	if _, ok := member(ms, name); !ok {
		return RetireStatus{}, fmt.Errorf("cluster: retire %q: %w", name, ErrUnknownServer)
	}
	st := RetireStatus{Server: name}
	for _, m := range ms {
		if m.Name != name && !m.Offline {
			st.Remaining = append(st.Remaining, m.Name)
		}
	}
	streams, err := n.streamInfos(ctx)
	if err != nil {
		return st, err
	}
	need := 1
	for _, si := range streams {
		need = max(need, si.Config.Replicas)
	}
	if len(st.Remaining) < need {
		return st, fmt.Errorf("cluster: retire %q: %d servers would remain for streams of %d replicas; add a node first: %w",
			name, len(st.Remaining), need, ErrMembershipConflict)
	}
	if m, _ := member(ms, name); m.Leader {
		// The meta group's leader first hands over, so that its stop does not leave
		// the cluster's stream management waiting for an election.
		var resp apiResult
		if err := n.sysRequest(ctx, "$JS.API.META.LEADER.STEPDOWN", map[string]string{}, &resp); err != nil {
			return st, fmt.Errorf("cluster: retire %q: meta leader stepdown: %w", name, err)
		}
		if err := resp.err(); err != nil {
			return st, fmt.Errorf("cluster: retire %q: meta leader stepdown: %w", name, err)
		}
	}
	if pending := retirePending(streams, name); len(pending) > 0 {
		var resp apiResult
		if err := n.sysRequest(ctx, "$JS.API.SERVER.EVACUATE", map[string]string{"peer": name}, &resp); err != nil {
			return st, fmt.Errorf("cluster: retire %q: %w", name, err)
		}
		if err := resp.err(); err != nil {
			return st, fmt.Errorf("cluster: retire %q: %w", name, err)
		}
		n.log.Info("cluster: retiring a server: its stream replicas move to the others", "server", name, "streams", len(pending))
	}
	for {
		streams, err := n.streamInfos(ctx)
		if err == nil {
			st.Pending = retirePending(streams, name)
			if st.Done = len(st.Pending) == 0; st.Done {
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			return st, nil // not done yet: the move goes on; asking again reports it
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// retirePending returns the streams that still hold a replica on server, or whose
// replicas are not all current.
func retirePending(streams []*jetstream.StreamInfo, server string) []string {
	var out []string
	for _, si := range streams {
		c := si.Cluster
		if c == nil {
			continue
		}
		done := c.Leader != "" && c.Leader != server && len(c.Replicas)+1 >= si.Config.Replicas
		for _, p := range c.Replicas {
			if p.Name == server || !p.Current || p.Offline {
				done = false
			}
		}
		if !done {
			out = append(out, si.Config.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Forget removes the server named name from the cluster's JetStream meta group. The
// server must be stopped (no route to it): a running one would join again.
func (n *Node) Forget(ctx context.Context, name string) error {
	ms, err := n.Members()
	if err != nil {
		return err
	}
	if _, ok := member(ms, name); !ok {
		return fmt.Errorf("cluster: forget %q: %w", name, ErrUnknownServer)
	}
	if name == n.cfg.NodeName {
		return fmt.Errorf("cluster: forget %q: a node cannot forget itself; ask another node once it is stopped: %w", name, ErrMembershipConflict)
	}
	routes, err := n.srv.Routez(&server.RoutezOptions{})
	if err != nil {
		return fmt.Errorf("cluster: forget %q: %w", name, err)
	}
	for _, r := range routes.Routes {
		if r.RemoteName == name {
			return fmt.Errorf("cluster: forget %q: the server is still running (this node has a route to it); retire it, stop it, then forget it: %w", name, ErrMembershipConflict)
		}
	}
	streams, err := n.streamInfos(ctx)
	if err != nil {
		return err
	}
	for _, si := range streams {
		if c := si.Cluster; c != nil && (c.Leader == name || slices.ContainsFunc(c.Replicas, func(p *jetstream.PeerInfo) bool { return p.Name == name })) {
			return fmt.Errorf("cluster: forget %q: stream %s still has a replica on it; retire it first: %w", name, si.Config.Name, ErrMembershipConflict)
		}
	}
	var resp apiResult
	if err := n.sysRequest(ctx, "$JS.API.SERVER.REMOVE", map[string]string{"peer": name}, &resp); err != nil {
		return fmt.Errorf("cluster: forget %q: %w", name, err)
	}
	if err := resp.err(); err != nil {
		return fmt.Errorf("cluster: forget %q: %w", name, err)
	}
	n.log.Info("cluster: server removed from the cluster", "server", name)
	return nil
}

// streamInfos returns the info of every Cairn stream.
func (n *Node) streamInfos(ctx context.Context) ([]*jetstream.StreamInfo, error) {
	// Bounded: without a meta leader (an election) nobody answers the listing.
	ctx, cancel := context.WithTimeout(ctx, streamListTimeout)
	defer cancel()
	var out []*jetstream.StreamInfo
	lister := n.js.ListStreams(ctx)
	for si := range lister.Info() {
		if strings.HasPrefix(si.Config.Name, streamPrefix) {
			out = append(out, si)
		}
	}
	if err := lister.Err(); err != nil {
		return nil, fmt.Errorf("cluster: list streams: %w", err)
	}
	return out, nil
}

// streamListTimeout bounds one listing of the streams' info.
const streamListTimeout = 10 * time.Second

// apiResult is the part of a JetStream API answer Cairn reads.
type apiResult struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// err returns the answer's error, if any.
func (r apiResult) err() error {
	if r.Error == nil {
		return nil
	}
	return fmt.Errorf("JetStream: %s (%d/%d)", r.Error.Description, r.Error.Code, r.Error.ErrCode)
}

// sysRequest sends req (JSON) to subject as the embedded server's system user and
// decodes the answer into resp. The meta leader answers; while there is none, the
// request is asked again until ctx ends.
func (n *Node) sysRequest(ctx context.Context, subject string, req, resp any) error {
	if n.srv == nil {
		return fmt.Errorf("the node uses an external NATS (--nats-url): use its own tools: %w", ErrMembershipConflict)
	}
	nc, err := nats.Connect("", nats.InProcessServer(n.srv), nats.UserInfo(sysUser, n.token), nats.Name("cairn "+n.cfg.NodeName+" (system)"))
	if err != nil {
		return fmt.Errorf("system connection: %w", err)
	}
	defer nc.Close()
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg, err := retryUnanswered(ctx, syncAttempt*2, func(ctx context.Context) (*nats.Msg, error) {
		return nc.RequestWithContext(ctx, subject, body)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("%s: answer %q: %w", subject, msg.Data, err)
	}
	return nil
}
