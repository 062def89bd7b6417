package s3api

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestUnserved: a sub-resource AWS defines and Cairn does not serve on the target, or an
// encryption header Cairn cannot honour on the method, is named; served sub-resources,
// versionId=null and parameters that are not sub-resources are not.
func TestUnserved(t *testing.T) {
	tests := []struct {
		method, key, query string
		header             string
		want               string
	}{
		{"GET", "k", "attributes", "", "?attributes"},
		{"GET", "k", "acl", "", ""},
		{"GET", "k", "versionId=null", "", ""},
		{"GET", "k", "versionId=abc", "", ""}, // served: the handler refuses a malformed id
		{"GET", "", "versions", "", ""},
		{"GET", "k", "x-id=GetObject&foo", "", ""},
		{"GET", "k", "location", "", "?location"},
		{"GET", "", "location", "", ""},
		{"GET", "", "versioning", "", ""},
		{"GET", "", "tagging", "", ""},
		{"PUT", "k", "tagging", "", ""},
		{"GET", "", "website", "", "?website"},
		{"GET", "", "policyStatus", "", ""},
		{"GET", "k", "policyStatus", "", "?policyStatus"},
		{"POST", "", "delete", "", ""},
		{"POST", "k", "delete", "", "?delete"},
		{"PUT", "k", "uploadId=u&partNumber=1", "", ""},
		{"GET", "", "list-type=2&ownershipControls", "", "?ownershipControls"},
		{"GET", "", "encryption", "", ""},
		{"GET", "k", "encryption", "", "?encryption"},
		{"PUT", "k", "", "X-Amz-Server-Side-Encryption", ""}, // SSE-S3: served
		{"POST", "k", "uploads", "X-Obj-Server-Side-Encryption-Aws-Kms-Key-Id", "x-obj-server-side-encryption-aws-kms-key-id"},
		{"PUT", "k", "", "X-Amz-Server-Side-Encryption-Context", "x-amz-server-side-encryption-context"},
		{"PUT", "k", "", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key", ""}, // SSE-C: served
		{"GET", "k", "", "X-Amz-Server-Side-Encryption-Customer-Key-Md5", ""},
		{"GET", "k", "", "X-Amz-Server-Side-Encryption", ""}, // SSE-S3 on reads: nothing to decrypt
		{"PUT", "", "", "X-Amz-Server-Side-Encryption", ""},  // bucket requests: no object stored
		{"DELETE", "k", "", "X-Amz-Server-Side-Encryption-Customer-Key", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.key+"?"+tt.query+" "+tt.header, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/b/"+tt.key+"?"+tt.query, nil)
			if tt.header != "" {
				r.Header.Set(tt.header, "v")
			}
			q, _ := url.ParseQuery(tt.query)
			c := &call{r: r, w: httptest.NewRecorder(), bucket: "b", key: tt.key, query: q}
			got := c.unservedSubResource()
			if got != "" {
				got = "?" + got
			} else {
				got = c.unservedHeader()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
