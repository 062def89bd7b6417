package main

// The real Riak clients (realclients_test.go) against one node of a 3-node cluster with
// --dialect riak: each script on a cluster of its own (they list buckets), against a node
// other than the first, so that its bucket properties, counters and 2i go through the
// cluster's replication before the node answers.

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterRealClients(t *testing.T) {
	requireClusterProcesses(t)
	node, modules, scripts := realClientsSetup(t, "*.js")
	for i, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		t.Run(name, func(t *testing.T) {
			c := startCluster(t, 3, "--dialect", "riak")
			nd := c.nodes[1+i%2]
			runClientScript(t, nd.child, node, script, modules)
		})
	}
}
