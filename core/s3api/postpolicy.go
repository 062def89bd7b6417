package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3"
)

// postPolicy is a parsed POST object policy document: when it expires and the
// conditions every form must meet.
type postPolicy struct {
	expiration time.Time
	conds      []postCond
}

// postCond is one condition of a POST policy.
type postCond struct {
	// op is "eq", "starts-with" or "content-length-range".
	op string
	// field is the lower-case form field the condition is on, without its "$"
	// ("" for content-length-range).
	field string
	// value is what eq and starts-with compare with.
	value string
	// min and max bound the file's size (content-length-range).
	min, max int64
	// text is the condition as AWS quotes it in a refusal.
	text string
}

// maxPolicyConditions bounds the conditions of a policy (the form's size bounds the
// document already; this bounds the work per field).
const maxPolicyConditions = 512

// errPolicy is 400 InvalidPolicyDocument with AWS's "Invalid Policy: " prefix.
func errPolicy(format string, args ...any) error {
	return s3.Errorf(s3.InvalidPolicyDocument, "Invalid Policy: "+format, args...)
}

// errPolicyRefused is 403 AccessDenied with AWS's "Invalid according to Policy: " prefix.
func errPolicyRefused(format string, args ...any) error {
	return s3.Errorf(s3.AccessDenied, "Invalid according to Policy: "+format, args...)
}

// parsePostPolicy decodes a form's policy field (base64 of a JSON document),
//
//	{"expiration": "2030-01-01T12:00:00.000Z",
//	 "conditions": [{"bucket": "b"}, ["eq", "$acl", "private"], ["starts-with", "$key", "user/"],
//	                ["content-length-range", 0, 1048576]]}
//
// The member names are case-sensitive (as AWS reads them); operators and field names
// are not. Anything else — bad base64 or JSON, no expiration or conditions, an
// expiration that is not an ISO 8601 time, a condition of another shape — is 400
// InvalidPolicyDocument.
func parsePostPolicy(b64 string) (*postPolicy, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, errPolicy("Invalid base64 encoding.")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, errPolicy("Invalid JSON.")
	}
	exp, ok := doc["expiration"]
	if !ok {
		return nil, errPolicy("Policy missing expiration.")
	}
	var expText string
	if err := json.Unmarshal(exp, &expText); err != nil {
		return nil, errPolicy("Invalid 'expiration' value.")
	}
	p := &postPolicy{}
	if p.expiration, err = time.Parse(time.RFC3339, expText); err != nil {
		return nil, errPolicy("Invalid 'expiration' value: '%s'", expText)
	}
	conds, ok := doc["conditions"]
	if !ok {
		return nil, errPolicy("Policy missing conditions.")
	}
	var list []json.RawMessage
	if err := json.Unmarshal(conds, &list); err != nil {
		return nil, errPolicy("Invalid 'conditions' value: it must be a list.")
	}
	if len(list) > maxPolicyConditions {
		return nil, errPolicy("Too many conditions (at most %d).", maxPolicyConditions)
	}
	for _, c := range list {
		pc, err := parsePostCond(c)
		if err != nil {
			return nil, err
		}
		p.conds = append(p.conds, pc)
	}
	return p, nil
}

// parsePostCond decodes one condition: {"field": "value"} (exact match) or
// [op, "$field", "value"] / ["content-length-range", min, max].
func parsePostCond(raw json.RawMessage) (postCond, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
			return postCond{}, errPolicy("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for k, v := range m {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return postCond{}, errPolicy("Invalid Simple-Condition: the value of %q must be a string.", k)
			}
			field := strings.ToLower(strings.TrimPrefix(k, "$"))
			return postCond{op: "eq", field: field, value: s, text: condText("eq", "$"+field, s)}, nil
		}
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) == 0 {
		return postCond{}, errPolicy("Invalid condition: %s", clip(raw))
	}
	var op string
	if err := json.Unmarshal(parts[0], &op); err != nil {
		return postCond{}, errPolicy("Invalid condition: %s", clip(raw))
	}
	op = strings.ToLower(op)
	switch op {
	case "content-length-range":
		return parseLengthRange(parts, raw)
	case "eq", "starts-with":
	default:
		return postCond{}, errPolicy("Invalid condition operator: %q", op)
	}
	var field, value string
	if len(parts) != 3 || json.Unmarshal(parts[1], &field) != nil || json.Unmarshal(parts[2], &value) != nil {
		return postCond{}, errPolicy("Invalid condition: %s", clip(raw))
	}
	if !strings.HasPrefix(field, "$") || len(field) < 2 {
		return postCond{}, errPolicy("Invalid condition: the field %q must start with $", field)
	}
	field = strings.ToLower(field[1:])
	return postCond{op: op, field: field, value: value, text: condText(op, "$"+field, value)}, nil
}

