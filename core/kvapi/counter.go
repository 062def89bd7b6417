package kvapi

import "net/http"

// counterResource serves 1.4-style counters (being built: 501 until then).
func (a *API) counterResource() resource {
	return resource{name: "kv_wm_counter", methods: []string{"GET", "POST"}, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		writeStatusPage(w, r, http.StatusNotImplemented)
	}}
}

// datatypeResource serves the typed data-type path (being built: 501 until then).
func (a *API) datatypeResource() resource {
	return resource{name: "kv_wm_crdt", methods: []string{"HEAD", "GET", "POST"}, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		writeStatusPage(w, r, http.StatusNotImplemented)
	}}
}
