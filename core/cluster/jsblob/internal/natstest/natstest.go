// Package natstest starts embedded NATS servers with JetStream for tests: one node,
// or a cluster of several on loopback ports with routes, each with its store in a
// test's temporary directory and a client connected in-process.
package natstest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Node is one embedded server and a client connected to it.
type Node struct {
	Server *server.Server
	Conn   *nats.Conn
	JS     jetstream.JetStream
}

// Shutdown closes the node's client and stops its server (a lost node).
func (n *Node) Shutdown() {
	n.Conn.Close()
	n.Server.Shutdown()
	n.Server.WaitForShutdown()
}

// readyTimeout bounds the start of a cluster (route connections and the election of
// JetStream's meta leader).
const readyTimeout = 30 * time.Second

// Start starts n servers (a cluster if n > 1) with JetStream and returns them once
// JetStream answers on each; the test's cleanup stops them. The route ports are found
// free beforehand, so another test may take one in between: a start that fails is
// tried again on new ports, three times in all.
func Start(t testing.TB, n int) []*Node {
	t.Helper()
	var nodes []*Node
	t.Cleanup(func() {
		for _, nd := range nodes {
			if nd.Server.Running() {
				nd.Shutdown()
			}
		}
	})
	var err error
	for range 3 {
		if nodes, err = start(t, n); err == nil {
			break
		}
		t.Logf("natstest: %v; trying again on other ports", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, nd := range nodes {
		waitJetStream(t, i, nd.JS)
	}
	return nodes
}

// start makes one attempt of Start; on failure it stops what it started.
func start(t testing.TB, n int) (nodes []*Node, err error) {
	defer func() {
		if err != nil {
			for _, nd := range nodes {
				nd.Shutdown()
			}
			nodes = nil
		}
	}()
	ports := make([]int, n)
	var routes []*url.URL
	if n > 1 {
		// A clustered JetStream server needs its routes from the start: every server is
		// given all the ports, found free beforehand.
		for i := range ports {
			ports[i] = freePort(t)
			routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", ports[i])})
		}
	}
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			// A chunk of up to 1 MiB plus its headers.
			MaxPayload: 2 << 20,
		}
		if n > 1 {
			opts.Cluster = server.ClusterOpts{Name: "cairn-test", Host: "127.0.0.1", Port: ports[i]}
			opts.Routes = routes
		}
		s, err := server.NewServer(opts)
		if err != nil {
			return nodes, fmt.Errorf("natstest: server %d: %w", i, err)
		}
		s.Start()
		if !s.ReadyForConnections(readyTimeout) {
			s.Shutdown()
			return nodes, fmt.Errorf("natstest: server %d did not start", i)
		}
		nc, err := nats.Connect("", nats.InProcessServer(s), nats.MaxReconnects(-1))
		if err != nil {
			s.Shutdown()
			return nodes, fmt.Errorf("natstest: connect to server %d: %w", i, err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			s.Shutdown()
			return nodes, fmt.Errorf("natstest: jetstream on server %d: %w", i, err)
		}
		nodes = append(nodes, &Node{Server: s, Conn: nc, JS: js})
	}
	return nodes, nil
}

// freePort returns a loopback TCP port free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitJetStream waits until JetStream answers the node's client.
func waitJetStream(t testing.TB, i int, js jetstream.JetStream) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("natstest: JetStream on server %d not ready after %v: %v", i, readyTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
