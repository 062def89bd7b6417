package kvapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// ClusterStatusFunc returns the cluster node's status (cluster.Status) as JSON-able
// data; with digest, with each stream's digest of the node's local replica.
type ClusterStatusFunc func(ctx context.Context, digest bool) (any, error)

// clusterResource serves GET /cluster (only registered in cluster mode): the node's
// view of the cluster as JSON. ?digest=true adds the replicas' digests, which read
// every replicated key: one such request runs at a time per node, others get 503.
func (a *API) clusterResource() resource {
	busy := make(chan struct{}, 1)
	return resource{name: "cluster", methods: []string{"HEAD", "GET"}, guard: openGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		var digest bool
		switch v := r.URL.Query().Get("digest"); v {
		case "", "false":
		case "true":
			digest = true
		default:
			return statusError(http.StatusBadRequest, "digest must be true or false\n")
		}
		if digest {
			select {
			case busy <- struct{}{}:
				defer func() { <-busy }()
			default:
				return statusError(http.StatusServiceUnavailable, "a digest is being computed; try again\n")
			}
		}
		st, err := a.cfg.Cluster(r.Context(), digest)
		if err != nil {
			return fmt.Errorf("kvapi: cluster status: %w", err)
		}
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return fmt.Errorf("kvapi: encode cluster status: %w", err)
		}
		a.writeBody(w, r, http.StatusOK, "application/json", append(b, '\n'))
		return nil
	}}
}
