package s3api

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3"
)

// anyValue is the policy condition that lets a field take any value.
func anyValue(field string) []string { return []string{"starts-with", "$" + field, ""} }

// sseCFields returns the SSE-C form fields of a key of 32 bytes seed (named as the
// headers are: field names are read ignoring case).
func sseCFields(seed byte) [][2]string {
	var out [][2]string
	for k, v := range sseC("", seed) {
		out = append(out, [2]string{k, v})
	}
	return out
}

// TestPostObjectSSE: a form's x-amz-server-side-encryption field stores the object
// SSE-S3 and its SSE-C fields SSE-C (GET without the key refused, with it the data);
// the answer echoes both; the same parameters as request headers change nothing (the
// object is stored in clear, not refused), aws:kms and a bad SSE-C key are refused.
func TestPostObjectSSE(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("psse", e.alice)
	exp := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "psse"}, anyValue("key"), anyValue("x-amz-server-side-encryption"),
		anyValue("x-amz-server-side-encryption-customer-algorithm"), anyValue("x-amz-server-side-encryption-customer-key"),
		anyValue("x-amz-server-side-encryption-customer-key-md5"), anyValue("x-amz-server-side-encryption-aws-kms-key-id")}
	form := func(key string, extra ...[2]string) [][2]string {
		return signedForm(e.alice, false, exp, conds, append([][2]string{{"key", key}}, extra...)...)
	}

	r := e.post("/psse", form("s3", [2]string{"x-amz-server-side-encryption", "AES256"}), "f", "sealed by the server")
	if r.status != 204 || r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("SSE-S3 form: %d %v\n%s", r.status, r.header, r.body)
	}
	if h := e.must(200, mpReq{method: "HEAD", path: "/psse/s3", as: e.alice}); h.header.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("SSE-S3 form object: %v", h.header)
	}

	r = e.post("/psse", form("c", sseCFields(9)...), "f", "customer secret")
	key := sseC("", 9)
	if r.status != 204 || r.header.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != key["X-Amz-Server-Side-Encryption-Customer-Key-MD5"] {
		t.Fatalf("SSE-C form: %d %v\n%s", r.status, r.header, r.body)
	}
	e.mustErr(400, s3.InvalidRequest, mpReq{method: "GET", path: "/psse/c", as: e.alice})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/psse/c", as: e.alice, header: sseC("", 8)})
	if g := e.must(200, mpReq{method: "GET", path: "/psse/c", as: e.alice, header: key}); g.body != "customer secret" {
		t.Fatalf("SSE-C form object read with its key: %q", g.body)
	}

	// Headers on a POST object say nothing of the stored object.
	body, ct := formBody(form("hdr"), "f", "clear")
	r = e.do(mpReq{method: "POST", path: "/psse", body: body, header: map[string]string{"Content-Type": ct, "X-Amz-Server-Side-Encryption": "AES256"}})
	if r.status != 204 || r.header.Get("X-Amz-Server-Side-Encryption") != "" {
		t.Fatalf("SSE header on a POST: %d %v", r.status, r.header)
	}

	bad := sseCFields(9)
	for i := range bad {
		if strings.HasSuffix(bad[i][0], "-Key") {
			bad[i][1] = base64.StdEncoding.EncodeToString(make([]byte, 16))
		}
	}
	for _, c := range []struct {
		name   string
		fields [][2]string
		status int
		code   s3.Code
	}{
		{"aws:kms", [][2]string{{"x-amz-server-side-encryption", "aws:kms"}}, 501, s3.NotImplemented},
		{"kms key id", [][2]string{{"x-amz-server-side-encryption-aws-kms-key-id", "k"}}, 501, s3.NotImplemented},
		{"other algorithm", [][2]string{{"x-amz-server-side-encryption", "AES128"}}, 400, s3.InvalidArgument},
		{"short SSE-C key", bad, 400, s3.InvalidArgument},
		{"SSE-S3 and SSE-C", append(sseCFields(9), [2]string{"x-amz-server-side-encryption", "AES256"}), 400, s3.InvalidArgument},
	} {
		r := e.post("/psse", form("refused", c.fields...), "f", "x")
		if r.status != c.status || !strings.Contains(r.body, "<Code>"+string(c.code)+"</Code>") {
			t.Errorf("%s: %d\n%s", c.name, r.status, r.body)
		}
	}
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "HEAD", path: "/psse/refused", as: e.alice})
}

