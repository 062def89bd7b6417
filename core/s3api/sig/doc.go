// Package sig authenticates S3 requests: AWS Signature Version 2 (header and presigned
// query), Signature Version 4 (header and presigned query), and the payload digest that V4
// announces in x-amz-content-sha256.
//
// The package knows nothing of net/http. core/s3api copies what authentication needs from
// the *http.Request into a [Request] and calls [Verify]:
//
//	res, err := sig.Verify(&sig.Request{
//		Method:     r.Method,
//		Host:       r.Host,
//		RawPath:    rawPath,  // the path exactly as sent, still percent-encoded
//		RawQuery:   r.URL.RawQuery,
//		Header:     r.Header,
//		HostBucket: bucketFromHost,
//	}, users.SecretOf, time.Now())
//
// Verify answers, in the order S3 itself checks them: is there any authentication at all
// (none ⇒ an anonymous [Result]), is it well formed, is the access key known, is the request
// time within [MaxSkew] (or the presigned URL unexpired), and does the signature match.
// Every refusal is an *s3types.Error (found with s3types.AsError) whose code and message follow AWS;
// a signature mismatch comes as a *[SignatureError] that also carries the string to sign
// for the error body. No error ever contains a secret.
//
// Verify does not read the body. When a V4 request announces a hex digest, the caller wraps
// the body in [NewPayloadVerifier]; streaming (aws-chunked) bodies are checked with the
// signing details the [Result] keeps (SigningKey, Scope, AmzDate, SeedSignature) and
// [SignChunkV4].
//
// The exported canonicalisation functions ([StringToSignV2], [CanonicalResourceV2],
// [CanonicalURI], [CanonicalRequestV4], …) and the signing helpers ([SignRequestV2],
// [PresignV2], [SignRequestV4], [PresignV4]) exist so tests — here and in other packages —
// can build and sign requests themselves.
//
// The exact algorithms, the sub-resource list and the client quirks tolerated are described
// in shared/spec/s3-details.md §2.
package sig
