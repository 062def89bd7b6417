package kvapi

import (
	"encoding/json"
	"net/http"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/security"
)

// adminRealm is the Basic-auth realm of the admin routes.
const adminRealm = `Basic realm="cairn admin"`

// authorized checks that the caller may administer modules. Under access control the
// route has authenticated the caller, who needs the admin permission on any (the admin
// credential has it). Otherwise it checks the admin credential (HTTP Basic: key id and
// secret): without credentials it answers 401 with a challenge, with wrong ones 403.
// It returns false after answering.
func (a *API) authorized(w http.ResponseWriter, r *http.Request) bool {
	if p := principalFrom(r.Context()); p != nil {
		if err := p.Check(r.Context(), security.Admin, security.AnyScope()); err != nil {
			a.writeDenied(w, r, err)
			return false
		}
		return true
	}
	return a.adminCredential(w, r)
}

// adminCredential checks that the caller is the admin credential: under access control
// the route has authenticated the caller; otherwise it checks the Basic credentials as
// authorized does. It returns false after answering.
func (a *API) adminCredential(w http.ResponseWriter, r *http.Request) bool {
	if p := principalFrom(r.Context()); p != nil {
		if !p.Admin {
			writeText(w, http.StatusForbidden, "Only the admin credential may manage grants\n")
			return false
		}
		return true
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", adminRealm)
		writeText(w, http.StatusUnauthorized, "admin credential required (HTTP Basic: key id and secret)\n")
		return false
	}
	if a.cfg.AdminCheck == nil || !a.cfg.AdminCheck(id, secret) {
		writeText(w, http.StatusForbidden, "admin credential refused\n")
		return false
	}
	return true
}

// moduleListResource serves GET /admin/modules.
func (a *API) moduleListResource() resource {
	return resource{name: "kv_wm_admin_modules", methods: []string{"HEAD", "GET"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, _ loc) {
		if !a.authorized(w, r) {
			return
		}
		list := a.cfg.Modules.List(r.Context())
		if list == nil {
			list = []hooks.ModuleInfo{}
		}
		a.writeJSON(w, r, http.StatusOK, map[string]any{"modules": list})
	}}
}

// moduleResource serves PUT, GET and DELETE /admin/modules/{name}.
func (a *API) moduleResource() resource {
	return resource{name: "kv_wm_admin_module", methods: []string{"HEAD", "GET", "PUT", "DELETE"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		if !a.authorized(w, r) {
			return
		}
		name := l.key
		switch r.Method {
		case http.MethodPut:
			code, err := readBody(w, r, hooksMaxModule)
			if err != nil {
				a.writeError(w, r, err)
				return
			}
			info, created, err := a.cfg.Modules.Put(r.Context(), name, code)
			if err != nil {
				a.writeError(w, r, err)
				return
			}
			status := http.StatusOK
			if created {
				status = http.StatusCreated
			}
			a.writeJSON(w, r, status, info)
		case http.MethodDelete:
			if err := a.cfg.Modules.Delete(r.Context(), name); err != nil {
				a.writeError(w, r, err)
				return
			}
			writeEmpty(w, http.StatusNoContent, "text/plain")
		default:
			info, code, err := a.cfg.Modules.Get(r.Context(), name)
			if err != nil {
				a.writeError(w, r, err)
				return
			}
			ct, ok := negotiate(r, "application/json", "application/wasm")
			if !ok {
				writeStatusPage(w, r, http.StatusNotAcceptable)
				return
			}
			if ct == "application/wasm" {
				a.writeBody(w, r, http.StatusOK, ct, code)
				return
			}
			a.writeJSON(w, r, http.StatusOK, info)
		}
	}}
}

// hooksMaxModule bounds an uploaded module (the registry refuses larger ones with a
// clearer message; this only stops a runaway upload).
const hooksMaxModule = 64 << 20

// preflistResource serves GET .../buckets/B/keys/K/preflist.
func (a *API) preflistResource() resource {
	return resource{name: "kv_wm_preflist", methods: []string{"HEAD", "GET"}, guard: readGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		pl, err := a.kv.Preflist(r.Context(), l.typ, l.bucket, l.key)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		a.writeJSON(w, r, http.StatusOK, map[string]any{"preflist": pl})
	}}
}

// writeJSON writes v as a complete JSON body.
func (a *API) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeBody(w, r, status, "application/json", b)
}
