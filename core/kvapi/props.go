package kvapi

import (
	"encoding/json"
	"mime"
	"net/http"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

const propsBodyLimit = 1 << 20

// propsResource serves bucket properties. The new API (/buckets/B/props) also allows
// DELETE, which resets the bucket to its type's properties.
func (a *API) propsResource(newAPI bool) resource {
	methods := []string{"HEAD", "GET", "PUT"}
	if newAPI {
		methods = append(methods, "DELETE")
	}
	return resource{name: "kv_wm_props", methods: methods, guard: propsGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p, err := a.kv.Props(r.Context(), l.typ, l.bucket)
			if err != nil {
				a.writeError(w, r, bodyless(err))
				return
			}
			a.writeProps(w, r, p)
		case http.MethodPut:
			changes, err := readPropsBody(w, r, "bucket")
			if err == nil {
				err = a.kv.SetProps(r.Context(), l.typ, l.bucket, changes)
			}
			a.writeNoContent(w, r, err)
		case http.MethodDelete:
			a.writeNoContent(w, r, a.kv.ResetProps(r.Context(), l.typ, l.bucket))
		}
	}}
}

// typePropsResource serves /types/T/props.
func (a *API) typePropsResource() resource {
	return resource{name: "kv_wm_bucket_type", methods: []string{"HEAD", "GET", "PUT"}, guard: typePropsGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p, err := a.kv.TypeProps(r.Context(), l.typ)
			if err != nil {
				a.writeError(w, r, bodyless(err))
				return
			}
			a.writeProps(w, r, p)
		case http.MethodPut:
			changes, err := readPropsBody(w, r, "bucket type")
			if err == nil {
				err = a.kv.SetTypeProps(r.Context(), l.typ, changes)
			}
			a.writeNoContent(w, r, err)
		}
	}}
}

func (a *API) writeProps(w http.ResponseWriter, r *http.Request, p *core.BucketProps) {
	if _, ok := negotiate(r, "application/json"); !ok {
		writeStatusPage(w, r, http.StatusNotAcceptable)
		return
	}
	b, err := json.Marshal(map[string]*core.BucketProps{"props": p})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	w.Header()["Vary"] = []string{"Accept-Encoding"}
	a.writeBody(w, r, http.StatusOK, "application/json", b)
}

func (a *API) writeNoContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			err = bodyless(err)
		}
		a.writeError(w, r, err)
		return
	}
	writeEmpty(w, http.StatusNoContent, "application/json") // the props resources offer JSON
}

// readPropsBody checks the media type (415) and the {"props":{...}} shape (400).
func readPropsBody(w http.ResponseWriter, r *http.Request, what string) (map[string]json.RawMessage, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &core.Error{Code: core.EMEDIATYPE}
	}
	shapeErr := badRequest(what + " PUT must be a JSON object of the form:\n{\"props\":{...bucket properties...}}")
	data, err := httpx.ReadBody(w, r, propsBodyLimit)
	if err != nil {
		return nil, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, shapeErr
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(body["props"], &props); err != nil || props == nil {
		return nil, shapeErr
	}
	return props, nil
}

// negotiate picks the offer that best matches the request's Accept header.
func negotiate(r *http.Request, offers ...string) (string, bool) {
	return wire.Negotiate(r.Header.Get("Accept"), offers)
}