// TestPostObjectSSEPolicyKeys: a bucket policy denying uploads without
// s3:x-amz-server-side-encryption refuses a form that only carries the header, and
// lets through one with the field; the SSE fields must be covered by the form's own
// policy (403 "Extra input fields").
func TestPostObjectSSEPolicyKeys(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("pkeys", e.alice)
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutObject",` +
		`"Resource":"arn:aws:s3:::pkeys/*","Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}}]}`
	e.must(204, mpReq{method: "PUT", path: "/pkeys", query: "policy", as: e.alice, body: policy})
	exp := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "pkeys"}, anyValue("key"), anyValue("x-amz-server-side-encryption")}
	plain := signedForm(e.alice, false, exp, conds, [2]string{"key", "k"})
	body, ct := formBody(plain, "f", "clear")
	r := e.do(mpReq{method: "POST", path: "/pkeys", body: body, header: map[string]string{"Content-Type": ct, "X-Amz-Server-Side-Encryption": "AES256"}})
	if r.status != 403 {
		t.Fatalf("unencrypted form with the SSE header: %d\n%s", r.status, r.body)
	}
	sealed := signedForm(e.alice, false, exp, conds, [2]string{"key", "k"}, [2]string{"x-amz-server-side-encryption", "AES256"})
	if r := e.post("/pkeys", sealed, "f", "sealed"); r.status != 204 {
		t.Fatalf("SSE-S3 form under a deny-unencrypted policy: %d\n%s", r.status, r.body)
	}
	uncovered := signedForm(e.alice, false, exp, conds[:2], [2]string{"key", "k"}, [2]string{"x-amz-server-side-encryption", "AES256"})
	if r := e.post("/pkeys", uncovered, "f", "sealed"); r.status != 403 || !strings.Contains(r.body, "Extra input fields: x-amz-server-side-encryption") {
		t.Fatalf("SSE field the form's policy does not cover: %d\n%s", r.status, r.body)
	}
}

// TestPostObjectContentType: the file part's own type is never stored (text/html chosen
// by the uploader would be served as such): without a Content-Type field the object has
// the default type; the field's value is stored, and the policy's condition on it is
// checked against that value.
func TestPostObjectContentType(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("ctype", e.alice)
	exp := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "ctype"}, anyValue("key")}
	body, ct := typedFormBody(signedForm(e.alice, false, exp, conds, [2]string{"key", "x.png"}), "x.png", "text/html", "<script>")
	if r := e.do(mpReq{method: "POST", path: "/ctype", body: body, header: map[string]string{"Content-Type": ct}}); r.status != 204 {
		t.Fatalf("POST: %d\n%s", r.status, r.body)
	}
	if h := e.must(200, mpReq{method: "HEAD", path: "/ctype/x.png", as: e.alice}); h.header.Get("Content-Type") != defaultContentType {
		t.Fatalf("stored Content-Type %q, want %q", h.header.Get("Content-Type"), defaultContentType)
	}
	imgConds := append(conds, []string{"starts-with", "$Content-Type", "image/"})
	img := signedForm(e.alice, false, exp, imgConds, [2]string{"key", "y.png"}, [2]string{"Content-Type", "image/png"})
	body, ct = typedFormBody(img, "y.png", "text/html", "png")
	if r := e.do(mpReq{method: "POST", path: "/ctype", body: body, header: map[string]string{"Content-Type": ct}}); r.status != 204 {
		t.Fatalf("POST with an image Content-Type: %d\n%s", r.status, r.body)
	}
	if h := e.must(200, mpReq{method: "HEAD", path: "/ctype/y.png", as: e.alice}); h.header.Get("Content-Type") != "image/png" {
		t.Fatalf("stored Content-Type %q, want image/png", h.header.Get("Content-Type"))
	}
	html := signedForm(e.alice, false, exp, imgConds, [2]string{"key", "z"}, [2]string{"Content-Type", "text/html"})
	body, ct = typedFormBody(html, "z", "image/png", "<script>")
	if r := e.do(mpReq{method: "POST", path: "/ctype", body: body, header: map[string]string{"Content-Type": ct}}); r.status != 403 {
		t.Fatalf("POST with a text/html Content-Type field under an image/ condition: %d\n%s", r.status, r.body)
	}
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "HEAD", path: "/ctype/z", as: e.alice})
}

