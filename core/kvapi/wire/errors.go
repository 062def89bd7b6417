package wire

import "errors"

// Sentinel errors. Parsers return typed errors (*LinkError, *IndexError) that match these
// with errors.Is; the text a client sees comes from the typed error or from the *Message
// helpers, never from these sentinels' own text.
var (
	// ErrInvalidLink reports a Link header that does not follow the link grammar of the
	// API version in use. The 400 body is LinkErrorMessage.
	ErrInvalidLink = errors.New("wire: invalid Link header")

	// ErrInvalidIndex reports an index header with an unknown field type or an _int value
	// that is not an integer. The 400 body is the *IndexError's Error text.
	ErrInvalidIndex = errors.New("wire: invalid index header")

	// ErrInvalidMediaType reports a Content-Type whose media type is not type/subtype.
	// The 415 body is MediaTypeErrorMessage.
	ErrInvalidMediaType = errors.New("wire: invalid media type")

	// ErrMalformedMultipart reports a multipart body that ParseMultipart cannot frame.
	ErrMalformedMultipart = errors.New("wire: malformed multipart body")
)
