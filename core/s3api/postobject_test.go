package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// formBody encodes a POST object form: the fields in order, then the file part
// (named "file", with filename and a text/plain type) holding data.
func formBody(fields [][2]string, filename, data string) (body, contentType string) {
	return typedFormBody(fields, filename, "text/plain", data)
}

// typedFormBody is formBody with the file part's Content-Type ftype.
func typedFormBody(fields [][2]string, filename, ftype, data string) (body, contentType string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		_ = w.WriteField(f[0], f[1])
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, filename))
	h.Set("Content-Type", ftype)
	p, _ := w.CreatePart(h)
	_, _ = p.Write([]byte(data))
	_ = w.Close()
	return b.String(), w.FormDataContentType()
}

// policyDoc returns the base64 policy document of conditions expiring at exp.
func policyDoc(exp time.Time, conds ...any) string {
	b, _ := json.Marshal(map[string]any{"expiration": exp.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": conds})
	return base64.StdEncoding.EncodeToString(b)
}

// signV4 returns the V4 authentication fields of a policy signed by u now, and the
// conditions a policy must have for them.
func signV4(u *s3.User, now time.Time) (fields [][2]string, conds []any) {
	cred := sig.Credential{KeyID: u.KeyID, Date: now.UTC().Format("20060102"), Region: "us-east-1", Service: "s3"}
	date := now.UTC().Format(sig.ISO8601Basic)
	fields = [][2]string{{"x-amz-algorithm", sig.AlgorithmV4}, {"x-amz-credential", cred.String()}, {"x-amz-date", date}}
	conds = []any{map[string]string{"x-amz-algorithm": sig.AlgorithmV4}, map[string]string{"x-amz-credential": cred.String()},
		map[string]string{"x-amz-date": date}}
	return fields, conds
}

// signedForm returns the fields of a form signed by u (V4, or V2 with v2) with the
// policy of conds (plus the signature's own conditions), followed by extra.
func signedForm(u *s3.User, v2 bool, exp time.Time, conds []any, fields ...[2]string) [][2]string {
	if v2 {
		p := policyDoc(exp, conds...)
		return append(fields, [2]string{"AWSAccessKeyId", u.KeyID}, [2]string{"policy", p}, [2]string{"signature", sig.SignPostV2(u.KeySecret, p)})
	}
	auth, authConds := signV4(u, time.Now())
	p := policyDoc(exp, append(conds, authConds...)...)
	cred, _ := sig.ParseCredential(auth[1][1])
	out := append(fields, auth...)
	return append(out, [2]string{"policy", p}, [2]string{"x-amz-signature", sig.SignPostV4(u.KeySecret, cred, p)})
}

// post sends a form to path (anonymously: the form carries the signature).
func (e *mpEnv) post(path string, fields [][2]string, filename, data string) mpResp {
	e.t.Helper()
	body, ct := formBody(fields, filename, data)
	return e.do(mpReq{method: "POST", path: path, header: map[string]string{"Content-Type": ct}, body: body})
}

// TestPostObjectUpload: a V4-signed form stores its file under the key (${filename}
// replaced) with the fields' Content-Type, metadata, standard headers, ACL and tags,
// and answers its success_action_status (201: the PostResponse document); a V2-signed
// form works alike and answers 204; success_action_redirect is a 303 with bucket, key
// and etag; host-style POST works; a file larger than the parser's buffer and the
// chunk size arrives whole.
func TestPostObjectUpload(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("upl", e.alice)
	exp := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "upl"}, []string{"starts-with", "$key", "user/"}, map[string]string{"acl": "public-read"},
		[]string{"starts-with", "$Content-Type", "text/"}, map[string]string{"x-amz-meta-color": "blue"},
		[]string{"eq", "$success_action_status", "201"}, []string{"starts-with", "$Cache-Control", ""},
		[]string{"starts-with", "$tagging", ""}, []any{"content-length-range", 1, 1 << 20}}
	fields := signedForm(e.alice, false, exp, conds, [2]string{"key", "user/${filename}"}, [2]string{"acl", "public-read"},
		[2]string{"Content-Type", "text/markdown"}, [2]string{"x-amz-meta-color", "blue"}, [2]string{"success_action_status", "201"},
		[2]string{"Cache-Control", "max-age=60"}, [2]string{"tagging", taggingBody("project", "cairn")}, [2]string{"x-ignore-me", "anything"})
	r := e.post("/upl", fields, `C:\docs\notes.md`, "# notes")
	if r.status != 201 {
		t.Fatalf("V4 POST: %d\n%s", r.status, r.body)
	}
	var doc struct{ Location, Bucket, Key, ETag string }
	if err := xml.Unmarshal([]byte(r.body), &doc); err != nil || doc.Bucket != "upl" || doc.Key != "user/notes.md" ||
		!strings.HasSuffix(doc.Location, "/upl/user/notes.md") || doc.ETag != r.header.Get("ETag") || doc.ETag == "" {
		t.Fatalf("PostResponse %+v (%v), ETag header %q\n%s", doc, err, r.header.Get("ETag"), r.body)
	}
	g := e.must(200, mpReq{method: "GET", path: "/upl/user/notes.md"}) // public-read: anonymous GET
	if g.body != "# notes" || g.header.Get("Content-Type") != "text/markdown" || g.header.Get("X-Amz-Meta-Color") != "blue" ||
		g.header.Get("Cache-Control") != "max-age=60" || g.header.Get("X-Amz-Tagging-Count") != "1" {
		t.Fatalf("stored object: %q %v", g.body, g.header)
	}

	// V2, default status 204, then a redirect.
	v2 := signedForm(e.alice, true, exp, []any{map[string]string{"bucket": "upl"}, []string{"starts-with", "$key", ""}},
		[2]string{"key", "v2.txt"})
	if r := e.post("/upl", v2, "a.txt", "v2 data"); r.status != 204 || r.header.Get("ETag") == "" {
		t.Fatalf("V2 POST: %d %v\n%s", r.status, r.header, r.body)
	}
	if g := e.must(200, mpReq{method: "GET", path: "/upl/v2.txt", as: e.alice}); g.body != "v2 data" || g.header.Get("Content-Type") != defaultContentType {
		t.Fatalf("V2 object: %q %v", g.body, g.header)
	}
	redir := signedForm(e.alice, false, exp, []any{map[string]string{"bucket": "upl"}, map[string]string{"key": "r.txt"},
		map[string]string{"success_action_redirect": "http://app.example/done?x=1"}},
		[2]string{"key", "r.txt"}, [2]string{"success_action_redirect", "http://app.example/done?x=1"})
	r = e.post("/upl", redir, "r.txt", "r")
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != 303 || loc == nil || loc.Host != "app.example" || loc.Query().Get("bucket") != "upl" ||
		loc.Query().Get("key") != "r.txt" || loc.Query().Get("etag") != r.header.Get("ETag") || loc.Query().Get("x") != "1" {
		t.Fatalf("redirect: %d Location %q", r.status, r.header.Get("Location"))
	}

	// Host style, and a file larger than the buffers.
	big := strings.Repeat("0123456789abcdef", 1000) + "\r\n--almost a boundary\r\n"
	hostForm := signedForm(e.alice, false, exp, []any{map[string]string{"bucket": "upl"}, map[string]string{"key": "big"}}, [2]string{"key", "big"})
	body, ct := formBody(hostForm, "big", big)
	if r := e.do(mpReq{method: "POST", path: "/", header: map[string]string{"Content-Type": ct, "Host": "upl.s3.localhost"}, body: body}); r.status != 204 {
		t.Fatalf("host-style POST: %d\n%s", r.status, r.body)
	}
	if g := e.must(200, mpReq{method: "GET", path: "/upl/big", as: e.alice}); g.body != big {
		t.Fatalf("big object: %d bytes, want %d", len(g.body), len(big))
	}
}

