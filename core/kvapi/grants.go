package kvapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/cairnkv/cairn/core/security"
)

// maxGrantBody bounds the JSON body of a grant or revoke.
const maxGrantBody = 64 << 10

// grantRequest is the body of PUT (grant) and DELETE (revoke) /admin/grants/{key id}:
//
//	{"permissions": ["get", "put"], "type": "default", "bucket": "b"}
//	{"permissions": ["riak_kv.list_keys"], "type": "maps"}
//	{"permissions": ["mapreduce"], "any": true}
type grantRequest struct {
	Permissions []string `json:"permissions"`
	Any         bool     `json:"any"`
	Type        string   `json:"type"`
	Bucket      string   `json:"bucket"`
}

// grantsAnswer is the answer of every /admin/grants request: the user's grants after it.
type grantsAnswer struct {
	User   string           `json:"user"`
	Grants []security.Grant `json:"grants"`
}

// grantsResource serves /admin/grants/{key id} to the admin credential (also when
// access control is off, so that grants can be made ready before it is turned on):
// GET lists the user's grants, PUT grants (to an existing user), DELETE revokes. Each
// answers 200 with {"user": K, "grants": [...]}.
func (a *API) grantsResource() resource {
	return resource{name: "kv_wm_admin_grants", methods: []string{"HEAD", "GET", "PUT", "DELETE"}, guard: selfGuard,
		handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
			if err := a.adminCredential(r); err != nil {
				return err
			}
			user, g := l.key, a.cfg.Guard
			var (
				grants []security.Grant
				err    error
			)
			switch r.Method {
			case http.MethodGet, http.MethodHead:
				grants, err = g.Grants(r.Context(), user)
			default:
				var req *grantRequest
				var perms security.Permission
				if req, perms, err = readGrantRequest(w, r); err != nil {
					break
				}
				sc := security.Scope{Any: req.Any, Type: req.Type, Bucket: req.Bucket}
				if r.Method == http.MethodPut {
					grants, err = g.Grant(r.Context(), user, sc, perms)
				} else {
					grants, err = g.Revoke(r.Context(), user, sc, perms)
				}
				if err == nil {
					a.log.Info("kv: grants changed", "user", user, "method", r.Method, "scope", sc.String(), "permissions", perms.String())
				}
			}
			if err != nil {
				return err // an unknown user is 404, a bad scope or too many grants 400
			}
			if grants == nil {
				grants = []security.Grant{}
			}
			return a.writeJSON(w, r, http.StatusOK, grantsAnswer{User: user, Grants: grants})
		}}
}

// readGrantRequest decodes a grant or revoke body and its permissions.
func readGrantRequest(w http.ResponseWriter, r *http.Request) (*grantRequest, security.Permission, error) {
	body, err := readBody(w, r, maxGrantBody)
	if err != nil {
		return nil, 0, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	req := new(grantRequest)
	if err := dec.Decode(req); err != nil {
		return nil, 0, badRequest("A grant is a JSON object of the form {\"permissions\":[...],\"type\":T,\"bucket\":B} or {\"permissions\":[...],\"any\":true}: " + err.Error() + "\n")
	}
	perms, err := security.ParsePermissions(req.Permissions)
	if err != nil {
		return nil, 0, badRequest(err.Error() + "\n")
	}
	return req, perms, nil
}
