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
	res, err := sig.Verify(req, c.userLookup(&user), c.a.cfg.Now())
	if err != nil {
		return err
	}
	c.auth = res
	c.who = s3.AnonymousRequester
	c.setUser(res, user)
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		c.who.SourceIP = ap.Addr().Unmap()
	}
	c.who.Secure = r.TLS != nil
	c.who.Keys = c.conditionKeys()
	return nil
}

// userLookup returns the signature checks' lookup of a key's secret, which sets *user
// to the key's user; a key that is unknown or whose user is disabled is
// InvalidAccessKeyId.
func (c *call) userLookup(user **s3.User) sig.Lookup {
	return func(keyID string) (string, error) {
		u, err := c.a.svc.UserByKey(c.r.Context(), keyID)
		if s3.IsCode(err, s3.NoSuchUser) || err == nil && !u.Enabled() {
			return "", &s3.Error{Code: s3.InvalidAccessKeyID, Message: "The AWS Access Key Id you provided does not exist in our records."}
		}
		if err != nil {
			return "", err
		}
		*user = u
		return u.KeySecret, nil
	}
}

// setUser makes the user a verified signature names the requester (nothing changes
// for an anonymous result), keeping the connection's details.
func (c *call) setUser(res sig.Result, user *s3.User) {
	if res.KeyID == "" || user == nil {
		return
	}
	c.user = user
	// The administrator is an ordinary user on the S3 API (as in Riak CS); its powers
	// are the user administration API's.
	c.who.ID, c.who.DisplayName, c.who.Anonymous = user.ID, user.DisplayName, false
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