// TestPostObjectPolicy: the policy's rules as AWS applies them. Each refused form
// answers AWS's status and code and stores nothing.
func TestPostObjectPolicy(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("pol", e.alice)
	e.bucket("other", e.alice)
	exp := time.Now().Add(time.Hour)
	base := []any{map[string]string{"bucket": "pol"}, []string{"starts-with", "$key", "up/"}}
	key := [2]string{"key", "up/f"}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	withPolicy := func(p string) [][2]string { // V2-signed arbitrary policy text
		return [][2]string{key, {"AWSAccessKeyId", e.alice.KeyID}, {"policy", p}, {"signature", sig.SignPostV2(e.alice.KeySecret, p)}}
	}
	tests := []struct {
		name   string
		path   string
		fields [][2]string
		data   string
		status int
		code   s3.Code
		msg    string
	}{
		{name: "ok", fields: signedForm(e.alice, false, exp, base, key), status: 204},
		{name: "case-insensitive names", fields: signedForm(e.alice, true, exp,
			[]any{map[string]string{"bUcKeT": "pol"}, []string{"StArTs-WiTh", "$KeY", "up/"}, map[string]string{"Acl": "private"}},
			[2]string{"kEy", "up/f"}, [2]string{"ACL", "private"}), status: 204},
		{name: "expired", fields: signedForm(e.alice, false, time.Now().Add(-time.Minute), base, key), status: 403, code: s3.AccessDenied, msg: "Policy expired"},
		{name: "key condition", fields: signedForm(e.alice, false, exp, base, [2]string{"key", "down/f"}), status: 403, code: s3.AccessDenied,
			msg: `Policy Condition failed: ["starts-with", "$key", "up/"]`},
		{name: "wrong bucket", path: "/other", fields: signedForm(e.alice, false, exp, base, key), status: 403, code: s3.AccessDenied, msg: "Policy Condition failed"},
		{name: "no bucket condition", fields: signedForm(e.alice, false, exp, base[1:], key), status: 403, code: s3.AccessDenied, msg: "Extra input fields: bucket"},
		{name: "extra field", fields: signedForm(e.alice, false, exp, base, key, [2]string{"x-amz-meta-a", "b"}), status: 403, code: s3.AccessDenied,
			msg: "Extra input fields: x-amz-meta-a"},
		{name: "eq value", fields: signedForm(e.alice, false, exp, append(base, []string{"eq", "$x-amz-meta-a", "b"}), key, [2]string{"x-amz-meta-a", "c"}),
			status: 403, code: s3.AccessDenied, msg: `["eq", "$x-amz-meta-a", "b"]`},
		{name: "too large", fields: signedForm(e.alice, false, exp, append(base, []any{"content-length-range", 0, 3}), key), data: "four",
			status: 400, code: s3.EntityTooLarge},
		{name: "too small", fields: signedForm(e.alice, false, exp, append(base, []any{"content-length-range", 10, 20}), key), data: "four",
			status: 400, code: s3.EntityTooSmall},
		{name: "bad V4 signature", fields: func() [][2]string {
			f := signedForm(e.alice, false, exp, base, key)
			f[len(f)-1][1] = strings.Repeat("0", 64)
			return f
		}(), status: 403, code: s3.SignatureDoesNotMatch},
		{name: "no V2 signature", fields: withPolicy(policyDoc(exp, base...))[:3], status: 400, code: s3.InvalidArgument, msg: "Signature"},
		{name: "bad V2 signature", fields: [][2]string{key, {"AWSAccessKeyId", e.alice.KeyID}, {"policy", policyDoc(exp, base...)}, {"signature", "AAAA"}},
			status: 403, code: s3.SignatureDoesNotMatch},
		{name: "unknown key", fields: [][2]string{key, {"AWSAccessKeyId", "NOSUCHKEY"}, {"policy", policyDoc(exp, base...)}, {"signature", "x"}},
			status: 403, code: s3.InvalidAccessKeyID},
		{name: "policy without signature", fields: [][2]string{key, {"policy", policyDoc(exp, base...)}}, status: 400, code: s3.InvalidArgument,
			msg: "AWSAccessKeyId"},
		{name: "no key", fields: signedForm(e.alice, false, exp, base), status: 400, code: s3.InvalidArgument, msg: "'key'"},
		{name: "not base64", fields: withPolicy("{not base64"), status: 400, code: s3.InvalidPolicyDocument},
		{name: "not JSON", fields: withPolicy(b64("[1,")), status: 400, code: s3.InvalidPolicyDocument},
		{name: "no expiration", fields: withPolicy(b64(`{"conditions":[]}`)), status: 400, code: s3.InvalidPolicyDocument, msg: "expiration"},
		{name: "EXPIRATION", fields: withPolicy(b64(`{"EXPIRATION":"2099-01-01T00:00:00Z","conditions":[]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "CONDITIONS", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","CONDITIONS":[]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "bad date", fields: withPolicy(b64(`{"expiration":"2099-01-01 00:00:00","conditions":[]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "empty condition", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","conditions":[{}]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "range of one", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","conditions":[["content-length-range",0]]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "negative range", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","conditions":[["content-length-range",-1,0]]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "unknown operator", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","conditions":[["ends-with","$key","x"]]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "field without $", fields: withPolicy(b64(`{"expiration":"2099-01-01T00:00:00Z","conditions":[["eq","key","x"]]}`)), status: 400, code: s3.InvalidPolicyDocument},
		{name: "bad acl", fields: signedForm(e.alice, false, exp, append(base, map[string]string{"acl": "everything"}), key, [2]string{"acl", "everything"}),
			status: 400, code: s3.InvalidArgument},
		{name: "bad tagging", fields: signedForm(e.alice, false, exp, append(base, map[string]string{"tagging": "<x/>"}), key, [2]string{"tagging", "<x/>"}),
			status: 400, code: s3.MalformedXML},
		{name: "newline in metadata", fields: signedForm(e.alice, false, exp, append(base, []string{"starts-with", "$x-amz-meta-a", ""}), key,
			[2]string{"x-amz-meta-a", "line\r\nX-Injected: 1"}), status: 400, code: s3.InvalidArgument, msg: "x-amz-meta-a"},
		{name: "metadata name not a token", fields: signedForm(e.alice, false, exp, append(base, []string{"starts-with", "$x-amz-meta-a b", ""}), key,
			[2]string{"x-amz-meta-a b", "v"}), status: 400, code: s3.InvalidArgument},
		{name: "control character in Content-Type", fields: signedForm(e.alice, false, exp, append(base, []string{"starts-with", "$content-type", ""}), key,
			[2]string{"Content-Type", "text/plain\x00"}), status: 400, code: s3.InvalidArgument},
		{name: "repeated field", fields: signedForm(e.alice, false, exp, base, key, key), status: 400, code: s3.InvalidArgument},
		{name: "another user's form for alice's bucket", fields: signedForm(e.bob, false, exp, base, key), status: 403, code: s3.AccessDenied, msg: "Access Denied"},
		{name: "anonymous on a private bucket", fields: [][2]string{key}, status: 403, code: s3.AccessDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/pol"
			}
			data := tt.data
			if data == "" {
				data = "data"
			}
			r := e.post(path, tt.fields, "f", data)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d\n%s", r.status, tt.status, r.body)
			}
			if tt.code != "" && (!strings.Contains(r.body, "<Code>"+string(tt.code)+"</Code>") || !strings.Contains(r.body, tt.msg)) {
				t.Fatalf("want %s %q:\n%s", tt.code, tt.msg, r.body)
			}
			stored := e.do(mpReq{method: "HEAD", path: path + "/up/f", as: e.alice}).status == 200
			if stored != (tt.status < 300) {
				t.Fatalf("stored %v after %d", stored, r.status)
			}
			e.do(mpReq{method: "DELETE", path: path + "/up/f", as: e.alice})
		})
	}
}

