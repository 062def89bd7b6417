package kvapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/storage"
)

// fakeMembership answers the membership routes from fields.
type fakeMembership struct {
	waited time.Duration // the last Retire's deadline, from now
	done   bool
}

func (f *fakeMembership) Members() (any, error) { return []string{"n1", "n2"}, nil }

func (f *fakeMembership) Retire(ctx context.Context, node string) (any, bool, error) {
	if d, ok := ctx.Deadline(); ok {
		f.waited = time.Until(d)
	}
	if node != "n2" {
		return nil, false, &core.Error{Code: core.ENOTFOUND, Message: "No such server in the cluster\n"}
	}
	return map[string]any{"server": node, "done": f.done}, f.done, nil
}

func (f *fakeMembership) Forget(_ context.Context, node string) error {
	if node == "n2" {
		return &core.Error{Code: core.ECONFLICT, Message: "The server is still running\n"}
	}
	return nil
}

// TestClusterAdminRoutes: the membership routes need the admin credential, bound
// ?wait (whole seconds, 0–600), and answer 200/202/204, 404 and 409 in plain text.
func TestClusterAdminRoutes(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	svc, err := kv.New(db, kv.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	m := &fakeMembership{}
	h := New(svc, Config{Dialect: wire.DialectRiak, Logger: log, Membership: m,
		AdminCheck: func(id, secret string) bool { return id == "ADMIN" && secret == "s" }}).Handler()
	do := func(method, path string, admin bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, nil)
		if admin {
			r.SetBasicAuth("ADMIN", "s")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		method, path string
		admin        bool
		status       int
		body         string
	}{
		{"GET", "/admin/cluster/members", false, http.StatusUnauthorized, "admin credential required"},
		{"POST", "/admin/cluster/retire/n2", false, http.StatusUnauthorized, ""},
		{"GET", "/admin/cluster/members", true, http.StatusOK, `"members":["n1","n2"]`},
		{"POST", "/admin/cluster/retire/n2?wait=-1", true, http.StatusBadRequest, "wait must be"},
		{"POST", "/admin/cluster/retire/n2?wait=601", true, http.StatusBadRequest, "wait must be"},
		{"POST", "/admin/cluster/retire/n2?wait=1e9", true, http.StatusBadRequest, "wait must be"},
		{"POST", "/admin/cluster/retire/n2?wait=0", true, http.StatusAccepted, `"done":false`},
		{"POST", "/admin/cluster/retire/nobody", true, http.StatusNotFound, "No such server"},
		{"POST", "/admin/cluster/forget/n2", true, http.StatusConflict, "still running"},
		{"POST", "/admin/cluster/forget/n1", true, http.StatusNoContent, ""},
		{"GET", "/admin/cluster/forget/n1", true, http.StatusMethodNotAllowed, ""},
	} {
		w := do(tc.method, tc.path, tc.admin)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %q, want %d containing %q", tc.method, tc.path, w.Code, w.Body, tc.status, tc.body)
		}
	}
	m.done = true
	if w := do("POST", "/admin/cluster/retire/n2", true); w.Code != http.StatusOK || m.waited < 59*time.Second || m.waited > defaultRetireWait {
		t.Errorf("retire without ?wait: %d, waited up to %v; want 200 and the default %v", w.Code, m.waited, defaultRetireWait)
	}
}
