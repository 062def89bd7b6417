package s3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairnkv/cairn/core"
	"io"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bucket policies: the JSON subset Riak CS understood (policy version 2008-10-17, and
// 2012-10-17 too), evaluated together with the ACLs (see authz.go):
//
//	{"Version": "2008-10-17", "Id": "...",
//	 "Statement": [{"Sid": "...", "Effect": "Allow"|"Deny",
//	   "Principal": "*" | {"AWS": "*"|id|[ids], "CanonicalUser": id|[ids]},   (or NotPrincipal)
//	   "Action": "s3:GetObject"|"s3:Get*"|"*"|[...],                           (or NotAction)
//	   "Resource": "arn:aws:s3:::bucket"|"arn:aws:s3:::bucket/prefix*"|[...],  (or NotResource)
//	   "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"|[...]},
//	                 "NotIpAddress": {...}, "Bool": {"aws:SecureTransport": "true"},
//	                 "DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"},
//	                 "StringLike": {"s3:prefix": ["home/*", ""]},
//	                 "StringNotEqualsIfExists": {"aws:Referer": "..."},
//	                 "NumericLessThanEquals": {"s3:max-keys": "100"},
//	                 "Null": {"aws:UserAgent": "true"},
//	                 "StringEquals": {"s3:ExistingObjectTag/class": "public",
//	                                  "s3:RequestObjectTag/owner": "..."}, ...}}]}
//
// The tag keys s3:ExistingObjectTag/<key> (the object's current tags, on the object
// actions that read or change an existing object) and s3:RequestObjectTag/<key> (the
// tags a PUT, copy with REPLACE, multipart initiation or PutObjectTagging asks for)
// take the string operators and Null; <key> is a tag key, matched with its case.
// s3:RequestObjectTagKeys, the keys of the tags asked for, is multi-valued: it takes a
// string operator under the set qualifiers ForAnyValue: and ForAllValues:, which no
// other key takes.
//
// Principals are canonical user ids; "*" is everyone, anonymous requesters included; a
// {"Service": ...} principal is accepted and matches no request.
//
// Conditions follow AWS: the values of one key are OR'ed, the keys and operators of
// a statement AND'ed; a key the request does not carry makes a positive operator
// false and a negated one (Not...) true, an ...IfExists operator true; Null tests
// whether the key is absent.
// Actions match case-insensitively, resources case-sensitively; both take the wildcards
// * (any run of characters, '/' included) and ? (one character). A statement applies
// when its principal, action, resource and every condition match. Any applying Deny
// makes the policy deny; otherwise any applying Allow makes it allow; otherwise it says
// nothing and the ACL decides.

// MaxPolicySize is the largest bucket policy document accepted, in bytes (AWS's limit).
const MaxPolicySize = 20 << 10

// The policy language versions accepted. A document without a Version is 2008-10-17.
const (
	PolicyVersion2008 = "2008-10-17"
	PolicyVersion2012 = "2012-10-17"
)

// arnPrefix starts every S3 resource name a policy may give.
const arnPrefix = "arn:aws:s3:::"

// Policy is a parsed bucket policy. It is immutable once parsed. Its JSON form is the
// policy document itself (compacted), so a Bucket record stores the document and
// decoding the record parses it once.
type Policy struct {
	// doc is the document: compact JSON, with <, >, & and U+2028/9 escaped as
	// encoding/json writes them, so it is the same before and after a round trip
	// through a bucket record.
	doc        []byte
	version    string
	statements []statement
}

// PolicyRequest is what a policy is evaluated against: who asks, for which action
// (an Action* constant), on which bucket and object key ("" for the bucket itself).
type PolicyRequest struct {
	Requester Requester
	Action    string
	Bucket    string
	Key       string
	// Tags are the tags the conditions s3:ExistingObjectTag/<key> and
	// s3:RequestObjectTag/<key> test.
	Tags PolicyTags
	// now is the time conditions on aws:CurrentTime and aws:EpochTime compare with
	// (zero: the current time); tests set it.
	now time.Time
}

// PolicyTags are the tags a request's policy conditions may test: the object's current
// tags (s3:ExistingObjectTag/<key>) and, when HasRequest, the tags the request asks
// for (s3:RequestObjectTag/<key>).
type PolicyTags struct {
	Existing   []Tag
	Request    []Tag
	HasRequest bool
}

// The prefixes of the tag condition keys (lower case); the tag key follows, its case
// kept.
const (
	condExistingTag = "s3:existingobjecttag/"
	condRequestTag  = "s3:requestobjecttag/"
)

// tagCondKey splits a tag condition key into its lower-case prefix and the tag key, or
// reports that key is not one (or names no valid tag key).
func tagCondKey(key string) (prefix, tag string, ok bool) {
	for _, p := range []string{condExistingTag, condRequestTag} {
		if len(key) > len(p) && strings.EqualFold(key[:len(p)], p) {
			tag = key[len(p):]
			return p, tag, utf8.RuneCountInString(tag) <= MaxTagKeyLength && utf8.ValidString(tag)
		}
	}
	return "", "", false
}

// tagValue returns the value of tag key among tags, and whether it is there.
func tagValue(tags []Tag, key string) (string, bool) {
	for _, t := range tags {
		if t.Key == key {
			return t.Value, true
		}
	}
	return "", false
}

// statement is one parsed policy statement. Each of the principal, action and
// resource parts may be negated (NotPrincipal, NotAction, NotResource).
type statement struct {
	sid  string
	deny bool
	// notPrincipal, notAction, notResource say the part matches what it does not name.
	notPrincipal, notAction, notResource bool
	// everyone is principal "*"; ids are canonical user ids.
	everyone bool
	ids      []string
	// actions are patterns over action names ("s3:GetObject"), matched ignoring case;
	// resources are patterns over "bucket" and "bucket/key".
	actions, resources []string
	conds              []condition
}

// condKind is what a condition operator tests.
type condKind int

const (
	condIP condKind = iota
	condBool
	condDate
	condString
	condNumeric
	condNull
)

// dateCmp is the comparison of a date or numeric operator: the request's value against
// the condition's.
type dateCmp int

const (
	cmpEq dateCmp = iota
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

// strCmp is how a string operator compares the request's value with a condition value.
type strCmp int

const (
	strEquals strCmp = iota
	strEqualsFold
	strLike
)

// condOp describes one condition operator.
type condOp struct {
	kind condKind
	// negate inverts the test (NotIpAddress, StringNotEquals, DateNotEquals): it then
	// holds when no value matches, and when the key is absent from the request.
	negate bool
	cmp    dateCmp // condDate, condNumeric
	str    strCmp  // condString
}

// condOps are the condition operators understood; each but Null also has an
// ...IfExists form (see lookupCondOp).
var condOps = map[string]condOp{
	"IpAddress":                 {kind: condIP},
	"NotIpAddress":              {kind: condIP, negate: true},
	"Bool":                      {kind: condBool},
	"DateEquals":                {kind: condDate, cmp: cmpEq},
	"DateNotEquals":             {kind: condDate, cmp: cmpEq, negate: true},
	"DateLessThan":              {kind: condDate, cmp: cmpLt},
	"DateLessThanEquals":        {kind: condDate, cmp: cmpLe},
	"DateGreaterThan":           {kind: condDate, cmp: cmpGt},
	"DateGreaterThanEquals":     {kind: condDate, cmp: cmpGe},
	"StringEquals":              {kind: condString, str: strEquals},
	"StringNotEquals":           {kind: condString, str: strEquals, negate: true},
	"StringEqualsIgnoreCase":    {kind: condString, str: strEqualsFold},
	"StringNotEqualsIgnoreCase": {kind: condString, str: strEqualsFold, negate: true},
	"StringLike":                {kind: condString, str: strLike},
	"StringNotLike":             {kind: condString, str: strLike, negate: true},
	"NumericEquals":             {kind: condNumeric, cmp: cmpEq},
	"NumericNotEquals":          {kind: condNumeric, cmp: cmpEq, negate: true},
	"NumericLessThan":           {kind: condNumeric, cmp: cmpLt},
	"NumericLessThanEquals":     {kind: condNumeric, cmp: cmpLe},
	"NumericGreaterThan":        {kind: condNumeric, cmp: cmpGt},
	"NumericGreaterThanEquals":  {kind: condNumeric, cmp: cmpGe},
	"Null":                      {kind: condNull},
}

// ifExistsSuffix turns an operator into one that also holds when the key is absent.
const ifExistsSuffix = "IfExists"

// lookupCondOp finds an operator by name, with its ...IfExists form (not for Null).
func lookupCondOp(name string) (op condOp, ifExists, ok bool) {
	if strings.Contains(name, ":") {
		return condOp{}, false, false // a set qualifier is cut by setQualifier first
	}
	if op, ok := condOps[name]; ok {
		return op, false, true
	}
	base, cut := strings.CutSuffix(name, ifExistsSuffix)
	if op, ok := condOps[base]; cut && ok && op.kind != condNull {
		return op, true, true
	}
	return condOp{}, false, false
}

// setQual is the set qualifier of a condition on a multi-valued key: how the request's
// values combine.
type setQual int

const (
	setNone      setQual = iota
	setAnyValue          // ForAnyValue: at least one request value passes
	setAllValues         // ForAllValues: every request value passes (none: true)
)

// setQualifier cuts a set qualifier ("ForAnyValue:", "ForAllValues:") off an operator
// name.
func setQualifier(name string) (setQual, string) {
	if rest, ok := strings.CutPrefix(name, "ForAnyValue:"); ok {
		return setAnyValue, rest
	}
	if rest, ok := strings.CutPrefix(name, "ForAllValues:"); ok {
		return setAllValues, rest
	}
	return setNone, name
}

// condRequestTagKeys is the one multi-valued condition key: the keys of the tags a
// write asks for. It is taken only under a set qualifier, and a set qualifier only
// with it and a string operator, so that no condition means what AWS would not.
const condRequestTagKeys = "s3:requestobjecttagkeys"

// The condition keys whose value a request may carry as a string (lower case: keys
// match ignoring case). The request's values come in Requester.Keys.
const (
	CondReferer          = "aws:referer"
	CondUserAgent        = "aws:useragent"
	CondUsername         = "aws:username"
	CondUserID           = "aws:userid"
	CondPrefix           = "s3:prefix"
	CondDelimiter        = "s3:delimiter"
	CondMaxKeys          = "s3:max-keys"
	CondACL              = "s3:x-amz-acl"
	CondSignatureVersion = "s3:signatureversion"
	CondAuthType         = "s3:authtype"
	// CondSSE and CondSSECustomerAlgorithm are the encryption a write asks for in its
	// headers (x-amz-server-side-encryption, …-customer-algorithm).
	CondSSE                  = "s3:x-amz-server-side-encryption"
	CondSSECustomerAlgorithm = "s3:x-amz-server-side-encryption-customer-algorithm"
)

// The condition keys the server computes itself.
const (
	condSourceIP        = "aws:sourceip"
	condSecureTransport = "aws:securetransport"
	condCurrentTime     = "aws:currenttime"
	condEpochTime       = "aws:epochtime"
)

// stringKeys are the keys string operators accept.
var stringKeys = []string{CondReferer, CondUserAgent, CondUsername, CondUserID, CondPrefix,
	CondDelimiter, CondMaxKeys, CondACL, CondSignatureVersion, CondAuthType, CondSSE, CondSSECustomerAlgorithm}

// condKeys are the condition keys each kind of operator accepts.
var condKeys = map[condKind][]string{
	condIP:      {condSourceIP},
	condBool:    {condSecureTransport},
	condDate:    {condCurrentTime, condEpochTime},
	condString:  stringKeys,
	condNumeric: {CondMaxKeys},
	condNull: append([]string{condSourceIP, condSecureTransport, condCurrentTime, condEpochTime},
		stringKeys...),
}

// Bounds of a policy besides its size.
const (
	// MaxPolicyStatements bounds the statements of a policy.
	MaxPolicyStatements = 128
	// MaxStatementConditions bounds the (operator, key) pairs of one statement.
	MaxStatementConditions = 64
	// MaxConditionValues bounds the values of one (operator, key) pair.
	MaxConditionValues = 256
)

// condition is one key tested by one operator: the test holds (before negation) when
// any of the values matches the request.
type condition struct {
	op condOp
	// ifExists makes the condition hold when the key is absent from the request.
	ifExists bool
	key      string         // lower case
	tag      string         // the tag key of a tag condition key (its case kept)
	set      setQual        // the set qualifier (condRequestTagKeys only)
	prefixes []netip.Prefix // condIP
	bools    []bool         // condBool, condNull
	times    []time.Time    // condDate
	strs     []string       // condString
	nums     []float64      // condNumeric
}

// malformed returns a MalformedPolicy error.
func malformed(format string, args ...any) error {
	return Errorf(MalformedPolicy, format, args...)
}

// ParsePolicy parses and checks a policy document (at most MaxPolicySize bytes). Every
// error is a MalformedPolicy *Error whose message says what is wrong. It does not check
// that the resources are in a particular bucket (see CheckBucket).
func ParsePolicy(doc []byte) (*Policy, error) {
	if len(doc) > MaxPolicySize {
		return nil, malformed("Policy exceeds the maximum allowed document size (%d bytes).", MaxPolicySize)
	}
	return parsePolicy(doc)
}

// parsePolicy is ParsePolicy without the size limit.
func parsePolicy(doc []byte) (*Policy, error) {
	trimmed := bytes.TrimLeft(doc, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, malformed("Policies must be valid JSON and the first byte must be '{'")
	}
	if !utf8.Valid(doc) {
		return nil, malformed("This policy contains invalid Json: it is not UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, malformed("This policy contains invalid Json: %v", err)
	}
	if err := checkDuplicateKeys(doc); err != nil {
		return nil, err
	}
	p := &Policy{version: PolicyVersion2008}
	for k, v := range top {
		switch k {
		case "Version":
			if err := json.Unmarshal(v, &p.version); err != nil {
				return nil, malformed("The policy Version must be a string")
			}
			if p.version != PolicyVersion2008 && p.version != PolicyVersion2012 {
				return nil, malformed("Invalid policy version %q: use %s or %s", p.version, PolicyVersion2008, PolicyVersion2012)
			}
		case "Id":
			var id string
			if err := json.Unmarshal(v, &id); err != nil {
				return nil, malformed("The policy Id must be a string")
			}
		case "Statement":
		default:
			return nil, malformed("Policy has an unknown field %q", k)
		}
	}
	raw, ok := top["Statement"]
	if !ok {
		return nil, malformed("Missing required field Statement")
	}
	var list []json.RawMessage
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		list = []json.RawMessage{raw} // a single statement need not be in a list
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, malformed("Statement must be an object or a list of objects")
	}
	if len(list) == 0 {
		return nil, malformed("Policy has no statement")
	}
	if len(list) > MaxPolicyStatements {
		return nil, malformed("Policy has %d statements (at most %d)", len(list), MaxPolicyStatements)
	}
	sids := make(map[string]bool)
	for i, r := range list {
		st, err := parseStatement(r)
		if err != nil {
			return nil, Errorf(MalformedPolicy, "Statement %d: %s", i+1, AsError(err).Message)
		}
		if st.sid != "" {
			if sids[st.sid] {
				return nil, malformed("Statement IDs (SID) in a single policy must be unique: %q", st.sid)
			}
			sids[st.sid] = true
		}
		p.statements = append(p.statements, st)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc); err != nil {
		return nil, malformed("This policy contains invalid Json: %v", err)
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, buf.Bytes())
	p.doc = esc.Bytes()
	return p, nil
}

// statementFields are the fields a statement may have.
var statementFields = map[string]bool{"Sid": true, "Effect": true, "Principal": true, "NotPrincipal": true,
	"Action": true, "NotAction": true, "Resource": true, "NotResource": true, "Condition": true}

// parseStatement parses one statement object.
func parseStatement(raw json.RawMessage) (statement, error) {
	var st statement
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return st, malformed("a statement must be a JSON object")
	}
	for k := range f {
		if !statementFields[k] {
			return st, malformed("unknown field %q", k)
		}
	}
	if v, ok := f["Sid"]; ok {
		if err := json.Unmarshal(v, &st.sid); err != nil {
			return st, malformed("Sid must be a string")
		}
	}
	var effect string
	if v, ok := f["Effect"]; !ok {
		return st, malformed("Missing required field Effect")
	} else if err := json.Unmarshal(v, &effect); err != nil || effect != "Allow" && effect != "Deny" {
		return st, malformed("Invalid effect: %s (Allow or Deny)", v)
	}
	st.deny = effect == "Deny"

	v, neg, err := oneOf(f, "Principal", "NotPrincipal")
	if err != nil {
		return st, err
	}
	st.notPrincipal = neg
	if st.everyone, st.ids, err = parsePrincipal(v); err != nil {
		return st, err
	}

	if v, neg, err = oneOf(f, "Action", "NotAction"); err != nil {
		return st, err
	}
	st.notAction = neg
	if st.actions, err = parseActions(v); err != nil {
		return st, err
	}

	if v, neg, err = oneOf(f, "Resource", "NotResource"); err != nil {
		return st, err
	}
	st.notResource = neg
	if st.resources, err = parseResources(v); err != nil {
		return st, err
	}

	if v, ok := f["Condition"]; ok {
		if st.conds, err = parseConditions(v); err != nil {
			return st, err
		}
	}
	return st, nil
}

// oneOf returns the value of exactly one of the fields name and "Not"+name (neg says
// which).
func oneOf(f map[string]json.RawMessage, name, notName string) (json.RawMessage, bool, error) {
	v, ok := f[name]
	nv, nok := f[notName]
	switch {
	case ok && nok:
		return nil, false, malformed("%s and %s cannot both be given", name, notName)
	case ok:
		return v, false, nil
	case nok:
		return nv, true, nil
	}
	return nil, false, malformed("Missing required field %s", name)
}

// stringOrList decodes a JSON string or a non-empty list of strings.
func stringOrList(v json.RawMessage) ([]string, bool) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return []string{s}, true
	}
	var l []string
	if err := json.Unmarshal(v, &l); err != nil || len(l) == 0 {
		return nil, false
	}
	return l, true
}