// TestPostObjectAnonymous: a form without policy or signature is the anonymous user's
// upload: refused on a private bucket (TestPostObjectPolicy), stored on a
// public-read-write one.
func TestPostObjectAnonymous(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("open", e.alice, "x-amz-acl", "public-read-write")
	if r := e.post("/open", [][2]string{{"key", "anon.txt"}, {"acl", "public-read"}}, "a", "anon"); r.status != 204 {
		t.Fatalf("anonymous POST: %d\n%s", r.status, r.body)
	}
	if g := e.must(200, mpReq{method: "GET", path: "/open/anon.txt"}); g.body != "anon" {
		t.Fatalf("anonymous object %q", g.body)
	}
}

// TestPostObjectForm: the form's framing. Each bad form is refused with AWS's code
// and stores nothing.
func TestPostObjectForm(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("open", e.alice, "x-amz-acl", "public-read-write")
	good, ct := formBody([][2]string{{"key", "k"}, {"acl", "public-read"}}, "f", "data")
	boundary := ct[strings.Index(ct, "boundary=")+len("boundary="):]
	many := make([][2]string, 0, 130)
	for i := range 129 {
		many = append(many, [2]string{fmt.Sprint("x-ignore-", i), "v"})
	}
	manyBody, manyCT := formBody(append([][2]string{{"key", "k"}}, many...), "f", "data")
	bigBody, bigCT := formBody([][2]string{{"key", "k"}, {"x-ignore-big", strings.Repeat("x", 65<<10)}}, "f", "data")
	noFile := strings.Replace(good, `name="file"`, `name="notfile"`, 1)
	after := strings.TrimSuffix(good, "--"+boundary+"--\r\n") + "--" + boundary + "\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--" + boundary + "--\r\n"
	tests := []struct {
		name, body, ct string
		status         int
		code           s3.Code
	}{
		{"ok", good, ct, 204, ""},
		{"not multipart", "key=k", "application/x-www-form-urlencoded", 412, s3.PreconditionFailed},
		{"no boundary", good, "multipart/form-data", 400, s3.MalformedPOSTRequest},
		{"other boundary", good, "multipart/form-data; boundary=zzz", 400, s3.MalformedPOSTRequest},
		{"no file", noFile, ct, 400, s3.InvalidArgument},
		{"field after the file", after, ct, 400, s3.MalformedPOSTRequest},
		{"no closing delimiter", strings.TrimSuffix(good, "--\r\n") + "\r\n", ct, 400, s3.MalformedPOSTRequest},
		{"truncated", good[:len(good)/2], ct, 400, s3.MalformedPOSTRequest},
		{"too many fields", manyBody, manyCT, 400, s3.MalformedPOSTRequest},
		{"fields too large", bigBody, bigCT, 400, s3.MalformedPOSTRequest},
		{"bad part header", strings.Replace(good, "Content-Disposition: form-data", "Content-Disposition form-data", 1), ct, 400, s3.MalformedPOSTRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(mpReq{method: "POST", path: "/open", header: map[string]string{"Content-Type": tt.ct}, body: tt.body})
			if r.status != tt.status || tt.code != "" && !strings.Contains(r.body, "<Code>"+string(tt.code)+"</Code>") {
				t.Fatalf("%d, want %d %s\n%s", r.status, tt.status, tt.code, r.body)
			}
			stored := e.do(mpReq{method: "HEAD", path: "/open/k"}).status == 200
			if stored != (tt.status < 300) {
				t.Fatalf("stored %v after %d", stored, r.status)
			}
			e.do(mpReq{method: "DELETE", path: "/open/k", as: e.alice})
		})
	}
	r := e.do(mpReq{method: "POST", path: "/open", header: map[string]string{"Content-Type": ct}, body: good, noLength: true})
	if r.status != 411 {
		t.Errorf("without Content-Length: %d\n%s", r.status, r.body)
	}
}

