package s3api

import (
	"net/http"
	"slices"
	"strings"
)

// knownSubResources are the query parameters AWS S3 defines as selecting a bucket or
// object sub-resource (or an operation on one) rather than the resource itself. A
// request naming one that Cairn does not serve on its target answers 501
// NotImplemented, so that a client never mistakes a plain answer (an object's body for
// "?attributes") for the feature it asked for. Other query parameters are ignored, as
// AWS ignores them.
var knownSubResources = []string{"accelerate", "acl", "analytics", "attributes", "cors", "delete",
	"encryption", "intelligent-tiering", "inventory", "legal-hold", "lifecycle", "location", "logging",
	"metadataTable", "metrics", "notification", "object-lock", "ownershipControls", "partNumber", "policy",
	"policyStatus", "publicAccessBlock", "renameObject", "replication", "requestPayment", "restore",
	"retention", "select", "session", "tagging", "torrent", "uploadId", "uploads", "versionId",
	"versioning", "versions", "website"}

// servedSubResources are the sub-resources Cairn serves, per target, on at least one
// method; the dispatchers answer the methods a served sub-resource does not take (405,
// or 501 for MfaDelete in PUT ?versioning). Bucket: GET ?acl ?location ?versioning
// ?versions ?policy ?policyStatus ?uploads ?tagging ?cors ?lifecycle ?encryption
// ?object-lock; PUT ?acl ?policy ?tagging ?versioning ?cors ?lifecycle ?encryption
// ?object-lock; DELETE ?policy ?tagging ?cors ?lifecycle ?encryption; POST ?delete.
// Object: GET ?acl ?uploadId ?tagging ?retention ?legal-hold; PUT ?acl,
// ?partNumber&uploadId, ?tagging ?retention ?legal-hold; POST ?uploads, ?uploadId;
// DELETE ?uploadId ?tagging; ?versionId on GET, HEAD, DELETE, ?acl, ?tagging,
// ?retention and ?legal-hold.
var servedSubResources = map[bool][]string{
	true:  {"acl", "location", "versioning", "policy", "policyStatus", "uploads", "delete", "tagging", "versions", "cors", "lifecycle", "encryption", "object-lock"}, // bucket
	false: {"acl", "uploads", "uploadId", "partNumber", "versionId", "tagging", "retention", "legal-hold"},                                                           // object
}

// unservedSubResource returns the first sub-resource of the request that Cairn does
// not serve on its target (bucket or object), or "".
func (c *call) unservedSubResource() string {
	served := servedSubResources[c.key == ""]
	for _, s := range knownSubResources {
		if !c.has(s) {
			continue
		}
		if !slices.Contains(served, s) {
			return s
		}
	}
	return ""
}

// unservedHeader returns the name, as the request wrote its prefix, of the first
// encryption header an object write (PUT, copy, upload part, POST to initiate or
// complete an upload) carries that Cairn cannot honour, or "": the KMS ones (SSE-S3
// and SSE-C are served, see encryption.go).
func (c *call) unservedHeader() string {
	if c.key == "" {
		return ""
	}
	switch c.r.Method {
	case http.MethodPut, http.MethodPost:
		return c.presentHeader(kmsHeaders)
	}
	return ""
}

// presentHeader returns the lower-case name of the first header of names (after the
// vendor prefix) the request carries under either prefix, even empty, or "".
func (c *call) presentHeader(names []string) string {
	for _, n := range names {
		for _, p := range []string{"x-amz-", "x-obj-"} {
			if _, ok := c.r.Header[http.CanonicalHeaderKey(p+n)]; ok {
				return strings.ToLower(p + n)
			}
		}
	}
	return ""
}

// refuseUnserved answers 501 NotImplemented, naming the sub-resource or header, when
// the request asks for a sub-resource or an encryption Cairn does not serve; it
// reports whether it answered.
func (c *call) refuseUnserved() bool {
	if sub := c.unservedSubResource(); sub != "" {
		c.notImplemented("?" + sub)
		return true
	}
	if h := c.unservedHeader(); h != "" {
		c.notImplemented(h)
		return true
	}
	return false
}
