package kvapi

import (
	"context"
	"net/http"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/kvapi/wire"
	"github.com/cairnkv/cairn/core/security"
)

const (
	// walkExpires is how far in the future a walk's Expires header lies (the
	// reference's default cache_secs).
	walkExpires = 600 * time.Second
	// walkTimeout bounds a walk, as the reference's MapReduce default bounds the job a
	// walk runs.
	walkTimeout = 60 * time.Second
)

// walkResource is link walking: /store/B/K/steps, /buckets/B/keys/K/steps, and the
// typed form, which is refused. POST behaves as GET (the reference offers it only so
// that browsers can bypass their cache).
func (a *API) walkResource() resource {
	return resource{name: "kv_wm_link_walker", methods: []string{"HEAD", "GET", "POST"}, guard: readGuard, handle: a.walk}
}

// walk checks the request in webmachine's order (malformed 400, forbidden 403, Accept
// 406, origin 404), runs the walk and writes the nested multipart/mixed body with
// Content-Length.
func (a *API) walk(w http.ResponseWriter, r *http.Request, l loc) error {
	steps, err := wire.ParseWalk(l.rest)
	if err != nil {
		return badRequest(wire.WalkErrorMessage(l.d))
	}
	if l.api == wire.APITyped {
		return &core.Error{Code: core.EFORBIDDEN, Message: wire.WalkTypedMessage}
	}
	if _, ok := wire.Negotiate(r.Header.Get("Accept"), []string{"multipart/mixed"}); !ok {
		return errNotAcceptable
	}
	ks := make([]kv.WalkStep, len(steps))
	for i, st := range steps {
		ks[i] = kv.WalkStep{Bucket: st.Bucket, Tag: st.Tag, Keep: st.Keep}
	}
	ctx, cancel := context.WithTimeout(r.Context(), walkTimeout)
	defer cancel()
	results, err := a.kv.Walk(ctx, l.typ, l.bucket, l.key, ks, kv.WalkOptions{CanRead: canRead(ctx, security.Get)})
	if err != nil {
		if kv.IsNotFound(err) {
			return errNotFound
		}
		return err // a *security.DeniedError is 403 with Riak's text
	}
	boundary := wire.NewBoundary()
	body := wire.AppendWalk(make([]byte, 0, wire.WalkSizeHint(results)), boundary, results, l.api, l.d, wire.NewBoundary)
	w.Header()["Expires"] = []string{wire.FormatHTTPDate(time.Now().Add(walkExpires))}
	a.writeBody(w, r, http.StatusOK, wire.MultipartContentType(boundary), body)
	return nil
}