// TestPostObjectPolicyKeys: bucket-policy conditions see a form upload's acl field
// (s3:x-amz-acl) and its signer's s3:authType "POST".
func TestPostObjectPolicyKeys(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("keyed", e.alice)
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject",` +
		`"Resource":"arn:aws:s3:::keyed/*","Condition":{"StringEquals":{"s3:x-amz-acl":"public-read"}}},` +
		`{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::keyed/post-only/*",` +
		`"Condition":{"StringNotEquals":{"s3:authType":"POST"}}}]}`
	e.must(204, mpReq{method: "PUT", path: "/keyed", query: "policy", as: e.alice, body: policy})
	exp := time.Now().Add(time.Hour)
	form := func(key, acl string) [][2]string {
		return signedForm(e.alice, false, exp, []any{map[string]string{"bucket": "keyed"}, map[string]string{"key": key},
			map[string]string{"acl": acl}}, [2]string{"key", key}, [2]string{"acl", acl})
	}
	if r := e.post("/keyed", form("k", "public-read"), "f", "x"); r.status != 403 {
		t.Fatalf("acl public-read denied by the policy: %d\n%s", r.status, r.body)
	}
	if r := e.post("/keyed", form("post-only/k", "private"), "f", "x"); r.status != 204 {
		t.Fatalf("a POST where only POST may write: %d\n%s", r.status, r.body)
	}
	e.must(403, mpReq{method: "PUT", path: "/keyed/post-only/k2", as: e.alice, body: "x"})
}
