package kvapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"

	"github.com/cairnkv/cairn/core/httpx"
)

func (a *API) pingResource() resource {
	return resource{name: "kv_wm_ping", methods: []string{"HEAD", "GET"}, guard: openGuard, handle: func(w http.ResponseWriter, r *http.Request, _ loc) error {
		a.writeBody(w, r, http.StatusOK, "text/html", []byte("OK"))
		return nil
	}}
}

// statsResource serves /stats: compact JSON, or the same pretty-printed as text/plain.
func (a *API) statsResource() resource {
	return resource{name: "kv_wm_stats", methods: []string{"HEAD", "GET"}, guard: openGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if a.cfg.Stats == nil {
			return errNotFound
		}
		ct, ok := negotiate(r, "application/json", "text/plain")
		if !ok {
			return errNotAcceptable
		}
		report := a.cfg.Stats(l.d.String())
		var b []byte
		var err error
		if ct == "text/plain" {
			b, err = json.MarshalIndent(report, "", "    ")
		} else {
			b, err = json.Marshal(report)
		}
		if err != nil {
			return fmt.Errorf("kvapi: encode stats: %w", err)
		}
		w.Header()["Vary"] = []string{"Accept, Accept-Encoding"}
		a.writeBody(w, r, http.StatusOK, ct, b)
		return nil
	}}
}

// listResource serves / : every resource and its path, as HTML or JSON, with a Link
// header naming each.
func (a *API) listResource() resource {
	return resource{name: "core_wm_urlmap", methods: []string{"HEAD", "GET"}, guard: openGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		list := a.resourceList(l.d)
		var link bytes.Buffer
		for i, l := range list {
			if i > 0 {
				link.WriteByte(',')
			}
			link.WriteString("<" + l.path + `>; rel="` + l.name + `"`)
		}
		h := w.Header()
		h["Link"] = []string{link.String()}
		h["Vary"] = []string{"Accept"}
		ct, ok := negotiate(r, "text/html", "application/json")
		if !ok {
			return errNotAcceptable // with the Link and Vary headers, as the reference answers
		}
		var body bytes.Buffer
		if ct == "application/json" {
			// The reference emits an object with duplicate keys (one per path), in order.
			body.WriteByte('{')
			for i, l := range list {
				if i > 0 {
					body.WriteByte(',')
				}
				k, _ := json.Marshal(l.name)
				v, _ := json.Marshal(l.path)
				body.Write(k)
				body.WriteByte(':')
				body.Write(v)
			}
			body.WriteByte('}')
		} else {
			body.WriteString("<html><body><ul>")
			for _, l := range list {
				body.WriteString(`<li><a href="` + html.EscapeString(l.path) + `">` + html.EscapeString(l.name) + "</a></li>")
			}
			body.WriteString("</ul></body></html>")
		}
		a.writeBody(w, r, http.StatusOK, ct, body.Bytes())
		return nil
	}}
}

// buffered runs h into memory and sends its response whole, with a Content-Length like
// every non-streamed response of this interface (promhttp writes in pieces, which
// net/http would send chunked).
func buffered(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bufferedWriter{header: w.Header()}
		h.ServeHTTP(bw, r)
		if bw.status == 0 {
			bw.status = http.StatusOK
		}
		_ = httpx.WriteFull(w, bw.status, "", bw.body.Bytes())
	})
}

// bufferedWriter collects a response; its header map is the real writer's.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