// parseLengthRange decodes ["content-length-range", min, max]: two integers (JSON
// numbers or strings of digits), 0 <= min <= max.
func parseLengthRange(parts []json.RawMessage, raw json.RawMessage) (postCond, error) {
	if len(parts) != 3 {
		return postCond{}, errPolicy("Invalid content-length-range: it takes a minimum and a maximum.")
	}
	var lim [2]int64
	for i, p := range parts[1:] {
		s := strings.Trim(string(bytes.TrimSpace(p)), `"`)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return postCond{}, errPolicy("Invalid content-length-range: %s", clip(raw))
		}
		lim[i] = n
	}
	if lim[0] > lim[1] {
		return postCond{}, errPolicy("Invalid content-length-range: the minimum is above the maximum.")
	}
	return postCond{op: "content-length-range", min: lim[0], max: lim[1],
		text: fmt.Sprintf(`["content-length-range", %d, %d]`, lim[0], lim[1])}, nil
}

// condText renders a condition as AWS quotes it: ["eq", "$key", "value"].
func condText(op, field, value string) string {
	b, _ := json.Marshal([]string{op, field, value})
	return strings.ReplaceAll(string(b), `","`, `", "`)
}

// clip returns at most 64 bytes of raw, for an error message.
func clip(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// postExempt reports whether a form field (lower-case name) needs no condition in
// the policy: the signature fields, the policy itself, the file, and x-ignore-*.
func postExempt(name string) bool {
	switch name {
	case "policy", "file", "awsaccesskeyid", "signature", "x-amz-signature":
		return true
	}
	return strings.HasPrefix(name, "x-ignore-")
}

// check verifies the policy against a form at now: it has not expired (403 AccessDenied
// "Invalid according to Policy: Policy expired."), every eq and starts-with condition
// holds on the field's value (fields maps lower-case names to values, the bucket
// included; an absent field is ""), and every field but the exempt ones is named by a
// condition (403 "Extra input fields: name"). The file's size is checkSize's.
func (p *postPolicy) check(fields map[string]string, now time.Time) error {
	if !now.Before(p.expiration) {
		return errPolicyRefused("Policy expired.")
	}
	covered := make(map[string]bool, len(p.conds))
	for _, c := range p.conds {
		covered[c.field] = true
		v := fields[c.field]
		switch {
		case c.op == "eq" && v != c.value,
			c.op == "starts-with" && !strings.HasPrefix(v, c.value):
			return errPolicyRefused("Policy Condition failed: %s", c.text)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !covered[name] && !postExempt(name) {
			return errPolicyRefused("Extra input fields: %s", name)
		}
	}
	return nil
}

// checkSize verifies the file's size against the policy's content-length-range
// conditions: 400 EntityTooLarge or EntityTooSmall, as AWS answers.
func (p *postPolicy) checkSize(size int64) error {
	for _, c := range p.conds {
		if c.op != "content-length-range" {
			continue
		}
		if size > c.max {
			return s3.Errorf(s3.EntityTooLarge, "Your proposed upload exceeds the maximum allowed size")
		}
		if size < c.min {
			return s3.Errorf(s3.EntityTooSmall, "Your proposed upload is smaller than the minimum allowed size")
		}
	}
	return nil
}
