package kvapi

import "net/http"

// walkResource serves link walking (being built: 501 until then).
func (a *API) walkResource() resource {
	return resource{name: "kv_wm_link_walker", methods: []string{"HEAD", "GET", "POST"}, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		writeStatusPage(w, r, http.StatusNotImplemented)
	}}
}
