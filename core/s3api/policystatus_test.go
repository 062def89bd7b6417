package s3api

import (
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
)

// TestPolicyStatusHTTP: GET ?policyStatus answers S3's PolicyStatus document, 404
// NoSuchBucketPolicy without a policy, 405 to other methods.
func TestPolicyStatusHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("pub", e.alice)
	e.mustErr(404, s3.NoSuchBucketPolicy, mpReq{method: "GET", path: "/pub", query: "policyStatus", as: e.alice})
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pub/*"}]}`
	e.must(204, mpReq{method: "PUT", path: "/pub", query: "policy", body: doc, as: e.alice})
	r := e.must(200, mpReq{method: "GET", path: "/pub", query: "policyStatus", as: e.alice})
	if !strings.Contains(r.body, "<PolicyStatus") || !strings.Contains(r.body, "<IsPublic>true</IsPublic>") {
		t.Fatalf("public policy: %s", r.body)
	}
	doc = strings.Replace(doc, `"Effect":"Allow","Principal":"*"`, `"Effect":"Allow","Principal":"*","Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}`, 1)
	e.must(204, mpReq{method: "PUT", path: "/pub", query: "policy", body: doc, as: e.alice})
	if r := e.must(200, mpReq{method: "GET", path: "/pub", query: "policyStatus", as: e.alice}); !strings.Contains(r.body, "<IsPublic>false</IsPublic>") {
		t.Fatalf("policy for one network: %s", r.body)
	}
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "PUT", path: "/pub", query: "policyStatus", as: e.alice})
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "DELETE", path: "/pub", query: "policyStatus", as: e.alice})
}
