package sig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Payload hash values a V4 request may announce in x-amz-content-sha256 instead of a digest,
// and the digest of an empty body.
const (
	UnsignedPayload              = "UNSIGNED-PAYLOAD"
	StreamingPayload             = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrailer      = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedPayload     = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	StreamingECDSAPayload        = "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD"
	StreamingECDSAPayloadTrailer = "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER"
	EmptySHA256                  = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// MaxPresignExpiry is the longest validity a presigned V4 URL may ask for (X-Amz-Expires).
const MaxPresignExpiry = 7 * 24 * time.Hour

const (
	serviceS3          = "s3"
	terminalV4         = "aws4_request"
	chunkAlgorithmV4   = "AWS4-HMAC-SHA256-PAYLOAD"
	signatureParamV4   = "X-Amz-Signature"
	errCredentialShape = "credential must be <key>/<yyyymmdd>/<region>/<service>/aws4_request"
)

// Credential is a parsed V4 credential: <KeyID>/<Date>/<Region>/<Service>/aws4_request.
type Credential struct {
	KeyID   string
	Date    string // yyyymmdd
	Region  string
	Service string
}

// Scope returns the credential scope, <Date>/<Region>/<Service>/aws4_request.
func (c Credential) Scope() string {
	return c.Date + "/" + c.Region + "/" + c.Service + "/" + terminalV4
}

// String returns the credential as clients send it.
func (c Credential) String() string { return c.KeyID + "/" + c.Scope() }

// ParseCredential parses a Credential / X-Amz-Credential value. The key id may itself
// contain "/"; the last four parts are the scope. The service must be s3 and the date a
// real yyyymmdd date; any region is accepted.
func ParseCredential(v string) (Credential, error) {
	parts := strings.Split(v, "/")
	n := len(parts)
	if n < 5 {
		return Credential{}, errors.New(errCredentialShape)
	}
	c := Credential{KeyID: strings.Join(parts[:n-4], "/"), Date: parts[n-4], Region: parts[n-3], Service: parts[n-2]}
	if c.KeyID == "" || parts[n-1] != terminalV4 {
		return Credential{}, errors.New(errCredentialShape)
	}
	if _, err := time.Parse(scopeDate, c.Date); err != nil || len(c.Date) != len(scopeDate) {
		return Credential{}, errors.New("credential date must be yyyymmdd")
	}
	if c.Service != serviceS3 {
		return Credential{}, errors.New(`credential service must be "s3"`)
	}
	return c, nil
}

// AuthorizationV4 is a parsed V4 Authorization header.
type AuthorizationV4 struct {
	Credential    Credential
	SignedHeaders []string // as sent: lower case (S3 requires it), sorted by the client
	Signature     string
}

// String renders the header value the way botocore does.
func (a AuthorizationV4) String() string {
	return AlgorithmV4 + " Credential=" + a.Credential.String() + ", SignedHeaders=" +
		strings.Join(a.SignedHeaders, ";") + ", Signature=" + a.Signature
}

// ParseAuthorizationV4 parses
// "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…", with or without spaces
// after the commas. A header that does not have that shape is an *s3types.Error with code
// AuthorizationHeaderMalformed.
func ParseAuthorizationV4(v string) (AuthorizationV4, error) {
	rest, ok := strings.CutPrefix(v, AlgorithmV4+" ")
	if !ok {
		return AuthorizationV4{}, errMalformedHeader("expected %s", AlgorithmV4)
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !isAuthFieldV4(name) {
			return AuthorizationV4{}, errMalformedHeader("unexpected element %q", part)
		}
		if _, dup := fields[name]; dup {
			return AuthorizationV4{}, errMalformedHeader("%s given twice", name)
		}
		fields[name] = value
	}
	for _, name := range []string{"Credential", "SignedHeaders", "Signature"} {
		if fields[name] == "" {
			return AuthorizationV4{}, errMalformedHeader("Authorization header requires '%s' parameter.", name)
		}
	}
	cred, err := ParseCredential(fields["Credential"])
	if err != nil {
		return AuthorizationV4{}, errMalformedHeader("%s", msgCredential)
	}
	signed, err := parseSignedHeaders(fields["SignedHeaders"])
	if err != nil {
		return AuthorizationV4{}, errMalformedHeader("%v", err)
	}
	return AuthorizationV4{Credential: cred, SignedHeaders: signed, Signature: fields["Signature"]}, nil
}

func isAuthFieldV4(name string) bool {
	return name == "Credential" || name == "SignedHeaders" || name == "Signature"
}

// parseSignedHeaders splits a SignedHeaders value; every name must be non-empty.
func parseSignedHeaders(v string) ([]string, error) {
	names := strings.Split(v, ";")
	for _, n := range names {
		if n == "" {
			return nil, errors.New("SignedHeaders has an empty name")
		}
	}
	return names, nil
}

// CanonicalURI returns the V4 canonical URI of a raw (percent-encoded) path: each segment
// decoded, then strictly re-encoded; "/" separators kept, no dot-segment normalisation.
// A segment that does not decode is encoded as sent.
func CanonicalURI(rawPath string) string {
	if rawPath == "" {
		return "/"
	}
	segments := strings.Split(rawPath, "/")
	for i, s := range segments {
		if d, err := url.PathUnescape(s); err == nil {
			s = d
		}
		segments[i] = uriEncode(s)
	}
	return strings.Join(segments, "/")
}

// CanonicalQueryV4 returns the V4 canonical query string of a raw query: every parameter
// (for a presigned URL every one but X-Amz-Signature), name and value decoded then strictly
// re-encoded, sorted by name then value, "name=value" joined by "&" (a valueless parameter
// gives "name=").
func CanonicalQueryV4(rawQuery string, presigned bool) string {
	var pairs []string
	for _, p := range parseQuery(rawQuery) {
		if presigned && p.name == signatureParamV4 {
			continue
		}
		pairs = append(pairs, uriEncode(p.name)+"="+uriEncode(p.value))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// CanonicalHeadersV4 returns the canonical headers block for the signed header names: one
// "name:value\n" line each, in the order given. host is req.Host; other values are trimmed
// with inner runs of whitespace collapsed, repeated headers joined by ",".
func CanonicalHeadersV4(req *Request, signed []string) string {
	idx := indexHeaders(req.Header)
	var b strings.Builder
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		vs, ok := idx[name]
		switch {
		case name == "host":
			b.WriteString(strings.TrimSpace(req.Host))
		case ok:
			b.WriteString(canonicalHeaderValue(vs))
		default:
			b.WriteString(movedHeaderValue(req, name))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// movedHeaderValue returns the value of a signed header that net/http took out of the
// header map: Transfer-Encoding (kept in req.TransferEncoding) and Content-Length (in
// req.ContentLength); "" for any other.
func movedHeaderValue(req *Request, name string) string {
	switch {
	case name == "transfer-encoding":
		return canonicalHeaderValue(req.TransferEncoding)
	case name == "content-length" && req.ContentLength > 0:
		return strconv.FormatInt(req.ContentLength, 10)
	}
	return ""
}

// canonicalHeaderValue trims each value, collapses inner runs of whitespace, and joins
// repeated values with ",".
func canonicalHeaderValue(vs []string) string {
	clean := make([]string, len(vs))
	for i, v := range vs {
		clean[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(clean, ",")
}

// CanonicalRequestV4 returns the V4 canonical request of req.
func CanonicalRequestV4(req *Request, signed []string, payloadHash string, presigned bool) string {
	return strings.Join([]string{
		req.Method,
		CanonicalURI(req.RawPath),
		CanonicalQueryV4(req.RawQuery, presigned),
		CanonicalHeadersV4(req, signed),
		strings.Join(signed, ";"),
		payloadHash,
	}, "\n")
}

// StringToSignV4 returns the V4 string to sign of a canonical request.
func StringToSignV4(amzDate, scope, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return AlgorithmV4 + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// SigningKeyV4 derives the V4 signing key of a secret for a date (yyyymmdd), region and
// service.
func SigningKeyV4(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, terminalV4)
}

// SignV4 returns the hex V4 signature of stringToSign under signingKey.
func SignV4(signingKey []byte, stringToSign string) string {
	return hex.EncodeToString(hmacSHA256(signingKey, stringToSign))
}

// SignChunkV4 returns the signature of one aws-chunked chunk: previous is the signature of
// the chunk before (the request's seed signature for the first), chunkSHA256 the hex
// SHA-256 of the chunk's data (of nothing for the final, empty chunk).
func SignChunkV4(signingKey []byte, amzDate, scope, previous, chunkSHA256 string) string {
	sts := chunkAlgorithmV4 + "\n" + amzDate + "\n" + scope + "\n" + previous + "\n" +
		EmptySHA256 + "\n" + chunkSHA256
	return SignV4(signingKey, sts)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