// parsePrincipal parses "*" or {"AWS": ..., "CanonicalUser": ...}.
func parsePrincipal(v json.RawMessage) (everyone bool, ids []string, err error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s != "*" {
			return false, nil, malformed("Invalid principal in policy: %q (use \"*\" or {\"AWS\": [canonical ids]})", s)
		}
		return true, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || len(m) == 0 {
		return false, nil, malformed("Invalid principal in policy: %s", v)
	}
	for k, raw := range m {
		if k != "AWS" && k != "CanonicalUser" && k != "Service" {
			return false, nil, malformed("Invalid principal in policy: unsupported principal type %q (AWS, CanonicalUser or Service)", k)
		}
		l, ok := stringOrList(raw)
		if !ok {
			return false, nil, malformed("Invalid principal in policy: %s must be a string or a list of strings", k)
		}
		if k == "Service" {
			// A service (an AWS service's name) is never a Cairn user: it is checked
			// and matches no request.
			if err := checkServices(l); err != nil {
				return false, nil, err
			}
			continue
		}
		for _, id := range l {
			switch {
			case id == "*" && k == "AWS":
				everyone = true
			case id == "" || id == "*" || strings.ContainsAny(id, " \t\r\n*?"):
				return false, nil, malformed("Invalid principal in policy: %q", id)
			default:
				ids = append(ids, id)
			}
		}
	}
	return everyone, ids, nil
}

