package s3api

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/s3"
)

// maxAdminBody bounds the JSON or XML body of a user request.
const maxAdminBody = 64 << 10

// userJSON is a user as the administration API shows it (Riak CS's fields).
type userJSON struct {
	Email       string `json:"email"`
	DisplayName string `json:"display_name"`
	Name        string `json:"name"`
	KeyID       string `json:"key_id"`
	KeySecret   string `json:"key_secret"`
	ID          string `json:"id"`
	Status      string `json:"status"`
}

func toJSON(u *s3.User) userJSON {
	return userJSON{Email: u.Email, DisplayName: u.DisplayName, Name: u.Name, KeyID: u.KeyID,
		KeySecret: u.KeySecret, ID: u.ID, Status: u.Status}
}

// userRequest is the body of a create or update: JSON, or Riak CS's XML <User>.
type userRequest struct {
	XMLName      xml.Name `json:"-" xml:"User"`
	Email        *string  `json:"email" xml:"Email"`
	Name         *string  `json:"name" xml:"Name"`
	Status       *string  `json:"status" xml:"Status"`
	NewKeySecret bool     `json:"new_key_secret" xml:"NewKeySecret"`
}

// serveAdmin answers the user administration API (path /riak-cs/...; /store-cs/ too):
//
//	GET  /riak-cs/ping           → 200 OK (no signature needed)
//	POST /riak-cs/user           → create a user (admin)
//	GET  /riak-cs/user           → the signer's own record
//	PUT  /riak-cs/user           → update the signer's own record
//	GET  /riak-cs/user/{key id}  → any user (admin, or the user itself)
//	PUT  /riak-cs/user/{key id}  → update any user (admin, or the user itself)
//	GET  /riak-cs/users          → every user, ?status=enabled|disabled (admin)
func (c *call) serveAdmin() {
	res, arg, _ := strings.Cut(c.key, "/")
	switch {
	case res == "ping" && arg == "":
		_ = httpx.WriteFull(c.w, http.StatusOK, "text/plain", []byte("OK"))
		return
	case c.who.Anonymous:
		c.fail(&s3.Error{Code: s3.AccessDenied, Message: "Access Denied"})
		return
	}
	admin := c.a.svc.IsAdmin(c.user)
	ctx := c.r.Context()
	switch {
	case res == "users" && arg == "" && c.r.Method == http.MethodGet:
		if !admin {
			c.fail(&s3.Error{Code: s3.AccessDenied, Message: "Access Denied"})
			return
		}
		st := c.query.Get("status")
		if st != "" && st != s3.StatusEnabled && st != s3.StatusDisabled {
			c.fail(s3.Errorf(s3.InvalidArgument, "status must be enabled or disabled"))
			return
		}
		us, err := c.a.svc.Users(ctx, st)
		if err != nil {
			c.fail(err)
			return
		}
		out := make([]userJSON, 0, len(us))
		for _, u := range us {
			out = append(out, toJSON(u))
		}
		c.writeJSON(http.StatusOK, out)
	case res == "user" && arg == "" && c.r.Method == http.MethodPost:
		if !admin {
			c.fail(&s3.Error{Code: s3.AccessDenied, Message: "Access Denied"})
			return
		}
		req, err := c.readUserRequest()
		if err != nil {
			c.fail(err)
			return
		}
		if req.Email == nil || req.Name == nil {
			c.fail(s3.Errorf(s3.InvalidUserField, "A new user needs an email and a name"))
			return
		}
		u, err := c.a.svc.CreateUser(ctx, s3.NewUser{Name: *req.Name, Email: *req.Email})
		if err != nil {
			c.fail(err)
			return
		}
		c.a.log.Info("s3: user created", "key_id", u.KeyID, "email", u.Email, "by", c.user.KeyID)
		c.writeJSON(http.StatusCreated, toJSON(u))
	case res == "user" && (c.r.Method == http.MethodGet || c.r.Method == http.MethodPut):
		target := arg
		if target == "" {
			target = c.user.KeyID
		}
		if target != c.user.KeyID && !admin {
			c.fail(&s3.Error{Code: s3.AccessDenied, Message: "Access Denied"})
			return
		}
		if c.r.Method == http.MethodGet {
			u, err := c.a.svc.UserByKey(ctx, target)
			if err != nil {
				c.fail(err)
				return
			}
			c.writeJSON(http.StatusOK, toJSON(u))
			return
		}
		req, err := c.readUserRequest()
		if err != nil {
			c.fail(err)
			return
		}
		u, err := c.a.svc.UpdateUser(ctx, target, s3.UserUpdate{Name: req.Name, Email: req.Email, Status: req.Status,
			NewKeySecret: req.NewKeySecret}, admin)
		if err != nil {
			c.fail(err)
			return
		}
		c.a.log.Info("s3: user updated", "key_id", u.KeyID, "status", u.Status, "new_secret", req.NewKeySecret, "by", c.user.KeyID)
		c.writeJSON(http.StatusOK, toJSON(u))
	case res == "user" || res == "users":
		c.methodNotAllowed()
	default:
		c.fail(s3.Errorf(s3.InvalidArgument, "No such administration resource"))
	}
}

// readUserRequest decodes a JSON (or, with an XML content type, XML) user body.
func (c *call) readUserRequest() (*userRequest, error) {
	httpx.LimitRequestBody(c.w, c.r, maxAdminBody)
	if err := c.checkPayload(); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(c.body())
	if err != nil {
		return nil, err
	}
	req := new(userRequest)
	mt, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if strings.HasSuffix(mt, "xml") {
		err = xml.Unmarshal(b, req)
	} else {
		err = json.Unmarshal(b, req)
	}
	if err != nil {
		return nil, s3.Errorf(s3.InvalidUserField, "The user document is malformed: %v", err)
	}
	return req, nil
}

func (c *call) writeJSON(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.fail(err)
		return
	}
	_ = httpx.WriteFull(c.w, status, "application/json", b) // a failed write means the client left
}
