package s3types

import (
	"errors"
	"fmt"
)

// Code is an S3 error code, as it appears in the <Code> element of an error body. Its
// HTTP status is in the one table of codes (Status).
type Code string

// The error codes the server answers with. Their conditions are listed in
// ../shared/spec/s3-details.md §3; each one's status is in statusOf.
const (
	AccessDenied                      Code = "AccessDenied"
	AuthorizationHeaderMalformed      Code = "AuthorizationHeaderMalformed"
	AuthorizationQueryParametersError Code = "AuthorizationQueryParametersError"
	BadDigest                         Code = "BadDigest"
	BadRequest                        Code = "BadRequest"
	BucketAlreadyExists               Code = "BucketAlreadyExists"
	BucketNotEmpty                    Code = "BucketNotEmpty"
	EntityTooLarge                    Code = "EntityTooLarge"
	EntityTooSmall                    Code = "EntityTooSmall"
	IllegalVersioningConfiguration    Code = "IllegalVersioningConfigurationException"
	IncompleteBody                    Code = "IncompleteBody"
	InternalError                     Code = "InternalError"
	InvalidAccessKeyID                Code = "InvalidAccessKeyId"
	InvalidArgument                   Code = "InvalidArgument"
	InvalidBucketState                Code = "InvalidBucketState"
	InvalidBucketName                 Code = "InvalidBucketName"
	InvalidDigest                     Code = "InvalidDigest"
	InvalidPart                       Code = "InvalidPart"
	InvalidPartOrder                  Code = "InvalidPartOrder"
	InvalidRange                      Code = "InvalidRange"
	InvalidRequest                    Code = "InvalidRequest"
	InvalidTag                        Code = "InvalidTag"
	InvalidUserField                  Code = "InvalidUserField"
	KeyTooLong                        Code = "KeyTooLongError"
	MalformedACLError                 Code = "MalformedACLError"
	MalformedPolicy                   Code = "MalformedPolicy"
	MalformedXML                      Code = "MalformedXML"
	MaxMessageLengthExceeded          Code = "MaxMessageLengthExceeded"
	MetadataTooLarge                  Code = "MetadataTooLarge"
	MethodNotAllowed                  Code = "MethodNotAllowed"
	MissingContentLength              Code = "MissingContentLength"
	MissingSecurityHeader             Code = "MissingSecurityHeader"
	MultipartUploadRemaining          Code = "MultipartUploadRemaining"
	NoSuchBucket                      Code = "NoSuchBucket"
	NoSuchBucketPolicy                Code = "NoSuchBucketPolicy"
	NoSuchKey                         Code = "NoSuchKey"
	NoSuchLifecycleConfiguration      Code = "NoSuchLifecycleConfiguration"
	NoSuchObjectLockConfiguration     Code = "NoSuchObjectLockConfiguration"
	NoSuchUpload                      Code = "NoSuchUpload"
	NoSuchTagSet                      Code = "NoSuchTagSet"
	NoSuchUser                        Code = "NoSuchUser"
	NoSuchVersion                     Code = "NoSuchVersion"
	NotImplemented                    Code = "NotImplemented"
	NotModified                       Code = "NotModified"
	ObjectLockConfigurationNotFound   Code = "ObjectLockConfigurationNotFoundError"
	PreconditionFailed                Code = "PreconditionFailed"
	RequestTimeTooSkewed              Code = "RequestTimeTooSkewed"
	RequestTimeout                    Code = "RequestTimeout"
	ServiceUnavailable                Code = "ServiceUnavailable"
	SignatureDoesNotMatch             Code = "SignatureDoesNotMatch"
	// SlowDown answers writes refused because the disk is full: AWS's "reduce your
	// request rate" (503), which S3 clients retry with backoff.
	SlowDown                  Code = "SlowDown"
	TooManyBuckets            Code = "TooManyBuckets"
	UnresolvableGrantByEmail  Code = "UnresolvableGrantByEmailAddress"
	UserAlreadyExists         Code = "UserAlreadyExists"
	XAmzContentSHA256Mismatch Code = "XAmzContentSHA256Mismatch"

	// The codes of CORS and POST object (browser uploads).
	AccessForbidden         Code = "AccessForbidden"
	InvalidPolicyDocument   Code = "InvalidPolicyDocument"
	MalformedPOSTRequest    Code = "MalformedPOSTRequest"
	NoSuchCORSConfiguration Code = "NoSuchCORSConfiguration"
	// ServerSideEncryptionConfigurationNotFoundError answers GET ?encryption of a
	// bucket without default encryption.
	ServerSideEncryptionConfigurationNotFoundError Code = "ServerSideEncryptionConfigurationNotFoundError"
)

