package s3api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestNamesFor checks which vendor names a request is answered in: AWS's for a request
// in AWS's names or signed by an AWS scheme, the spec's for one in the spec's names, the
// configured dialect for one with no hint.
func TestNamesFor(t *testing.T) {
	v4 := "AWS4-HMAC-SHA256 Credential=AK/20261126/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00"
	tests := []struct {
		name    string
		dialect string
		query   string
		headers map[string]string
		want    *vendorNames
	}{
		{"no hint: store", "store", "", nil, objNames},
		{"no hint: riak", "riak", "", nil, amzNames},
		{"no hint: unset", "", "acl", map[string]string{"Content-Type": "text/plain"}, objNames},
		{"signature V4", "store", "", map[string]string{"Authorization": v4}, amzNames},
		{"signature V2", "store", "", map[string]string{"Authorization": "AWS AK:c2ln"}, amzNames},
		{"presigned V4", "store", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK", nil, amzNames},
		{"presigned V2", "store", "AWSAccessKeyId=AK&Expires=1&Signature=s", nil, amzNames},
		{"x-amz header", "store", "", map[string]string{"X-Amz-Meta-Color": "red"}, amzNames},
		{"x-amz-date alone", "store", "", map[string]string{"x-amz-date": "20261126T000000Z"}, amzNames},
		{"x-obj header", "riak", "", map[string]string{"X-Obj-Meta-Color": "red"}, objNames},
		{"x-obj header, V2 signed (the spec's client)", "riak", "",
			map[string]string{"X-Obj-Acl": "public-read", "Authorization": "AWS AK:c2ln"}, objNames},
		{"x-obj and x-amz headers", "store", "", map[string]string{"X-Obj-Acl": "private", "X-Amz-Date": "d"}, amzNames},
		{"x-obj header, V4 signed", "store", "", map[string]string{"X-Obj-Meta-A": "1", "Authorization": v4}, amzNames},
		{"look-alike header", "store", "", map[string]string{"X-Amzn-Trace-Id": "1", "X-Objective": "1"}, objNames},
		{"other scheme", "store", "", map[string]string{"Authorization": "Bearer x"}, objNames},
	}
	for _, tt := range tests {
		a := New(nil, Config{Dialect: tt.dialect, Logger: slog.New(slog.DiscardHandler)})
		r := httptest.NewRequest(http.MethodGet, "/b/k?"+tt.query, nil)
		for k, v := range tt.headers {
			r.Header[k] = []string{v}
		}
		q, _ := url.ParseQuery(tt.query)
		if got := a.namesFor(r, q); got != tt.want {
			t.Errorf("%s: names %q, want %q", tt.name, got.prefix, tt.want.prefix)
		}
	}
}
