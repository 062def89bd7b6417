package s3api

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

func TestConditionKeys(t *testing.T) {
	user := &s3.User{ID: "c0ffee", Name: "Alice"}
	tests := []struct {
		name   string
		method string
		target string
		h      map[string]string
		user   *s3.User
		auth   authResult
		list   bool
		want   map[string]string
	}{
		{"anonymous, nothing", http.MethodGet, "/b/k", nil, nil, authResult{}, false, map[string]string{}},
		{"headers", http.MethodGet, "/b/k", map[string]string{"Referer": "http://r/", "User-Agent": "ua"}, nil, authResult{}, false,
			map[string]string{s3.CondReferer: "http://r/", s3.CondUserAgent: "ua"}},
		{"v2 header", http.MethodGet, "/b/k", nil, user, authResult{KeyID: "k", Version: 2}, false,
			map[string]string{s3.CondUsername: "Alice", s3.CondUserID: "c0ffee", s3.CondSignatureVersion: "AWS", s3.CondAuthType: "REST-HEADER"}},
		{"v4 presigned", http.MethodGet, "/b/k", nil, user, authResult{KeyID: "k", Version: 4, Presigned: true}, false,
			map[string]string{s3.CondUsername: "Alice", s3.CondUserID: "c0ffee", s3.CondSignatureVersion: "AWS4-HMAC-SHA256", s3.CondAuthType: "REST-QUERY-STRING"}},
		{"user without name", http.MethodGet, "/b/k", nil, &s3.User{ID: "c0ffee"}, authResult{KeyID: "k", Version: 4}, false,
			map[string]string{s3.CondUserID: "c0ffee", s3.CondSignatureVersion: "AWS4-HMAC-SHA256", s3.CondAuthType: "REST-HEADER"}},
		{"canned acl on put", http.MethodPut, "/b/k", map[string]string{"X-Amz-Acl": "public-read"}, nil, authResult{}, false,
			map[string]string{s3.CondACL: "public-read"}},
		{"neutral canned acl", http.MethodPut, "/b/k", map[string]string{"X-Obj-Acl": "private"}, nil, authResult{}, false,
			map[string]string{s3.CondACL: "private"}},
		{"sse on put", http.MethodPut, "/b/k", map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}, nil, authResult{}, false,
			map[string]string{s3.CondSSE: "AES256"}},
		{"sse-c on post", http.MethodPost, "/b/k?uploads", map[string]string{"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256"}, nil, authResult{}, false,
			map[string]string{s3.CondSSECustomerAlgorithm: "AES256"}},
		{"sse on get ignored", http.MethodGet, "/b/k", map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}, nil, authResult{}, false, map[string]string{}},
		{"canned acl on get ignored", http.MethodGet, "/b/k", map[string]string{"X-Amz-Acl": "public-read"}, nil, authResult{}, false, map[string]string{}},
		{"listing", http.MethodGet, "/b?prefix=&delimiter=/&max-keys=7", nil, nil, authResult{}, true,
			map[string]string{s3.CondPrefix: "", s3.CondDelimiter: "/", s3.CondMaxKeys: "7"}},
		{"listing without parameters", http.MethodGet, "/b", nil, nil, authResult{}, true, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			r.Header.Del("User-Agent")
			for k, v := range tt.h {
				r.Header.Set(k, v)
			}
			q, _ := url.ParseQuery(r.URL.RawQuery)
			c := &call{r: r, user: tt.user, auth: tt.auth, query: q}
			c.who.Keys = c.conditionKeys()
			if tt.list {
				c.listKeys()
			}
			if !maps.Equal(c.who.Keys, tt.want) {
				t.Errorf("keys %v, want %v", c.who.Keys, tt.want)
			}
		})
	}
}
