package kvapi

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// ClusterMembership is what the membership routes need of a cluster node
// (core/server adapts cluster.Node): its errors carry *core.Error codes (ENOTFOUND for
// an unknown server, ECONFLICT for a change the cluster's state refuses).
type ClusterMembership interface {
	// Members returns the cluster's servers as JSON-able data.
	Members() (any, error)
	// Retire moves the server's stream replicas to the others, waiting up to ctx, and
	// returns the retirement's state and whether it is done.
	Retire(ctx context.Context, node string) (status any, done bool, err error)
	// Forget removes a stopped, retired server from the cluster.
	Forget(ctx context.Context, node string) error
}

// Retirement waits: ?wait= seconds, bounded.
const (
	defaultRetireWait = 60 * time.Second
	maxRetireWait     = 10 * time.Minute
)

// clusterMembersResource serves GET /admin/cluster/members (admin credential).
func (a *API) clusterMembersResource() resource {
	return resource{name: "kv_wm_admin_cluster_members", methods: []string{"HEAD", "GET"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, _ loc) error {
		if err := a.authorized(r); err != nil {
			return err
		}
		ms, err := a.cfg.Membership.Members()
		if err != nil {
			return err
		}
		return a.writeJSON(w, r, http.StatusOK, map[string]any{"members": ms})
	}}
}

// clusterRetireResource serves POST /admin/cluster/retire/{node}[?wait=seconds]
// (admin credential): 200 with the retirement's state once the server holds no stream
// replica, 202 with it when the move goes on after the wait (ask again to follow it).
func (a *API) clusterRetireResource() resource {
	return resource{name: "kv_wm_admin_cluster_retire", methods: []string{"POST"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if err := a.authorized(r); err != nil {
			return err
		}
		wait := defaultRetireWait
		if v := r.URL.Query().Get("wait"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || time.Duration(n)*time.Second > maxRetireWait {
				return statusError(http.StatusBadRequest, "wait must be a whole number of seconds from 0 to 600\n")
			}
			wait = time.Duration(n) * time.Second
		}
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		defer cancel()
		st, done, err := a.cfg.Membership.Retire(ctx, l.key)
		if err != nil {
			return err
		}
		status := http.StatusAccepted
		if done {
			status = http.StatusOK
		}
		return a.writeJSON(w, r, status, st)
	}}
}

// clusterForgetResource serves POST /admin/cluster/forget/{node} (admin credential):
// 204 once the stopped server is no member of the cluster any more.
func (a *API) clusterForgetResource() resource {
	return resource{name: "kv_wm_admin_cluster_forget", methods: []string{"POST"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if err := a.authorized(r); err != nil {
			return err
		}
		if err := a.cfg.Membership.Forget(r.Context(), l.key); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}}
}
