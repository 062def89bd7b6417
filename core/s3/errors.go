package s3

import (
	"errors"
	"fmt"
)

// Code is an S3 error code, as it appears in the <Code> element of an error body. The
// object-storage API maps each code to its HTTP status in one table (s3api).
type Code string

// The error codes the service returns. Their conditions are listed in
// ../shared/spec/s3-details.md §3.
const (
	AccessDenied              Code = "AccessDenied"
	BadDigest                 Code = "BadDigest"
	BucketAlreadyExists       Code = "BucketAlreadyExists"
	BucketNotEmpty            Code = "BucketNotEmpty"
	EntityTooLarge            Code = "EntityTooLarge"
	IncompleteBody            Code = "IncompleteBody"
	InternalError             Code = "InternalError"
	InvalidAccessKeyID        Code = "InvalidAccessKeyId"
	InvalidArgument           Code = "InvalidArgument"
	InvalidBucketName         Code = "InvalidBucketName"
	InvalidDigest             Code = "InvalidDigest"
	InvalidRequest            Code = "InvalidRequest"
	KeyTooLong                Code = "KeyTooLongError"
	MalformedACLError         Code = "MalformedACLError"
	MalformedXML              Code = "MalformedXML"
	NoSuchBucket              Code = "NoSuchBucket"
	NoSuchKey                 Code = "NoSuchKey"
	TooManyBuckets            Code = "TooManyBuckets"
	UnresolvableGrantByEmail  Code = "UnresolvableGrantByEmailAddress"
	UserAlreadyExists         Code = "UserAlreadyExists"
	NoSuchUser                Code = "NoSuchUser"
	InvalidUserField          Code = "InvalidUserField"
	XAmzContentSHA256Mismatch Code = "XAmzContentSHA256Mismatch"
	MultipartUploadRemaining  Code = "MultipartUploadRemaining"
	PreconditionFailed        Code = "PreconditionFailed"
	NotModified               Code = "NotModified"
	MetadataTooLarge          Code = "MetadataTooLarge"
	SignatureDoesNotMatch     Code = "SignatureDoesNotMatch"
	RequestTimeTooSkewed      Code = "RequestTimeTooSkewed"
	NotImplemented            Code = "NotImplemented"
	MethodNotAllowed          Code = "MethodNotAllowed"
	MissingContentLength      Code = "MissingContentLength"
	InvalidRange              Code = "InvalidRange"
	MalformedPolicy           Code = "MalformedPolicy"
	NoSuchUpload              Code = "NoSuchUpload"
	InvalidPart               Code = "InvalidPart"
	InvalidPartOrder          Code = "InvalidPartOrder"
	EntityTooSmall            Code = "EntityTooSmall"
	NoSuchBucketPolicy        Code = "NoSuchBucketPolicy"
	ServiceUnavailable        Code = "ServiceUnavailable"
)

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

// The messages AWS sends with the common codes; handlers and the service use them so the
// wire texts stay the same everywhere.
var (
	errNoSuchBucket = &Error{NoSuchBucket, "The specified bucket does not exist"}
	errNoSuchKey    = &Error{NoSuchKey, "The specified key does not exist."}
	errAccessDenied = &Error{AccessDenied, "Access Denied"}
	errNotEmpty     = &Error{BucketNotEmpty, "The bucket you tried to delete is not empty"}
	errExists       = &Error{BucketAlreadyExists, "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."}
	errBucketName   = &Error{InvalidBucketName, "The specified bucket is not valid."}
	errTooMany      = &Error{TooManyBuckets, "You have attempted to create more buckets than allowed"}
	errKeyTooLong   = &Error{KeyTooLong, "Your key is too long"}
	errBadDigest    = &Error{BadDigest, "The Content-MD5 you specified did not match what we received."}
	errIncomplete   = &Error{IncompleteBody, "You did not provide the number of bytes specified by the Content-Length HTTP header"}
)
