package kvapi

import "net/http"

// indexResource serves secondary-index queries (being built: 501 until then).
func (a *API) indexResource() resource {
	return resource{name: "kv_wm_index", methods: []string{"HEAD", "GET"}, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		writeStatusPage(w, r, http.StatusNotImplemented)
	}}
}
