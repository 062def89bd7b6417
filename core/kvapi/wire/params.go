package wire

import "github.com/cairnkv/cairn/core"

// QuorumParamError returns the 400 body for a quorum parameter (r, w, dw, rw, pr, pw)
// that is neither an integer nor one of the words, e.g.
//
//	r query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'
func QuorumParamError(name string) string {
	return name + " query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"
}

// BoolParamError returns the 400 body for a boolean parameter (basic_quorum,
// notfound_ok, asis) that is not true, false or default, e.g.
//
//	basic_quorum query parameter must be true or false
func BoolParamError(name string) string {
	return name + " query parameter must be true or false\n"
}

// TimeoutError returns the 400 body for a timeout parameter that is not an integer. The
// value is quoted as the reference prints it:
//
//	Bad timeout value "abc"
func TimeoutError(v string) string {
	return "Bad timeout value " + erlangString(v) + "\n"
}

// ParseBoolParam parses a boolean query parameter: "true", "false" or "default", in any
// ASCII case. isDefault reports "default" (use the bucket property); ok is false for
// anything else, including the empty string. An absent parameter means default and is
// the caller's case.
func ParseBoolParam(s string) (val bool, isDefault bool, ok bool) {
	if len(s) > len("default") {
		return false, false, false
	}
	switch core.ASCIILower(s) {
	case "true":
		return true, false, true
	case "false":
		return false, false, true
	case "default":
		return false, true, true
	}
	return false, false, false
}
