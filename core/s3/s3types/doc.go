// Package s3types holds the S3 vocabulary shared by the object-storage service
// (core/s3) and the wire packages of its HTTP interface (core/s3api/sig,
// core/s3api/s3xml): error codes with their HTTP statuses, the Error type, owners,
// grants and ACLs, requesters, and the entries of listings. It depends on the standard
// library alone, so the wire packages never link storage; core/s3 re-exports every name
// as an alias.
package s3types
