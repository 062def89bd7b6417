package sig

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The signing side, for tests here and in other packages: each helper signs a Request the
// way a client would, so Verify can be exercised without a real client.

// SignRequestV2 signs req in place with V2 header authentication at time t: it sets the Date
// header (unless a Date or x-amz-date header is already there) and Authorization.
func SignRequestV2(req *Request, keyID, secret string, t time.Time) {
	ensureHeader(req)
	delete(req.Header, "Authorization")
	if !hasHeader(req.Header, "Date") && !hasHeader(req.Header, "X-Amz-Date") {
		req.Header["Date"] = []string{t.UTC().Format(httpTimeFormat)}
	}
	sts := StringToSignV2(req, dateValuesV2(req.Header)[0], CanonicalResourceV2(req))
	req.Header["Authorization"] = []string{schemeV2 + " " + keyID + ":" + SignV2(secret, sts)}
}

// PresignV2 turns req into a presigned V2 URL valid until expires: it appends
// AWSAccessKeyId, Expires and Signature to req.RawQuery.
func PresignV2(req *Request, keyID, secret string, expires time.Time) {
	exp := strconv.FormatInt(expires.Unix(), 10)
	sts := StringToSignV2(req, exp, CanonicalResourceV2(req))
	req.RawQuery = appendQuery(req.RawQuery,
		"AWSAccessKeyId="+url.QueryEscape(keyID),
		"Expires="+exp,
		"Signature="+url.QueryEscape(SignV2(secret, sts)))
}

// SignRequestV4 signs req in place with V4 header authentication at time t for region: it
// sets X-Amz-Date, X-Amz-Content-Sha256 (payloadHash: UnsignedPayload, a STREAMING-… value
// or the body's hex SHA-256) and Authorization, signing host, Content-MD5, Content-Type and
// every x-amz-* header present.
func SignRequestV4(req *Request, keyID, secret, region string, t time.Time, payloadHash string) {
	ensureHeader(req)
	delete(req.Header, "Authorization")
	amzDate := t.UTC().Format(ISO8601Basic)
	req.Header["X-Amz-Date"] = []string{amzDate}
	req.Header["X-Amz-Content-Sha256"] = []string{payloadHash}
	cred := Credential{KeyID: keyID, Date: t.UTC().Format(scopeDate), Region: region, Service: serviceS3}
	signed := headersToSignV4(req.Header)
	key := SigningKeyV4(secret, cred.Date, cred.Region, cred.Service)
	sts := StringToSignV4(amzDate, cred.Scope(), CanonicalRequestV4(req, signed, payloadHash, false))
	auth := AuthorizationV4{Credential: cred, SignedHeaders: signed, Signature: SignV4(key, sts)}
	req.Header["Authorization"] = []string{auth.String()}
}

// PresignV4 turns req into a presigned V4 URL made at t for region and valid for expires:
// it appends the X-Amz-* parameters to req.RawQuery, signing the host header only.
func PresignV4(req *Request, keyID, secret, region string, t time.Time, expires time.Duration) {
	amzDate := t.UTC().Format(ISO8601Basic)
	cred := Credential{KeyID: keyID, Date: t.UTC().Format(scopeDate), Region: region, Service: serviceS3}
	req.RawQuery = appendQuery(req.RawQuery,
		"X-Amz-Algorithm="+AlgorithmV4,
		"X-Amz-Credential="+uriEncode(cred.String()),
		"X-Amz-Date="+amzDate,
		"X-Amz-Expires="+strconv.FormatInt(int64(expires/time.Second), 10),
		"X-Amz-SignedHeaders=host")
	key := SigningKeyV4(secret, cred.Date, cred.Region, cred.Service)
	signed := []string{"host"}
	sts := StringToSignV4(amzDate, cred.Scope(), CanonicalRequestV4(req, signed, UnsignedPayload, true))
	req.RawQuery = appendQuery(req.RawQuery, signatureParamV4+"="+SignV4(key, sts))
}

// headersToSignV4 is host plus Content-MD5, Content-Type and the x-amz-* headers present,
// sorted.
func headersToSignV4(h map[string][]string) []string {
	signed := []string{"host"}
	for _, name := range indexHeaders(h).names() {
		if name == "content-md5" || name == "content-type" || strings.HasPrefix(name, "x-amz-") {
			signed = append(signed, name)
		}
	}
	sort.Strings(signed)
	return signed
}

func ensureHeader(req *Request) {
	if req.Header == nil {
		req.Header = map[string][]string{}
	}
}

func appendQuery(raw string, parts ...string) string {
	if raw != "" {
		parts = append([]string{raw}, parts...)
	}
	return strings.Join(parts, "&")
}
