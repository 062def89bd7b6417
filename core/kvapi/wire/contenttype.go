package wire

import (
	"strings"

	"github.com/cairnkv/cairn/core"
)

// DefaultContentType is served for an object stored without a media type.
const DefaultContentType = "application/octet-stream"

// ParseContentType splits a request's Content-Type the way the reference stores it: the
// value is split on ';' and spaces (and tabs), the first token is the media type, a
// "charset=X" parameter (name case-insensitive, surrounding double quotes removed) is
// returned separately and every other parameter is dropped. The media type is kept as
// sent. If it is not of the form type/subtype (exactly one '/', both sides non-empty)
// the error is ErrInvalidMediaType and the 415 body is MediaTypeErrorMessage(v).
func ParseContentType(v string) (mediaType, charset string, err error) {
	first := true
	for rest := v; ; {
		i := strings.IndexFunc(rest, isContentTypeSep)
		tok := rest
		if i >= 0 {
			tok, rest = rest[:i], rest[i+1:]
		}
		if tok != "" {
			if first {
				mediaType, first = tok, false
			} else if name, val, ok := strings.Cut(tok, "="); ok && charset == "" && core.ASCIILower(name) == "charset" {
				if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
					val = val[1 : len(val)-1]
				}
				charset = val
			}
		}
		if i < 0 {
			break
		}
	}
	slash := strings.IndexByte(mediaType, '/')
	if slash <= 0 || slash == len(mediaType)-1 || strings.IndexByte(mediaType[slash+1:], '/') >= 0 {
		return "", "", ErrInvalidMediaType
	}
	return mediaType, charset, nil
}

func isContentTypeSep(r rune) bool { return r == ';' || r == ' ' || r == '\t' }

// FormatContentType returns the Content-Type of a stored value: the media type
// (DefaultContentType when empty) followed by "; charset=X" when a charset was stored.
func FormatContentType(mediaType, charset string) string {
	if mediaType == "" {
		mediaType = DefaultContentType
	}
	if charset == "" {
		return mediaType
	}
	return mediaType + "; charset=" + charset
}

// MediaTypeErrorMessage returns the 415 body for a Content-Type that is not
// type/subtype, quoting the header the way the reference does:
//
//	"foo" is not a valid media type for the Content-type header.
func MediaTypeErrorMessage(v string) string {
	return erlangString(v) + " is not a valid media type for the Content-type header.\n"
}

// MissingContentTypeMessage is the 400 body of a store request without Content-Type
// (no trailing newline, as in the reference).
const MissingContentTypeMessage = "Missing Content-Type request header"