// checkServices checks the names of a Service principal ("s3.amazonaws.com").
func checkServices(l []string) error {
	for _, svc := range l {
		if svc == "" || strings.ContainsAny(svc, " \t\r\n*?") {
			return malformed("Invalid principal in policy: service %q", svc)
		}
	}
	return nil
}

// forbiddenActions may not appear in a bucket policy (as in Riak CS and S3): they are
// not actions on a bucket.
var forbiddenActions = []string{"s3:createbucket", "s3:listallmybuckets"}

// parseActions parses the action patterns, returned in lower case.
func parseActions(v json.RawMessage) ([]string, error) {
	l, ok := stringOrList(v)
	if !ok {
		return nil, malformed("Action must be a string or a non-empty list of strings")
	}
	out := make([]string, 0, len(l))
	for _, a := range l {
		la := strings.ToLower(a)
		if la != "*" {
			name, ok := strings.CutPrefix(la, "s3:")
			if !ok || name == "" || strings.IndexFunc(name, func(r rune) bool {
				return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '*' && r != '?'
			}) >= 0 {
				return nil, malformed("Policy has invalid action: %q", a)
			}
			for _, f := range forbiddenActions {
				if la == f {
					return nil, malformed("Policy has invalid action: %q does not apply to a bucket", a)
				}
			}
		}
		out = append(out, la)
	}
	return out, nil
}

