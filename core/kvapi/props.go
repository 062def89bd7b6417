package kvapi

import (
	"encoding/json"
	"fmt"
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
	return resource{name: "kv_wm_props", methods: methods, guard: propsGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p, err := a.kv.Props(r.Context(), l.typ, l.bucket)
			if err != nil {
				return bodyless(err)
			}
			return a.writeProps(w, r, p)
		case http.MethodPut:
			changes, err := readPropsBody(w, r, "bucket")
			if err == nil {
				err = a.kv.SetProps(r.Context(), l.typ, l.bucket, changes)
			}
			return writeNoContent(w, err)
		default: // DELETE
			return writeNoContent(w, a.kv.ResetProps(r.Context(), l.typ, l.bucket))
		}
	}}
}

// typePropsResource serves /types/T/props.
func (a *API) typePropsResource() resource {
	return resource{name: "kv_wm_bucket_type", methods: []string{"HEAD", "GET", "PUT"}, guard: typePropsGuard, handle: func(w http.ResponseWriter, r *http.Request, l loc) error {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			p, err := a.kv.TypeProps(r.Context(), l.typ)
			if err != nil {
				return bodyless(err)
			}
			return a.writeProps(w, r, p)
		default: // PUT
			changes, err := readPropsBody(w, r, "bucket type")
			if err == nil {
				err = a.kv.SetTypeProps(r.Context(), l.typ, changes)
			}
			return writeNoContent(w, err)
		}
	}}
}

// writeProps writes {"props": p}, or returns the error to answer instead (406).
func (a *API) writeProps(w http.ResponseWriter, r *http.Request, p *core.BucketProps) error {
	if _, ok := negotiate(r, "application/json"); !ok {
		return errNotAcceptable
	}
	b, err := json.Marshal(map[string]*core.BucketProps{"props": p})
	if err != nil {
		return fmt.Errorf("kvapi: encode props: %w", err)
	}
	w.Header()["Vary"] = []string{"Accept-Encoding"}
	a.writeBody(w, r, http.StatusOK, "application/json", b)
	return nil
}

// writeNoContent answers a props write: 204 when err is nil, otherwise err to answer
// (a missing bucket type without a body, as the reference's props resources answer).
func writeNoContent(w http.ResponseWriter, err error) error {
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			err = bodyless(err)
		}
		return err
	}
	writeEmpty(w, http.StatusNoContent, "application/json") // the props resources offer JSON
	return nil
}

// readPropsBody checks the media type (415) and the {"props":{...}} shape (400).
func readPropsBody(w http.ResponseWriter, r *http.Request, what string) (map[string]json.RawMessage, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errMediaType
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
