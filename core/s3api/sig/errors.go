package sig

import (
	"fmt"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// The messages AWS sends with these refusals.
const (
	msgSignature     = "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	msgSkew          = "The difference between the request time and the current time is too large."
	msgNoDate        = "AWS authentication requires a valid Date or x-amz-date header"
	msgExpired       = "Request has expired"
	msgNotYetValid   = "Request is not valid yet"
	msgV2Header      = "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"
	msgUnsupported   = "Unsupported Authorization Type"
	msgMechanism     = "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
	msgOneMechanism  = "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified"
	msgV2Query       = "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters"
	msgV4Query       = "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."
	msgUnsigned      = "There were headers present in the request which were not signed"
	msgMissingSHA256 = "Missing required header for this request: x-amz-content-sha256"
	msgBadSHA256     = "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value."
	msgPayload       = "The provided 'x-amz-content-sha256' header does not match what was computed."
	msgMalformed     = "The authorization header is malformed; "
	msgCredential    = `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`
)

// SignatureError is the error Verify returns when the signature does not match. It unwraps
// to an *s3types.Error with code SignatureDoesNotMatch, so s3types.AsError finds it, and carries the
// details AWS adds to its error body (AWSAccessKeyId, StringToSign, SignatureProvided,
// CanonicalRequest), which make a client's signing bug easy to see. None of them is secret.
type SignatureError struct {
	Err               *s3types.Error
	AccessKeyID       string
	StringToSign      string
	SignatureProvided string
	CanonicalRequest  string // V4 only
}

// Error implements error.
func (e *SignatureError) Error() string { return e.Err.Error() }

// Unwrap returns the *s3types.Error.
func (e *SignatureError) Unwrap() error { return e.Err }

func errSignature(keyID, stringToSign, provided, canonical string) error {
	return &SignatureError{
		Err:               &s3types.Error{Code: s3types.SignatureDoesNotMatch, Message: msgSignature},
		AccessKeyID:       keyID,
		StringToSign:      stringToSign,
		SignatureProvided: provided,
		CanonicalRequest:  canonical,
	}
}

func errAccessDenied(msg string) error {
	return &s3types.Error{Code: s3types.AccessDenied, Message: msg}
}

func errInvalidArgument(msg string) error {
	return &s3types.Error{Code: s3types.InvalidArgument, Message: msg}
}

func errMalformedHeader(format string, args ...any) error {
	return s3types.Errorf(s3types.AuthorizationHeaderMalformed, msgMalformed+format, args...)
}

func errQueryParams(format string, args ...any) error {
	return s3types.Errorf(s3types.AuthorizationQueryParametersError, format, args...)
}

// lookupSecret calls lookup, passing its *s3types.Error (InvalidAccessKeyId) through unchanged
// and giving any other failure context.
func lookupSecret(lookup Lookup, keyID string) (string, error) {
	secret, err := lookup(keyID)
	if err == nil {
		return secret, nil
	}
	if s3types.AsError(err) != nil {
		return "", err
	}
	return "", fmt.Errorf("sig: look up access key: %w", err)
}
