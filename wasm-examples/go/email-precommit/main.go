// Command email-precommit is a Cairn precommit hook, built as a WebAssembly module: it
// lower-cases the "email" field of a JSON value and indexes it as email_bin, and it
// rejects values that are not JSON objects with a string email address.
//
// The logic here is portable and unit-tested natively; exports_wasip1.go exports it.
package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cairnkv/cairn/sdk/go/cairn"
)

// main is never called: the module is a reactor, and the host calls its exports.
func main() {}

// normalizeEmailHook is exported as "normalize_email".
var normalizeEmailHook = cairn.Precommit(normalizeEmail)

// indexField is the secondary index the hook maintains.
const indexField = "email_bin"

// normalizeEmail accepts a put of a JSON object whose "email" is a string that looks
// like an address. It stores the address lower-cased, in the value and in the
// email_bin index; other fields are kept (the rewritten object has its fields in
// sorted order). Deletes pass unchanged.
func normalizeEmail(in *cairn.CommitInput) cairn.Verdict {
	if in.Op == cairn.OpDelete {
		return cairn.Accept()
	}
	v := in.Object.First()
	if v == nil {
		return cairn.Reject("the object has no value")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(v.Data, &doc); err != nil || doc == nil {
		return cairn.Reject("the value must be a JSON object")
	}
	var email string
	if raw, ok := doc["email"]; !ok || json.Unmarshal(raw, &email) != nil {
		return cairn.Reject(`the value must have a string field "email"`)
	}
	lower := strings.ToLower(strings.TrimSpace(email))
	if local, domain, ok := strings.Cut(lower, "@"); !ok || local == "" || domain == "" {
		return cairn.Rejectf("%q is not an email address", email)
	}
	if lower == email && slices.Equal(v.Metadata.Index(indexField), []string{lower}) {
		return cairn.Accept() // already normalized and indexed
	}
	// The input is decoded afresh for every call, so the hook may change it in place.
	if lower != email {
		data, err := rewriteEmail(doc, lower)
		if err != nil {
			return cairn.Fail(err)
		}
		v.Data = data
	}
	v.Metadata.SetIndex(indexField, lower)
	return cairn.Replace(in.Object)
}

// rewriteEmail encodes doc with its "email" field set to email.
func rewriteEmail(doc map[string]json.RawMessage, email string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(email); err != nil {
		return nil, err
	}
	doc["email"] = bytes.TrimSpace(buf.Bytes())
	buf.Reset()
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
