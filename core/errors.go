package core

import "errors"

// Error codes carried by Error. Each interface maps them to its own status codes and
// bodies in exactly one function (kvapi.writeError, s3api.writeError).
const (
	EINVALID      = "invalid"      // malformed request or parameter (400)
	ENOTFOUND     = "not_found"    // missing object, bucket type, route (404)
	EFORBIDDEN    = "forbidden"    // refused, e.g. by a precommit hook (403)
	ECONFLICT     = "conflict"     // state conflict (409)
	EPRECONDITION = "precondition" // a conditional header failed (412)
	ETOOLARGE     = "too_large"    // value above the configured maximum (413)
	EMEDIATYPE    = "media_type"   // unsupported or malformed media type (415)
	ENOTACCEPT    = "not_accepted" // Accept cannot be satisfied (406)
	EUNAVAILABLE  = "unavailable"  // timeout or quorum unmet (503)
	ENOSPACE      = "no_space"     // the data directory's disk is full: writes refused (507)
	EINTERNAL     = "internal"     // everything else (500)
)

// Error is an error a client caused or must see: a machine-readable Code, a
// human-readable Message that is safe to send on the wire, and optional per-field
// Reasons (bucket-property validation answers with a JSON object of them).
type Error struct {
	Code    string
	Message string
	// Reasons maps a field name to a short machine reason (e.g. "n_val": "not_integer").
	Reasons map[string]string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any
// other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain; for any other
// error it returns err.Error(), which callers must not send to clients unfiltered.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// AsError returns the first *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
