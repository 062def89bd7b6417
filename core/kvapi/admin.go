package kvapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/security"
)

// adminRealm is the Basic-auth realm of the admin routes.
const adminRealm = `Basic realm="cairn admin"`

// authorized checks that the caller may administer modules. Under access control the
// route has authenticated the caller, who needs the admin permission on any (the admin
// credential has it). Otherwise it checks the admin credential (HTTP Basic: key id and
// secret): without credentials it is 401 with a challenge, with wrong ones 403.
func (a *API) authorized(r *http.Request) error {
	if p := principalFrom(r.Context()); p != nil {
		return p.Check(r.Context(), security.Admin, security.AnyScope())
	}
	return a.adminCredential(r)
}

// adminCredential checks that the caller is the admin credential: under access control
// the route has authenticated the caller; otherwise it checks the Basic credentials as
// authorized does.
func (a *API) adminCredential(r *http.Request) error {
	if p := principalFrom(r.Context()); p != nil {
		if !p.Admin {
			return &core.Error{Code: core.EFORBIDDEN, Message: "Only the admin credential may manage grants\n"}
		}
		return nil
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return statusError(http.StatusUnauthorized, "admin credential required (HTTP Basic: key id and secret)\n",
			[2]string{"Www-Authenticate", adminRealm})
	}
	if a.cfg.AdminCheck == nil || !a.cfg.AdminCheck(id, secret) {
		return &core.Error{Code: core.EFORBIDDEN, Message: "admin credential refused\n"}
	}
	return nil
}

// moduleListResource serves GET /admin/modules.
func (a *API) moduleListResource() resource {
	return resource{name: "kv_wm_admin_modules", methods: []string{"HEAD", "GET"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, _ loc) error {
		if err := a.authorized(r); err != nil {
			return err
		}
		list := a.cfg.Modules.List(r.Context())
		if list == nil {
			list = []hooks.ModuleInfo{}
		}
		return a.writeJSON(w, r, http.StatusOK, map[string]any{"modules": list})
	}}
}

// moduleResource serves PUT, GET and DELETE /admin/modules/{name}.
func (a *API) moduleResource() resource {
	return resource{name: "kv_wm_admin_module", methods: []string{"HEAD", "GET", "PUT", "DELETE"}, guard: selfGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		if err := a.authorized(r); err != nil {
			return err
		}
		name := l.key
		switch r.Method {
		case http.MethodPut:
			code, err := readBody(w, r, hooksMaxModule)
			if err != nil {
				return err
			}
			info, created, err := a.cfg.Modules.Put(r.Context(), name, code)
			if err != nil {
				return err
			}
			status := http.StatusOK
			if created {
				status = http.StatusCreated
			}
			return a.writeJSON(w, r, status, info)
		case http.MethodDelete:
			if err := a.cfg.Modules.Delete(r.Context(), name); err != nil {
				return err
			}
			writeEmpty(w, http.StatusNoContent, "text/plain")
			return nil
		default:
			info, code, err := a.cfg.Modules.Get(r.Context(), name)
			if err != nil {
				return err
			}
			ct, ok := negotiate(r, "application/json", "application/wasm")
			if !ok {
				return errNotAcceptable
			}
			if ct == "application/wasm" {
				a.writeBody(w, r, http.StatusOK, ct, code)
				return nil
			}
			return a.writeJSON(w, r, http.StatusOK, info)
		}
	}}
}

// hooksMaxModule bounds an uploaded module (the registry refuses larger ones with a
// clearer message; this only stops a runaway upload).
const hooksMaxModule = 64 << 20

// preflistResource serves GET .../buckets/B/keys/K/preflist.
func (a *API) preflistResource() resource {
	return resource{name: "kv_wm_preflist", methods: []string{"HEAD", "GET"}, guard: readGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		pl, err := a.kv.Preflist(r.Context(), l.typ, l.bucket, l.key)
		if err != nil {
			return err
		}
		return a.writeJSON(w, r, http.StatusOK, map[string]any{"preflist": pl})
	}}
}

// writeJSON writes v as a complete JSON body, or returns the error of encoding it
// before anything is written.
func (a *API) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("kvapi: encode %T: %w", v, err)
	}
	a.writeBody(w, r, status, "application/json", b)
	return nil
}