// parseResources parses the resource ARNs, returning the patterns after the ARN prefix.
func parseResources(v json.RawMessage) ([]string, error) {
	l, ok := stringOrList(v)
	if !ok {
		return nil, malformed("Resource must be a string or a non-empty list of strings")
	}
	out := make([]string, 0, len(l))
	for _, r := range l {
		path, ok := strings.CutPrefix(r, arnPrefix)
		if !ok || path == "" || path[0] == '/' {
			return nil, malformed("Policy has invalid resource: %q (use %sbucket or %sbucket/key-pattern)", r, arnPrefix, arnPrefix)
		}
		out = append(out, path)
	}
	return out, nil
}

// parseConditions parses a condition block: {operator: {key: value(s)}}.
func parseConditions(v json.RawMessage) ([]condition, error) {
	var block map[string]map[string]json.RawMessage
	if err := json.Unmarshal(v, &block); err != nil {
		return nil, malformed("Condition must be an object of operators, each an object of keys")
	}
	var out []condition
	for name, keys := range block {
		set, opName := setQualifier(name)
		op, ifExists, ok := lookupCondOp(opName)
		if !ok || (set != setNone && op.kind != condString) {
			return nil, malformed("Invalid Condition type: %q (supported: String*, Numeric*, Date*, Bool, IpAddress, NotIpAddress, their ...IfExists forms, and Null; ForAnyValue: and ForAllValues: on String*)", name)
		}
		if len(keys) == 0 {
			return nil, malformed("Condition %s names no key", name)
		}
		if len(out)+len(keys) > MaxStatementConditions {
			return nil, malformed("Statement has more than %d conditions", MaxStatementConditions)
		}
		for key, raw := range keys {
			c, err := parseCondition(op, ifExists, set, name, key, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// parseCondition parses the values of one key under one operator.
func parseCondition(op condOp, ifExists bool, set setQual, name, key string, raw json.RawMessage) (condition, error) {
	lk := strings.ToLower(key)
	prefix, tag, isTag := tagCondKey(key)
	if (set != setNone) != (lk == condRequestTagKeys) {
		return condition{}, malformed("Policy has an invalid condition key: %q for %s (%s takes ForAnyValue: or ForAllValues:, and only it does)", key, name, "s3:RequestObjectTagKeys")
	}
	switch {
	case set != setNone:
	case isTag && (op.kind == condString || op.kind == condNull):
		lk = prefix
	case !containsString(condKeys[op.kind], lk):
		return condition{}, malformed("Policy has an invalid condition key: %q for %s", key, name)
	}
	vals, ok := conditionValues(raw)
	if !ok {
		return condition{}, malformed("Condition %s %s: values must be a string, number or boolean, or a non-empty list of them", name, key)
	}
	if len(vals) > MaxConditionValues {
		return condition{}, malformed("Condition %s %s: more than %d values", name, key, MaxConditionValues)
	}
	c := condition{op: op, ifExists: ifExists, set: set, key: lk, tag: tag}
	for _, val := range vals {
		if err := c.addValue(val); err != nil {
			return condition{}, malformed("Condition %s %s: %v", name, key, err)
		}
	}
	return c, nil
}

// addValue parses one condition value for the condition's operator and keeps it.
func (c *condition) addValue(val any) error {
	switch c.op.kind {
	case condIP:
		p, err := parseCIDR(val)
		c.prefixes = append(c.prefixes, p)
		return err
	case condBool, condNull:
		b, err := parseBool(val)
		c.bools = append(c.bools, b)
		return err
	case condDate:
		t, err := parseDate(val)
		c.times = append(c.times, t)
		return err
	case condNumeric:
		n, err := parseNumber(val)
		c.nums = append(c.nums, n)
		return err
	}
	c.strs = append(c.strs, scalarString(val))
	return nil
}

// scalarString writes a string, number or boolean condition value as a string.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// parseNumber parses a number, as a JSON number or a string.
func parseNumber(v any) (float64, error) {
	s := scalarString(v)
	if _, isBool := v.(bool); isBool {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return n, nil
}

// conditionValues decodes one value or a non-empty list of values (strings, numbers
// as json.Number, booleans).
func conditionValues(raw json.RawMessage) ([]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	l, isList := v.([]any)
	if !isList {
		l = []any{v}
	}
	if len(l) == 0 {
		return nil, false
	}
	for _, e := range l {
		switch e.(type) {
		case string, json.Number, bool:
		default:
			return nil, false
		}
	}
	return l, true
}

// parseCIDR parses an IPv4 or IPv6 address or CIDR block (host bits are ignored).
func parseCIDR(v any) (netip.Prefix, error) {
	s, ok := v.(string)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("%v is not an IP address or CIDR block", v)
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("invalid CIDR block %q", s)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("invalid IP address %q", s)
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// parseBool parses true/false, as a JSON boolean or a string in any case.
func parseBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not true or false", v)
}

// parseDate parses an ISO 8601 time (RFC 3339, or a date alone) or epoch seconds.
func parseDate(v any) (time.Time, error) {
	var s string
	switch d := v.(type) {
	case json.Number:
		s = d.String()
	case string:
		s = d
	default:
		return time.Time{}, fmt.Errorf("%v is not a date", v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date or epoch seconds", s)
}

func containsString(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// checkDuplicateKeys refuses a document in which an object names a key twice: JSON
// decoding would silently keep the last, and the policy would not mean what it reads.
func checkDuplicateKeys(doc []byte) error {
	type frame struct {
		keys map[string]bool // nil for an array
		// wantKey says the next string token in this object is a key.
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return malformed("This policy contains invalid Json: %v", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.keys != nil && top.wantKey {
			if top.keys[s] {
				return malformed("This policy contains invalid Json: the field %q appears twice in an object", s)
			}
			top.keys[s] = true
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.keys != nil {
			top.wantKey = true // this token is (or starts) the value of the last key
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		}
	}
}

// CheckBucket checks that every resource of the policy can name bucket or objects in
// it (the part of the ARN before the first '/' must match the bucket's name), as a
// policy set on bucket must. The error is MalformedPolicy.
func (p *Policy) CheckBucket(bucket string) error {
	for i, st := range p.statements {
		for _, r := range st.resources {
			seg, _, _ := strings.Cut(r, "/")
			if !globMatch(seg, bucket, false) {
				return malformed("Statement %d: Policy has invalid resource: %s%s is not in bucket %s", i+1, arnPrefix, r, bucket)
			}
		}
	}
	return nil
}

// Document returns the policy document (compact JSON). The caller must not modify it.
func (p *Policy) Document() []byte { return p.doc }

// Version returns the policy language version (2008-10-17 when the document gives none).
func (p *Policy) Version() string { return p.version }

// MarshalJSON writes the policy document.
func (p *Policy) MarshalJSON() ([]byte, error) {
	if p == nil || p.doc == nil {
		return []byte("null"), nil
	}
	return p.doc, nil
}

// UnmarshalJSON parses a policy document, as ParsePolicy does but without the size
// limit: a stored document passed it, and its escaped form may be longer.
func (p *Policy) UnmarshalJSON(b []byte) error {
	q, err := parsePolicy(b)
	if err != nil {
		return fmt.Errorf("s3: decode bucket policy: %w", err)
	}
	*p = *q
	return nil
}

// Evaluate says whether the policy allows, denies or says nothing about req: Deny if
// any applying statement denies, else Allow if any applying statement allows, else
// EffectNone. A nil policy says nothing.
func (p *Policy) Evaluate(req PolicyRequest) Effect {
	if p == nil {
		return EffectNone
	}
	subject := req.Bucket
	if req.Key != "" {
		subject = req.Bucket + "/" + req.Key
	}
	// Action patterns are stored in lower case: lower the action once, not per pattern.
	req.Action = core.ASCIILower(req.Action)
	eff := EffectNone
	for i := range p.statements {
		st := &p.statements[i]
		if !st.applies(req, subject) {
			continue
		}
		if st.deny {
			return EffectDeny
		}
		eff = EffectAllow
	}
	return eff
}

// applies reports whether the statement's principal, action, resource and conditions
// all match the request (subject is "bucket" or "bucket/key"; req.Action in lower
// case).
func (st *statement) applies(req PolicyRequest, subject string) bool {
	if st.principalMatches(req.Requester) == st.notPrincipal {
		return false
	}
	if anyMatch(st.actions, req.Action, false) == st.notAction {
		return false
	}
	if anyMatch(st.resources, subject, false) == st.notResource {
		return false
	}
	for i := range st.conds {
		if !st.conds[i].holds(req) {
			return false
		}
	}
	return true
}

// principalMatches reports whether the principal list names r: "*" names everyone,
// a canonical id only that signed-in user.
func (st *statement) principalMatches(r Requester) bool {
	if st.everyone {
		return true
	}
	if r.Anonymous || r.ID == "" {
		return false
	}
	return containsString(st.ids, r.ID)
}

// anyMatch reports whether s matches one of the patterns.
func anyMatch(patterns []string, s string, fold bool) bool {
	for _, p := range patterns {
		if globMatch(p, s, fold) {
			return true
		}
	}
	return false
}

// lookup returns the request's value for a condition key (lower case) as a string,
// and whether the request has one.
func (req PolicyRequest) lookup(key string) (string, bool) {
	switch key {
	case condSourceIP:
		if !req.Requester.SourceIP.IsValid() {
			return "", false
		}
		return req.Requester.SourceIP.String(), true
	case condSecureTransport:
		return strconv.FormatBool(req.Requester.Secure), true
	case condCurrentTime:
		return req.time().Format(time.RFC3339), true
	case condEpochTime:
		return strconv.FormatInt(req.time().Unix(), 10), true
	}
	v, ok := req.Requester.Keys[key]
	return v, ok
}

// time returns the time the request is evaluated at.
func (req PolicyRequest) time() time.Time {
	if req.now.IsZero() {
		return time.Now()
	}
	return req.now
}

// holds evaluates the condition against the request: any value matching makes a
// positive operator hold and a negated one fail. An absent key makes a positive
// operator fail and a negated one hold, except that ...IfExists operators hold; Null
// holds when one of its values says the key's absence (true: absent, false: present).
func (c *condition) holds(req PolicyRequest) bool {
	if c.set != setNone {
		return c.holdsForSet(req)
	}
	var v string
	var present bool
	switch c.key {
	case condExistingTag:
		v, present = tagValue(req.Tags.Existing, c.tag)
	case condRequestTag:
		if req.Tags.HasRequest {
			v, present = tagValue(req.Tags.Request, c.tag)
		}
	default:
		v, present = req.lookup(c.key)
	}
	if c.op.kind == condNull {
		return slices.Contains(c.bools, !present)
	}
	if !present {
		return c.ifExists || c.op.negate
	}
	return c.matches(req, v) != c.op.negate
}

// holdsForSet evaluates a condition with a set qualifier against the keys of the tags
// the request asks for, as AWS does: each request value passes when it matches one of
// the condition's values (a negated operator: none of them); ForAnyValue holds when one
// passes, ForAllValues when all do (also when there are none). A request that asks for
// no tags has no value: ForAnyValue then fails unless ...IfExists.
func (c *condition) holdsForSet(req PolicyRequest) bool {
	keys := req.Tags.Request
	if !req.Tags.HasRequest || len(keys) == 0 {
		return c.set == setAllValues || c.ifExists
	}
	for _, t := range keys {
		pass := c.matches(req, t.Key) != c.op.negate
		if pass && c.set == setAnyValue {
			return true
		}
		if !pass && c.set == setAllValues {
			return false
		}
	}
	return c.set == setAllValues
}

// matches reports whether any of the condition's values matches the request's value v
// of the key (before negation).
func (c *condition) matches(req PolicyRequest, v string) bool {
	switch c.op.kind {
	case condIP:
		ip := req.Requester.SourceIP.Unmap().WithZone("")
		return slices.ContainsFunc(c.prefixes, func(p netip.Prefix) bool { return p.Contains(ip) })
	case condBool:
		return slices.Contains(c.bools, req.Requester.Secure)
	case condDate:
		now := req.time()
		return slices.ContainsFunc(c.times, func(t time.Time) bool { return compareTime(now, t, c.op.cmp) })
	case condNumeric:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(c.nums, func(x float64) bool { return compareNumber(n, x, c.op.cmp) })
	}
	switch c.op.str {
	case strEqualsFold:
		return slices.ContainsFunc(c.strs, func(x string) bool { return strings.EqualFold(x, v) })
	case strLike:
		return slices.ContainsFunc(c.strs, func(p string) bool { return globMatch(p, v, false) })
	}
	return slices.Contains(c.strs, v)
}

// compareNumber compares the request's number n with a condition value x.
func compareNumber(n, x float64, cmp dateCmp) bool {
	switch cmp {
	case cmpEq:
		return n == x
	case cmpLt:
		return n < x
	case cmpLe:
		return n <= x
	case cmpGt:
		return n > x
	case cmpGe:
		return n >= x
	}
	return false
}

// compareTime compares the request time now with a condition value t.
func compareTime(now, t time.Time, cmp dateCmp) bool {
	switch cmp {
	case cmpEq:
		return now.Equal(t)
	case cmpLt:
		return now.Before(t)
	case cmpLe:
		return !now.After(t)
	case cmpGt:
		return now.After(t)
	case cmpGe:
		return !now.Before(t)
	}
	return false
}
