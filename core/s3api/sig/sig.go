package sig

import (
	"crypto/hmac"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Request is what authentication needs of an HTTP request; core/s3api fills it from the
// *http.Request.
type Request struct {
	Method string
	// Host is the Host header as sent, with the port if any (r.Host).
	Host string
	// RawPath is the path as sent, still percent-encoded. V2 signs it byte for byte, so it
	// should come from the request line (the path part of r.RequestURI) rather than be
	// re-encoded.
	RawPath string
	// RawQuery is the query as sent, without the "?".
	RawQuery string
	// Header holds the request headers under canonical MIME keys, as net/http gives them.
	// It must still contain Content-Length, Content-MD5 and Content-Type when sent.
	Header map[string][]string
	// HostBucket is the bucket named by the Host header in host-style addressing, "" in
	// path style.
	HostBucket string
	// TransferEncoding is the transfer coding the client sent (r.TransferEncoding):
	// net/http moves Transfer-Encoding out of the header, and a V4 signature may cover
	// it (SDKs streaming a body of unknown length sign "transfer-encoding: chunked").
	TransferEncoding []string
	// ContentLength is the body length the client declared (r.ContentLength; -1 or 0
	// when unknown or none), signed as content-length when Header lacks it.
	ContentLength int64
}

// Result says who signed a request and how.
type Result struct {
	// KeyID is the access key id that signed the request, "" for an anonymous request.
	KeyID string
	// Version is 0 for an anonymous request, else 2 or 4.
	Version int
	// Presigned is true for query-string (presigned URL) authentication.
	Presigned bool
	// Time is the request time the signature covers (Date, x-amz-date or X-Amz-Date);
	// zero for anonymous and presigned V2 requests.
	Time time.Time
	// Expires is when a presigned URL stops being valid; zero otherwise.
	Expires time.Time

	// PayloadHash is, for V4, what the signature says of the body: the x-amz-content-sha256
	// value (UNSIGNED-PAYLOAD, a hex SHA-256 digest, or a STREAMING-… value), and
	// UNSIGNED-PAYLOAD for a presigned URL that names none. Empty for V2.
	PayloadHash string

	// V4 signing details, kept so an aws-chunked body's chunk signatures can be checked
	// (SignChunkV4): the derived signing key, the credential scope
	// (date/region/s3/aws4_request), the timestamp that was signed, and the verified
	// request signature that seeds the chunk chain.
	SigningKey    []byte
	Region        string
	Scope         string
	AmzDate       string
	SeedSignature string
}

// Lookup returns the secret of an access key id; a *s3types.Error with code InvalidAccessKeyId
// when the key is unknown or disabled. Other errors are passed on, wrapped.
type Lookup func(keyID string) (secret string, err error)

// AlgorithmV4 is the V4 Authorization scheme and X-Amz-Algorithm value.
const AlgorithmV4 = "AWS4-HMAC-SHA256"

// The other Authorization schemes S3 clients send.
const (
	schemeV2  = "AWS"
	schemeV4A = "AWS4-ECDSA-P256-SHA256" // SigV4a: refused as an unsupported mechanism
)

// Verify authenticates req at time now. A request without an Authorization header and
// without query-string authentication parameters is anonymous: a zero Result and nil.
// Otherwise it returns who signed it, or an error: an *s3types.Error (a *SignatureError for a
// mismatched signature) for anything the client got wrong, any other error only when lookup
// fails for another reason. Verify does not look at the body; see NewPayloadVerifier.
func Verify(req *Request, lookup Lookup, now time.Time) (Result, error) {
	auth := firstHeader(req.Header, "Authorization")
	query := parseQuery(req.RawQuery)
	kind := queryAuthKind(query)
	switch {
	case auth == "" && kind == queryAuthNone:
		return Result{}, nil
	case auth != "" && kind != queryAuthNone:
		return Result{}, errInvalidArgument(msgOneMechanism)
	case auth != "":
		return verifyHeader(req, auth, lookup, now)
	case kind == queryAuthV4:
		return verifyPresignedV4(req, query, lookup, now)
	default:
		return verifyPresignedV2(req, query, lookup, now)
	}
}

// verifyHeader dispatches on the Authorization scheme.
func verifyHeader(req *Request, auth string, lookup Lookup, now time.Time) (Result, error) {
	scheme, _, _ := strings.Cut(auth, " ")
	switch scheme {
	case schemeV2:
		return verifyHeaderV2(req, auth, lookup, now)
	case AlgorithmV4:
		return verifyHeaderV4(req, auth, lookup, now)
	case schemeV4A:
		return Result{}, &s3types.Error{Code: s3types.InvalidRequest, Message: msgMechanism}
	default:
		return Result{}, errInvalidArgument(msgUnsupported)
	}
}

type queryAuth int

const (
	queryAuthNone queryAuth = iota
	queryAuthV2
	queryAuthV4
)

// queryAuthKind tells which presigned-URL form, if any, the query carries.
func queryAuthKind(query []param) queryAuth {
	for _, name := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"} {
		if _, ok := lookupParam(query, name); ok {
			return queryAuthV4
		}
	}
	for _, name := range []string{"AWSAccessKeyId", "Signature"} {
		if _, ok := lookupParam(query, name); ok {
			return queryAuthV2
		}
	}
	return queryAuthNone
}

// equalSignature compares two signatures in constant time.
func equalSignature(computed, provided string) bool {
	return hmac.Equal([]byte(computed), []byte(provided))
}
