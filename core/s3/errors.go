package s3

import "github.com/cairnkv/cairn/core/s3/s3types"

// The error vocabulary is defined in s3types (shared with the wire packages), with the
// one table of codes and their HTTP statuses; these aliases keep its names here.

// Code is an S3 error code, as it appears in the <Code> element of an error body.
type Code = s3types.Code

// The error codes the service returns. Their conditions are listed in
// ../shared/spec/s3-details.md §3.
const (
	AccessDenied              = s3types.AccessDenied
	BadDigest                 = s3types.BadDigest
	BucketAlreadyExists       = s3types.BucketAlreadyExists
	BucketNotEmpty            = s3types.BucketNotEmpty
	EntityTooLarge            = s3types.EntityTooLarge
	IncompleteBody            = s3types.IncompleteBody
	InternalError             = s3types.InternalError
	InvalidAccessKeyID        = s3types.InvalidAccessKeyID
	InvalidArgument           = s3types.InvalidArgument
	InvalidBucketName         = s3types.InvalidBucketName
	InvalidDigest             = s3types.InvalidDigest
	InvalidRequest            = s3types.InvalidRequest
	KeyTooLong                = s3types.KeyTooLong
	MalformedACLError         = s3types.MalformedACLError
	MalformedXML              = s3types.MalformedXML
	NoSuchBucket              = s3types.NoSuchBucket
	NoSuchKey                 = s3types.NoSuchKey
	TooManyBuckets            = s3types.TooManyBuckets
	UnresolvableGrantByEmail  = s3types.UnresolvableGrantByEmail
	UserAlreadyExists         = s3types.UserAlreadyExists
	NoSuchUser                = s3types.NoSuchUser
	InvalidUserField          = s3types.InvalidUserField
	XAmzContentSHA256Mismatch = s3types.XAmzContentSHA256Mismatch
	MultipartUploadRemaining  = s3types.MultipartUploadRemaining
	PreconditionFailed        = s3types.PreconditionFailed
	NotModified               = s3types.NotModified
	MetadataTooLarge          = s3types.MetadataTooLarge
	SignatureDoesNotMatch     = s3types.SignatureDoesNotMatch
	RequestTimeTooSkewed      = s3types.RequestTimeTooSkewed
	NotImplemented            = s3types.NotImplemented
	MethodNotAllowed          = s3types.MethodNotAllowed
	MissingContentLength      = s3types.MissingContentLength
	InvalidRange              = s3types.InvalidRange
	MalformedPolicy           = s3types.MalformedPolicy
	NoSuchUpload              = s3types.NoSuchUpload
	InvalidPart               = s3types.InvalidPart
	InvalidPartOrder          = s3types.InvalidPartOrder
	EntityTooSmall            = s3types.EntityTooSmall
	NoSuchBucketPolicy        = s3types.NoSuchBucketPolicy
	ServiceUnavailable        = s3types.ServiceUnavailable
	BadRequest                = s3types.BadRequest
	InvalidTag                = s3types.InvalidTag
	NoSuchTagSet              = s3types.NoSuchTagSet
	NoSuchCORSConfiguration   = s3types.NoSuchCORSConfiguration
	AccessForbidden           = s3types.AccessForbidden
	InvalidPolicyDocument     = s3types.InvalidPolicyDocument
	MalformedPOSTRequest      = s3types.MalformedPOSTRequest
	// ServerSideEncryptionConfigurationNotFoundError: GET ?encryption, none set.
	ServerSideEncryptionConfigurationNotFoundError = s3types.ServerSideEncryptionConfigurationNotFoundError
	// NoSuchVersion and IllegalVersioningConfiguration are versioning's (versioning.go).
	NoSuchVersion                  = s3types.NoSuchVersion
	IllegalVersioningConfiguration = s3types.IllegalVersioningConfiguration
	// InvalidBucketState, NoSuchObjectLockConfiguration and
	// ObjectLockConfigurationNotFound are Object Lock's (objectlock.go).
	InvalidBucketState              = s3types.InvalidBucketState
	NoSuchObjectLockConfiguration   = s3types.NoSuchObjectLockConfiguration
	ObjectLockConfigurationNotFound = s3types.ObjectLockConfigurationNotFound
)

// Error is an error the client caused or must see: an S3 code and a message safe to send.
type Error = s3types.Error

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return s3types.Errorf(code, format, args...)
}

// AsError returns the first *Error in err's chain, or nil.
func AsError(err error) *Error { return s3types.AsError(err) }

// IsCode reports whether err carries the code c.
func IsCode(err error, c Code) bool { return s3types.IsCode(err, c) }

// The messages AWS sends with the common codes; handlers and the service use them so the
// wire texts stay the same everywhere.
var (
	errNoSuchBucket = &Error{Code: NoSuchBucket, Message: "The specified bucket does not exist"}
	errNoSuchKey    = &Error{Code: NoSuchKey, Message: "The specified key does not exist."}
	errAccessDenied = &Error{Code: AccessDenied, Message: "Access Denied"}
	errNotEmpty     = &Error{Code: BucketNotEmpty, Message: "The bucket you tried to delete is not empty"}
	errExists       = &Error{Code: BucketAlreadyExists, Message: "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again."}
	errBucketName   = &Error{Code: InvalidBucketName, Message: "The specified bucket is not valid."}
	errTooMany      = &Error{Code: TooManyBuckets, Message: "You have attempted to create more buckets than allowed"}
	errKeyTooLong   = &Error{Code: KeyTooLong, Message: "Your key is too long"}
	errBadDigest    = &Error{Code: BadDigest, Message: "The Content-MD5 you specified did not match what we received."}
	errIncomplete   = &Error{Code: IncompleteBody, Message: "You did not provide the number of bytes specified by the Content-Length HTTP header"}
)
