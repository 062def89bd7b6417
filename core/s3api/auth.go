package s3api

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// authResult is what signature verification established.
type authResult = sig.Result

// authenticate verifies the request's signature (if any) and sets the requester. An
// unsigned request is anonymous; a disabled user's key is InvalidAccessKeyId.
func (c *call) authenticate() error {
	r := c.r
	req := &sig.Request{Method: r.Method, Host: r.Host, RawPath: rawPath(r), RawQuery: r.URL.RawQuery,
		Header: r.Header, HostBucket: c.hostBucket, TransferEncoding: r.TransferEncoding, ContentLength: r.ContentLength}
	var user *s3.User
	lookup := func(keyID string) (string, error) {
		u, err := c.a.svc.UserByKey(r.Context(), keyID)
		if s3.IsCode(err, s3.NoSuchUser) || err == nil && !u.Enabled() {
			return "", &s3.Error{Code: s3.InvalidAccessKeyID, Message: "The AWS Access Key Id you provided does not exist in our records."}
		}
		if err != nil {
			return "", err
		}
		user = u
		return u.KeySecret, nil
	}
	res, err := sig.Verify(req, lookup, c.a.cfg.Now())
	if err != nil {
		return err
	}
	c.auth = res
	if res.KeyID == "" || user == nil {
		c.who = s3.AnonymousRequester
	} else {
		c.user = user
		// The administrator is an ordinary user on the S3 API (as in Riak CS); its powers
		// are the user administration API's.
		c.who = s3.Requester{ID: user.ID, DisplayName: user.DisplayName}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		c.who.SourceIP = ap.Addr().Unmap()
	}
	c.who.Secure = r.TLS != nil
	c.who.Keys = c.conditionKeys()
	return nil
}

// rawPath returns the path exactly as the client sent it (V2 signs it byte for byte):
// the path of the request target, also for absolute-form targets.
func rawPath(r *http.Request) string {
	t := r.RequestURI
	if i := strings.Index(t, "://"); i >= 0 && !strings.HasPrefix(t, "/") {
		t = t[i+3:]
		if j := strings.IndexByte(t, '/'); j >= 0 {
			t = t[j:]
		} else {
			t = "/"
		}
	}
	if i := strings.IndexByte(t, '?'); i >= 0 {
		t = t[:i]
	}
	if t == "" || t == "*" {
		return r.URL.EscapedPath()
	}
	return t
}