// statusOf is the one table of S3 error codes and the HTTP status each is answered with
// (../shared/spec/s3-details.md §3). The statuses are numbers, not net/http's names: this
// package is below the HTTP layer. NoSuchVersion is a per-key result of a multi-object
// delete, never a response's status; it is listed with the status AWS documents.
var statusOf = map[Code]int{
	AccessDenied:                      403,
	AuthorizationHeaderMalformed:      400,
	AuthorizationQueryParametersError: 400,
	BadDigest:                         400,
	BadRequest:                        400,
	BucketAlreadyExists:               409,
	BucketNotEmpty:                    409,
	EntityTooLarge:                    400,
	EntityTooSmall:                    400,
	IncompleteBody:                    400,
	InternalError:                     500,
	InvalidAccessKeyID:                403,
	InvalidArgument:                   400,
	InvalidBucketState:                409,
	InvalidBucketName:                 400,
	InvalidDigest:                     400,
	InvalidPart:                       400,
	InvalidPartOrder:                  400,
	InvalidRange:                      416,
	InvalidRequest:                    400,
	InvalidTag:                        400,
	InvalidUserField:                  400,
	KeyTooLong:                        400,
	MalformedACLError:                 400,
	MalformedPolicy:                   400,
	MalformedXML:                      400,
	MaxMessageLengthExceeded:          400,
	MetadataTooLarge:                  400,
	MethodNotAllowed:                  405,
	MissingContentLength:              411,
	MissingSecurityHeader:             400,
	MultipartUploadRemaining:          409,
	NoSuchBucket:                      404,
	NoSuchBucketPolicy:                404,
	NoSuchKey:                         404,
	NoSuchLifecycleConfiguration:      404,
	NoSuchObjectLockConfiguration:     404,
	NoSuchUpload:                      404,
	NoSuchTagSet:                      404,
	NoSuchUser:                        404,
	NoSuchVersion:                     404,
	IllegalVersioningConfiguration:    400,
	NotImplemented:                    501,
	NotModified:                       304,
	ObjectLockConfigurationNotFound:   404,
	PreconditionFailed:                412,
	RequestTimeTooSkewed:              403,
	RequestTimeout:                    400,
	ServiceUnavailable:                503,
	SignatureDoesNotMatch:             403,
	SlowDown:                          503,
	TooManyBuckets:                    400,
	UnresolvableGrantByEmail:          400,
	UserAlreadyExists:                 409,
	XAmzContentSHA256Mismatch:         400,
	AccessForbidden:                   403,
	InvalidPolicyDocument:             400,
	MalformedPOSTRequest:              400,
	NoSuchCORSConfiguration:           404,
	ServerSideEncryptionConfigurationNotFoundError: 404,
}

// Status returns the HTTP status c is answered with: its entry in the table of codes,
// or 500 for a code the table does not know.
func (c Code) Status() int {
	if st, ok := statusOf[c]; ok {
		return st
	}
	return 500
}

// Error is an error the client caused or must see: an S3 code and a message safe to send.
type Error struct {
	Code    Code
	Message string
}

// Error implements error.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the first *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IsCode reports whether err carries the code c.
func IsCode(err error, c Code) bool {
	e := AsError(err)
	return e != nil && e.Code == c
}