// TestPostObjectDigests: the Content-MD5 and x-amz-checksum-* fields are checked as
// the headers of a PUT are: a wrong digest is 400 BadDigest and stores nothing, a
// malformed one 400 InvalidDigest / InvalidRequest, right ones store the file.
func TestPostObjectDigests(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("dig", e.alice)
	exp := time.Now().Add(time.Hour)
	conds := []any{map[string]string{"bucket": "dig"}, anyValue("key"), anyValue("content-md5"), anyValue("x-amz-checksum-sha256")}
	const data = "form file"
	sha := sha256.Sum256([]byte(data))
	otherSHA := sha256.Sum256([]byte("other"))
	otherMD5 := md5.Sum([]byte("other"))
	for _, c := range []struct {
		name   string
		field  [2]string
		status int
		code   s3.Code
	}{
		{"wrong Content-MD5", [2]string{"Content-MD5", base64.StdEncoding.EncodeToString(otherMD5[:])}, 400, s3.BadDigest},
		{"bad Content-MD5", [2]string{"Content-MD5", "not base64"}, 400, s3.InvalidDigest},
		{"wrong sha256", [2]string{"x-amz-checksum-sha256", base64.StdEncoding.EncodeToString(otherSHA[:])}, 400, s3.BadDigest},
		{"bad sha256", [2]string{"x-amz-checksum-sha256", "AAAA"}, 400, s3.InvalidRequest},
		{"right Content-MD5", [2]string{"Content-MD5", md5b64(data)}, 204, ""},
		{"right sha256", [2]string{"x-amz-checksum-sha256", base64.StdEncoding.EncodeToString(sha[:])}, 204, ""},
	} {
		key := strings.ReplaceAll(c.name, " ", "-")
		r := e.post("/dig", signedForm(e.alice, false, exp, conds, [2]string{"key", key}, c.field), "f", data)
		if r.status != c.status || c.code != "" && !strings.Contains(r.body, "<Code>"+string(c.code)+"</Code>") {
			t.Errorf("%s: %d\n%s", c.name, r.status, r.body)
			continue
		}
		want := 404
		if c.status == 204 {
			want = 200
		}
		e.must(want, mpReq{method: "HEAD", path: "/dig/" + key, as: e.alice})
	}
}

// TestPostObjectAnswerHeaders: a form upload's answer says the new version's id, the
// encryption the bucket's default gave the object, and the lifecycle expiration that
// applies to it, as a PUT's does.
func TestPostObjectAnswerHeaders(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("ans", e.alice)
	e.must(200, mpReq{method: "PUT", path: "/ans", query: "versioning", body: enabledDoc, as: e.alice})
	e.must(200, mpReq{method: "PUT", path: "/ans", query: "encryption", as: e.alice,
		body: `<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`})
	e.must(200, mpReq{method: "PUT", path: "/ans", query: "lifecycle", as: e.alice,
		body: lifecycleDoc(`<ID>all</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration>`)})
	exp := time.Now().Add(time.Hour)
	form := signedForm(e.alice, false, exp, []any{map[string]string{"bucket": "ans"}, anyValue("key")}, [2]string{"key", "k"})
	r := e.post("/ans", form, "f", "x")
	vid := r.header.Get("X-Amz-Version-Id")
	if r.status != 204 || vid == "" || vid == "null" || r.header.Get("X-Amz-Server-Side-Encryption") != "AES256" ||
		!strings.Contains(r.header.Get("X-Amz-Expiration"), `rule-id="all"`) {
		t.Fatalf("POST answer: %d %v", r.status, r.header)
	}
	if h := e.must(200, mpReq{method: "HEAD", path: "/ans/k", as: e.alice}); h.header.Get("X-Amz-Version-Id") != vid {
		t.Fatalf("HEAD: version %q, the POST said %q", h.header.Get("X-Amz-Version-Id"), vid)
	}
}
