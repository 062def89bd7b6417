package sig

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"sort"
	"strings"
)

// subResourcesV2 are the query parameters that enter the V2 canonical resource
// (s3-details.md §2.1); other parameters are not signed.
var subResourcesV2 = setOf(
	// AWS's documented list.
	"acl", "lifecycle", "location", "logging", "notification", "partNumber", "policy",
	"requestPayment", "torrent", "uploadId", "uploads", "versionId", "versioning", "versions",
	"website",
	// Multi-object delete, CORS, restore, tagging.
	"delete", "cors", "restore", "tagging",
	// GET response header overrides.
	"response-content-type", "response-content-language", "response-expires",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	// What botocore also signs.
	"accelerate", "analytics", "inventory", "metrics", "object-lock", "replication", "select",
	"select-type", "storageClass", "defaultObjectAcl",
	// What minio-go also signs.
	"encryption", "legal-hold", "retention",
)

// minioSubResourcesV2 are the query parameters minio-go (v7) signs in V2: not the ones
// only botocore signs, "object-lock" among them, so a minio-go request naming one is
// checked against this form too (ResourceCandidatesV2).
var minioSubResourcesV2 = setOf(
	"acl", "cors", "delete", "encryption", "legal-hold", "lifecycle", "location", "logging",
	"notification", "partNumber", "policy", "replication", "requestPayment",
	"response-cache-control", "response-content-disposition", "response-content-encoding",
	"response-content-language", "response-content-type", "response-expires", "retention",
	"select", "select-type", "tagging", "torrent", "uploadId", "uploads", "versionId",
	"versioning", "versions", "website",
)

func setOf(names ...string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// SignV2 returns the V2 signature of stringToSign: Base64(HMAC-SHA1(secret, stringToSign)).
func SignV2(secret, stringToSign string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// StringToSignV2 returns the V2 string to sign of req with dateValue in the date position
// (the Date header, "" when x-amz-date is sent, or Expires for a presigned URL) and
// resource as the canonicalized resource (normally CanonicalResourceV2(req)).
func StringToSignV2(req *Request, dateValue, resource string) string {
	var b strings.Builder
	b.WriteString(req.Method)
	b.WriteByte('\n')
	b.WriteString(firstHeader(req.Header, "Content-Md5"))
	b.WriteByte('\n')
	b.WriteString(firstHeader(req.Header, "Content-Type"))
	b.WriteByte('\n')
	b.WriteString(dateValue)
	b.WriteByte('\n')
	b.WriteString(CanonicalAmzHeadersV2(req.Header))
	b.WriteString(resource)
	return b.String()
}

// CanonicalAmzHeadersV2 renders the x-amz-* headers of h for V2: names lower-cased and
// sorted, each value trimmed with folded line breaks made one space, repeated headers joined
// by ",", one "name:value\n" line per header.
func CanonicalAmzHeadersV2(h map[string][]string) string {
	idx := indexHeaders(h)
	var b strings.Builder
	for _, name := range idx.names() {
		if !strings.HasPrefix(name, "x-amz-") {
			continue
		}
		vs := idx[name]
		clean := make([]string, len(vs))
		for i, v := range vs {
			clean[i] = unfold(v)
		}
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(strings.Join(clean, ","))
		b.WriteByte('\n')
	}
	return b.String()
}

// unfold trims v and replaces each line break, with the whitespace around it, by one space.
func unfold(v string) string {
	v = strings.TrimSpace(v)
	if !strings.ContainsAny(v, "\r\n") {
		return v
	}
	lines := strings.FieldsFunc(v, func(r rune) bool { return r == '\r' || r == '\n' })
	for i := range lines {
		lines[i] = strings.Trim(lines[i], " \t")
	}
	return strings.Join(lines, " ")
}

// CanonicalResourceV2 returns the V2 canonicalized resource of req: "/" + bucket + path in
// host style, the path as sent in path style, then the sub-resources.
func CanonicalResourceV2(req *Request) string {
	return resourcePathV2(req) + SubResourceStringV2(req.RawQuery)
}

// resourcePathV2 is the path part of the canonicalized resource.
func resourcePathV2(req *Request) string {
	path := req.RawPath
	if path == "" {
		path = "/"
	}
	if req.HostBucket != "" {
		return "/" + req.HostBucket + path
	}
	return path
}

// SubResourceStringV2 returns the sub-resource part of the V2 canonicalized resource of a
// raw query: "" when there are none, else "?" and the sub-resources sorted by name, joined
// by "&", each "name" when it has no value and "name=value" (value URL-decoded) otherwise.
func SubResourceStringV2(rawQuery string) string {
	return subResourceString(rawQuery, subResourcesV2)
}

// subResourceString is SubResourceStringV2 with the sub-resources of set.
func subResourceString(rawQuery string, set map[string]bool) string {
	var subs []param
	for _, p := range parseQuery(rawQuery) {
		if set[p.name] {
			subs = append(subs, p)
		}
	}
	if len(subs) == 0 {
		return ""
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].name < subs[j].name })
	parts := make([]string, len(subs))
	for i, p := range subs {
		parts[i] = p.name
		if p.value != "" {
			parts[i] += "=" + p.value
		}
	}
	return "?" + strings.Join(parts, "&")
}

// ParseAuthorizationV2 parses "AWS <AccessKeyId>:<Signature>". A header that does not
// have that shape is an InvalidArgument *s3types.Error.
func ParseAuthorizationV2(v string) (keyID, signature string, err error) {
	rest, ok := strings.CutPrefix(v, schemeV2+" ")
	if !ok {
		return "", "", errInvalidArgument(msgV2Header)
	}
	rest = strings.TrimSpace(rest)
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", errInvalidArgument(msgV2Header)
	}
	return rest[:i], rest[i+1:], nil
}
