package s3

import (
	"github.com/cairnkv/cairn/core"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// stmt builds a one-statement policy document on bucket "bkt" from statement fields
// given as raw JSON.
func stmt(fields string) string {
	return `{"Version":"2008-10-17","Statement":[{` + fields + `}]}`
}

// allowAll is the principal, action and resource fields matching everything in "bkt".
const allowAll = `"Effect":"Allow","Principal":"*","Action":"*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]`

func TestParsePolicyValid(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"minimal 2008", stmt(allowAll)},
		{"version 2012", `{"Version":"2012-10-17","Statement":[{` + allowAll + `}]}`},
		{"no version", `{"Statement":[{` + allowAll + `}]}`},
		{"id and sid", `{"Id":"p1","Statement":[{"Sid":"s1",` + allowAll + `},{"Sid":"s2",` + allowAll + `}]}`},
		{"single statement object", `{"Statement":{` + allowAll + `}}`},
		{"whitespace", "\n {\n\t\"Statement\" : [ {" + allowAll + "} ]\n}\n"},
		{"principal AWS star", stmt(`"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"principal AWS star list", stmt(`"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"principal AWS id", stmt(`"Effect":"Allow","Principal":{"AWS":"abc123"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"principal AWS ids", stmt(`"Effect":"Allow","Principal":{"AWS":["abc","def"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"principal CanonicalUser", stmt(`"Effect":"Allow","Principal":{"CanonicalUser":"abc"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"NotPrincipal", stmt(`"Effect":"Deny","NotPrincipal":{"AWS":"abc"},"Action":"s3:*","Resource":"arn:aws:s3:::bkt/*"`)},
		{"action wildcards", stmt(`"Effect":"Allow","Principal":"*","Action":["s3:Get*","s3:?utObject","S3:LISTBUCKET"],"Resource":"arn:aws:s3:::bkt"`)},
		{"NotAction", stmt(`"Effect":"Allow","Principal":"*","NotAction":"s3:DeleteObject","Resource":"arn:aws:s3:::bkt/*"`)},
		{"NotResource", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotResource":"arn:aws:s3:::bkt/private/*"`)},
		{"resource wildcard bucket", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b?t*"`)},
		{"ip v4 and v6", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32","192.168.1.1"]}}`)},
		{"not ip", stmt(allowAll + `,"Condition":{"NotIpAddress":{"aws:SourceIp":"10.1.2.3/24"}}`)},
		{"key case", stmt(allowAll + `,"Condition":{"IpAddress":{"AWS:SOURCEIP":"10.0.0.0/8"}}`)},
		{"tag key sets", stmt(allowAll + `,"Condition":{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]},"ForAllValues:StringLikeIfExists":{"S3:requestObjectTagKeys":"x*"}}`)},
		{"tag keys", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/a b":"x"},"StringNotLike":{"S3:REQUESTOBJECTTAG/Env":["prod*"]},"Null":{"s3:RequestObjectTag/owner":"false"}}`)},
		{"secure transport", stmt(allowAll + `,"Condition":{"Bool":{"aws:SecureTransport":"TRUE"}}`)},
		{"secure transport json bool", stmt(allowAll + `,"Condition":{"Bool":{"aws:SecureTransport":[false]}}`)},
		{"dates", stmt(allowAll + `,"Condition":{"DateGreaterThan":{"aws:CurrentTime":"2012-01-01T00:00:00Z"},"DateLessThan":{"aws:EpochTime":4102444800},"DateNotEquals":{"aws:CurrentTime":"2013-05-06"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.doc))
			if err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
			if err := p.CheckBucket("bkt"); err != nil {
				t.Fatalf("CheckBucket: %v", err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, []byte(tt.doc)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p.Document(), want.Bytes()) {
				t.Errorf("document %s, want %s", p.Document(), want.Bytes())
			}
			// The JSON form is the document, and decoding it gives the same policy.
			b, err := json.Marshal(struct{ P *Policy }{p})
			if err != nil {
				t.Fatal(err)
			}
			var back struct{ P *Policy }
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if !bytes.Equal(back.P.Document(), p.Document()) || len(back.P.statements) != len(p.statements) {
				t.Errorf("round trip gave %s", back.P.Document())
			}
		})
	}
}

// manyConds renders a condition block of n (operator, key) pairs: the string keys
// under each string operator and its IfExists form.
func manyConds(n int) string {
	var ops []string
	for _, op := range []string{"StringEquals", "StringNotEquals", "StringLike", "StringNotLike", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase"} {
		ops = append(ops, op, op+"IfExists")
	}
	var blocks []string
	for _, op := range ops {
		var keys []string
		for _, k := range stringKeys {
			if n == 0 {
				break
			}
			keys = append(keys, fmt.Sprintf("%q:\"x\"", k))
			n--
		}
		if len(keys) > 0 {
			blocks = append(blocks, fmt.Sprintf("%q:{%s}", op, strings.Join(keys, ",")))
		}
	}
	return "{" + strings.Join(blocks, ",") + "}"
}

func TestParsePolicyMalformed(t *testing.T) {
	tests := []struct{ name, doc, msg string }{
		{"empty", ``, "first byte"},
		{"not an object", `[]`, "first byte"},
		{"bad json", `{"Statement":[`, "invalid Json"},
		{"trailing garbage", stmt(allowAll) + `x`, "invalid Json"},
		{"not utf-8", "{\"Id\":\"\xff\",\"Statement\":[{" + allowAll + "}]}", "UTF-8"},
		{"duplicate key", `{"Statement":[{` + allowAll + `,"Effect":"Deny"}]}`, "appears twice"},
		{"bad version", `{"Version":"2020-01-01","Statement":[{` + allowAll + `}]}`, "version"},
		{"version not a string", `{"Version":1,"Statement":[{` + allowAll + `}]}`, "Version"},
		{"unknown top field", `{"Foo":1,"Statement":[{` + allowAll + `}]}`, `"Foo"`},
		{"no statement", `{"Version":"2008-10-17"}`, "Statement"},
		{"empty statement list", `{"Statement":[]}`, "no statement"},
		{"statement not object", `{"Statement":["x"]}`, "object"},
		{"duplicate sid", `{"Statement":[{"Sid":"a",` + allowAll + `},{"Sid":"a",` + allowAll + `}]}`, "unique"},
		{"unknown statement field", stmt(allowAll + `,"Foo":1`), `"Foo"`},
		{"tag condition without a tag key", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/":"x"}}`), "invalid condition key"},
		{"tag condition on a numeric operator", stmt(allowAll + `,"Condition":{"NumericEquals":{"s3:RequestObjectTag/n":"1"}}`), "invalid condition key"},
		{"tag key too long", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/` + strings.Repeat("k", 129) + `":"x"}}`), "invalid condition key"},
		{"set qualifier on a single-valued key", stmt(allowAll + `,"Condition":{"ForAnyValue:StringEquals":{"aws:username":"x"}}`), "invalid condition key"},
		{"set qualifier on a numeric operator", stmt(allowAll + `,"Condition":{"ForAnyValue:NumericEquals":{"s3:RequestObjectTagKeys":"1"}}`), "Invalid Condition type"},
		{"set qualifier on Null", stmt(allowAll + `,"Condition":{"ForAllValues:Null":{"s3:RequestObjectTagKeys":"true"}}`), "Invalid Condition type"},
		{"two set qualifiers", stmt(allowAll + `,"Condition":{"ForAnyValue:ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":"x"}}`), "Invalid Condition type"},
		{"tag keys condition", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:RequestObjectTagKeys":"x"}}`), "invalid condition key"},
		{"no effect", stmt(`"Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt"`), "Effect"},
		{"bad effect", stmt(`"Effect":"allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt"`), "effect"},
		{"no principal", stmt(`"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::bkt"`), "Principal"},
		{"principal and not principal", stmt(allowAll + `,"NotPrincipal":"*"`), "both"},
		{"principal bare id", stmt(`"Effect":"Allow","Principal":"abc","Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"principal federated", stmt(`"Effect":"Allow","Principal":{"Federated":"x"},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"principal service empty", stmt(`"Effect":"Allow","Principal":{"Service":""},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "service"},
		{"principal service wildcard", stmt(`"Effect":"Allow","Principal":{"Service":"s3.*"},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "service"},
		{"principal empty object", stmt(`"Effect":"Allow","Principal":{},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"principal empty list", stmt(`"Effect":"Allow","Principal":{"AWS":[]},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"principal number", stmt(`"Effect":"Allow","Principal":{"AWS":1},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"principal wildcard id", stmt(`"Effect":"Allow","Principal":{"CanonicalUser":"*"},"Action":"*","Resource":"arn:aws:s3:::bkt"`), "principal"},
		{"no action", stmt(`"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::bkt"`), "Action"},
		{"action other service", stmt(`"Effect":"Allow","Principal":"*","Action":"iam:GetUser","Resource":"arn:aws:s3:::bkt"`), "invalid action"},
		{"action empty", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:","Resource":"arn:aws:s3:::bkt"`), "invalid action"},
		{"action bad char", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:Get Object","Resource":"arn:aws:s3:::bkt"`), "invalid action"},
		{"action create bucket", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:CreateBucket","Resource":"arn:aws:s3:::bkt"`), "invalid action"},
		{"action list all", stmt(`"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:ListAllMyBuckets"],"Resource":"arn:aws:s3:::bkt"`), "invalid action"},
		{"action empty list", stmt(`"Effect":"Allow","Principal":"*","Action":[],"Resource":"arn:aws:s3:::bkt"`), "Action"},
		{"no resource", stmt(`"Effect":"Allow","Principal":"*","Action":"*"`), "Resource"},
		{"resource star", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"`), "invalid resource"},
		{"resource not s3", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:sqs:::bkt"`), "invalid resource"},
		{"resource empty path", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::"`), "invalid resource"},
		{"resource list of numbers", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":[1]`), "Resource"},
		{"condition not object", stmt(allowAll + `,"Condition":[]`), "Condition"},
		{"condition unknown operator", stmt(allowAll + `,"Condition":{"StringMatches":{"aws:Referer":"x"}}`), `"StringMatches"`},
		{"condition Null IfExists", stmt(allowAll + `,"Condition":{"NullIfExists":{"aws:Referer":"true"}}`), `"NullIfExists"`},
		{"condition double IfExists", stmt(allowAll + `,"Condition":{"StringLikeIfExistsIfExists":{"aws:Referer":"x"}}`), "Condition type"},
		{"condition operator case", stmt(allowAll + `,"Condition":{"stringequals":{"aws:Referer":"x"}}`), `"stringequals"`},
		{"condition string on ip key", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:SourceIp":"10.0.0.1"}}`), "condition key"},
		{"condition unknown key", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:x-amz-foo":"x"}}`), "condition key"},
		{"condition numeric key", stmt(allowAll + `,"Condition":{"NumericLessThan":{"s3:prefix":"1"}}`), "condition key"},
		{"condition bad number", stmt(allowAll + `,"Condition":{"NumericLessThan":{"s3:max-keys":"ten"}}`), "number"},
		{"condition bool number", stmt(allowAll + `,"Condition":{"NumericLessThan":{"s3:max-keys":true}}`), "number"},
		{"condition bad null", stmt(allowAll + `,"Condition":{"Null":{"aws:Referer":"maybe"}}`), "true or false"},
		{"too many condition values", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":[` + strings.TrimSuffix(strings.Repeat(`"x",`, MaxConditionValues+1), ",") + `]}}`), "values"},
		{"too many conditions", stmt(allowAll + `,"Condition":` + manyConds(MaxStatementConditions+1)), "conditions"},
		{"too many statements", `{"Statement":[` + strings.TrimSuffix(strings.Repeat(`{"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::b"},`, MaxPolicyStatements+1), ",") + `]}`, "statements"},
		{"condition wrong key", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SecureTransport":"true"}}`), "condition key"},
		{"condition no key", stmt(allowAll + `,"Condition":{"IpAddress":{}}`), "no key"},
		{"condition bad cidr", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}}`), "CIDR"},
		{"condition bad ip", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0"}}`), "IP address"},
		{"condition ip number", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":10}}`), "IP address"},
		{"condition empty values", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":[]}}`), "values"},
		{"condition object value", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":{"a":1}}}`), "values"},
		{"condition bad bool", stmt(allowAll + `,"Condition":{"Bool":{"aws:SecureTransport":"yes"}}`), "true or false"},
		{"condition bad date", stmt(allowAll + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}`), "date"},
		{"too large", `{"Id":"` + strings.Repeat("x", MaxPolicySize) + `","Statement":[{` + allowAll + `}]}`, "maximum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.doc))
			if err == nil {
				t.Fatalf("ParsePolicy accepted %s", p.Document())
			}
			e := AsError(err)
			if e == nil || e.Code != MalformedPolicy {
				t.Fatalf("error %v, want MalformedPolicy", err)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not mention %q", e.Message, tt.msg)
			}
		})
	}
}

func TestPolicyCheckBucket(t *testing.T) {
	tests := []struct {
		resource string
		ok       bool
	}{
		{"arn:aws:s3:::bkt", true},
		{"arn:aws:s3:::bkt/*", true},
		{"arn:aws:s3:::bkt/a/b?c*", true},
		{"arn:aws:s3:::b*", true},
		{"arn:aws:s3:::*", true},
		{"arn:aws:s3:::*/x", true},
		{"arn:aws:s3:::other", false},
		{"arn:aws:s3:::other/*", false},
		{"arn:aws:s3:::bkt2/*", false},
		{"arn:aws:s3:::bk", false},
		{"arn:aws:s3:::BKT", false},
	}
	for _, tt := range tests {
		p, err := ParsePolicy([]byte(stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":["arn:aws:s3:::bkt","` + tt.resource + `"]`)))
		if err != nil {
			t.Fatalf("%s: %v", tt.resource, err)
		}
		err = p.CheckBucket("bkt")
		if (err == nil) != tt.ok {
			t.Errorf("%s: CheckBucket = %v, want ok=%v", tt.resource, err, tt.ok)
		}
		if err != nil && !IsCode(err, MalformedPolicy) {
			t.Errorf("%s: code of %v", tt.resource, err)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		fold, want bool
	}{
		{"", "", false, true},
		{"", "a", false, false},
		{"*", "", false, true},
		{"*", "a/b/c", false, true},
		{"a*", "a", false, true},
		{"a*", "ba", false, false},
		{"*c", "a/b/c", false, true},
		{"a*b*c", "axxbyyc", false, true},
		{"a*b*c", "axxbyy", false, false},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"a?c", "aéc", false, true},
		{"a??c", "aéc", false, false},
		{"*?", "é", false, true},
		{"*??", "é", false, false},
		{"é*", "ébc", false, true},
		{"**a", "ba", false, true},
		{"bkt/photos/*.jpg", "bkt/photos/2012/x.jpg", false, true},
		{"bkt/photos/*.jpg", "bkt/photos/x.png", false, false},
		{"s3:getobject", "s3:GetObject", true, true},
		{"s3:get*", "s3:GetObjectAcl", true, true},
		{"s3:getobject", "s3:GetObject", false, false},
		{"abc", "ABC", false, false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, tt.s, tt.fold); got != tt.want {
			t.Errorf("globMatch(%q, %q, %v) = %v, want %v", tt.pattern, tt.s, tt.fold, got, tt.want)
		}
	}
}

func TestPolicyEvaluate(t *testing.T) {
	const alice, bob = "aaaa", "bbbb"
	user := func(id string) Requester {
		return Requester{ID: id, SourceIP: netip.MustParseAddr("10.1.2.3")}
	}
	anon := Requester{Anonymous: true, SourceIP: netip.MustParseAddr("10.1.2.3")}
	at := func(r Requester, ip string) Requester { r.SourceIP = netip.MustParseAddr(ip); return r }
	secure := func(r Requester) Requester { r.Secure = true; return r }
	noIP := func(r Requester) Requester { r.SourceIP = netip.Addr{}; return r }
	getObj := func(r Requester, key string) PolicyRequest {
		return PolicyRequest{Requester: r, Action: ActionGetObject, Bucket: "bkt", Key: key}
	}
	list := func(r Requester) PolicyRequest {
		return PolicyRequest{Requester: r, Action: ActionListBucket, Bucket: "bkt"}
	}
	put := func(r Requester, key string) PolicyRequest {
		return PolicyRequest{Requester: r, Action: ActionPutObject, Bucket: "bkt", Key: key}
	}
	now := time.Date(2020, 6, 1, 12, 0, 0, 0, time.UTC)
	when := func(q PolicyRequest, t time.Time) PolicyRequest { q.now = t; return q }
	with := func(r Requester, key, v string) Requester {
		keys := maps.Clone(r.Keys)
		if keys == nil {
			keys = map[string]string{}
		}
		keys[key] = v
		r.Keys = keys
		return r
	}

	const (
		N = EffectNone
		A = EffectAllow
		D = EffectDeny
	)
	tests := []struct {
		name string
		doc  string
		req  PolicyRequest
		want Effect
	}{
		// Principals.
		{"star matches anonymous", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), A},
		{"star matches users", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), A},
		{"AWS star matches anonymous", stmt(`"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), A},
		{"id matches its user", stmt(`"Effect":"Allow","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), A},
		{"id does not match others", stmt(`"Effect":"Allow","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(alice), "k"), N},
		{"id does not match anonymous", stmt(`"Effect":"Allow","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), N},
		{"id list", stmt(`"Effect":"Allow","Principal":{"AWS":["cccc","bbbb"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), A},
		{"canonical user", stmt(`"Effect":"Allow","Principal":{"CanonicalUser":["bbbb"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), A},
		{"not principal excludes", stmt(`"Effect":"Deny","NotPrincipal":{"AWS":"aaaa"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(alice), "k"), N},
		{"not principal includes others", stmt(`"Effect":"Deny","NotPrincipal":{"AWS":"aaaa"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), D},
		{"not principal includes anonymous", stmt(`"Effect":"Deny","NotPrincipal":{"AWS":"aaaa"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), D},

		// Actions.
		{"other action", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), N},
		{"action star", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), A},
		{"action s3 star", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), A},
		{"action prefix wildcard", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), A},
		{"action prefix wildcard other", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), N},
		{"action question mark", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:?utObject","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), A},
		{"action case", stmt(`"Effect":"Allow","Principal":"*","Action":"S3:GETOBJECT","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), A},
		{"action list", stmt(`"Effect":"Allow","Principal":"*","Action":["s3:DeleteObject","s3:PutObject"],"Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), A},
		{"not action", stmt(`"Effect":"Allow","Principal":"*","NotAction":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), A},
		{"not action excludes", stmt(`"Effect":"Allow","Principal":"*","NotAction":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"`), put(anon, "k"), N},

		// Resources.
		{"object arn, bucket request", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*"`), list(anon), N},
		{"bucket arn, bucket request", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt"`), list(anon), A},
		{"bucket arn, object request", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt"`), getObj(anon, "k"), N},
		{"prefix", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/public/*"`), getObj(anon, "public/a/b"), A},
		{"prefix other", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/public/*"`), getObj(anon, "private/a"), N},
		{"exact key", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/index.html"`), getObj(anon, "index.html"), A},
		{"exact key other", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/index.html"`), getObj(anon, "index.htm"), N},
		{"key case sensitive", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/Index.html"`), getObj(anon, "index.html"), N},
		{"suffix wildcard", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*.jpg"`), getObj(anon, "a/b.jpg"), A},
		{"question mark", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/v?/x"`), getObj(anon, "v1/x"), A},
		{"whole-bucket star", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt*"`), list(anon), A},
		{"other bucket", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*"`), PolicyRequest{Requester: anon, Action: ActionGetObject, Bucket: "bkt2", Key: "k"}, N},
		{"not resource", stmt(`"Effect":"Allow","Principal":"*","Action":"*","NotResource":"arn:aws:s3:::bkt/private/*"`), getObj(anon, "public"), A},
		{"not resource excludes", stmt(`"Effect":"Allow","Principal":"*","Action":"*","NotResource":"arn:aws:s3:::bkt/private/*"`), getObj(anon, "private/x"), N},
		{"resource list", stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":["arn:aws:s3:::bkt/a*","arn:aws:s3:::bkt/b*"]`), getObj(anon, "b1"), A},

		// IP conditions.
		{"ip v4 in", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`), getObj(anon, "k"), A},
		{"ip v4 out", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"192.168.0.0/16"}}`), getObj(anon, "k"), N},
		{"ip v4 list", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":["192.168.0.0/16","10.1.2.0/24"]}}`), getObj(anon, "k"), A},
		{"ip single address", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.1.2.3"}}`), getObj(anon, "k"), A},
		{"ip single address other", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.1.2.4"}}`), getObj(anon, "k"), N},
		{"ip host bits ignored", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.1.2.200/24"}}`), getObj(anon, "k"), A},
		{"ip v6 in", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"2001:db8::/32"}}`), getObj(at(anon, "2001:db8:1::5"), "k"), A},
		{"ip v6 out", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"2001:db8::/32"}}`), getObj(at(anon, "2001:db9::5"), "k"), N},
		{"ip v6 rule, v4 client", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"::/0"}}`), getObj(anon, "k"), N},
		{"ip mapped v4 client", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`), getObj(at(anon, "::ffff:10.9.9.9"), "k"), A},
		{"ip mapped v4 rule", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"::ffff:10.0.0.0/104"}}`), getObj(anon, "k"), A},
		{"not ip in", stmt(allowAll + `,"Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`), getObj(anon, "k"), N},
		{"not ip out", stmt(allowAll + `,"Condition":{"NotIpAddress":{"aws:SourceIp":["192.168.0.0/16","172.16.0.0/12"]}}`), getObj(anon, "k"), A},
		{"not ip v6", stmt(allowAll + `,"Condition":{"NotIpAddress":{"aws:SourceIp":"2001:db8::/32"}}`), getObj(at(anon, "2001:db8::1"), "k"), N},
		{"ip unknown source", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}`), getObj(noIP(anon), "k"), N},
		{"not ip unknown source", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`), getObj(noIP(anon), "k"), D},

		// SecureTransport.
		{"secure required, plain", stmt(allowAll + `,"Condition":{"Bool":{"aws:SecureTransport":"true"}}`), getObj(anon, "k"), N},
		{"secure required, tls", stmt(allowAll + `,"Condition":{"Bool":{"aws:SecureTransport":"true"}}`), getObj(secure(anon), "k"), A},
		{"deny plain", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}`), getObj(user(alice), "k"), D},
		{"deny plain, tls", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"Bool":{"aws:SecureTransport":false}}`), getObj(secure(user(alice)), "k"), N},

		// Several conditions must all hold.
		{"all conditions hold", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"},"Bool":{"aws:SecureTransport":"true"}}`), getObj(secure(anon), "k"), A},
		{"one condition fails", stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"},"Bool":{"aws:SecureTransport":"true"}}`), getObj(anon, "k"), N},

		// Dates.
		{"before deadline", stmt(allowAll + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"2021-01-01T00:00:00Z"}}`), when(getObj(anon, "k"), now), A},
		{"after deadline", stmt(allowAll + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"2020-01-01"}}`), when(getObj(anon, "k"), now), N},
		{"after start epoch", stmt(allowAll + `,"Condition":{"DateGreaterThanEquals":{"aws:EpochTime":1577836800}}`), when(getObj(anon, "k"), now), A},
		{"date equals", stmt(allowAll + `,"Condition":{"DateEquals":{"aws:CurrentTime":"2020-06-01T12:00:00Z"}}`), when(getObj(anon, "k"), now), A},
		{"date not equals", stmt(allowAll + `,"Condition":{"DateNotEquals":{"aws:CurrentTime":"2020-06-01T12:00:00Z"}}`), when(getObj(anon, "k"), now), N},
		{"date now", stmt(allowAll + `,"Condition":{"DateGreaterThan":{"aws:CurrentTime":"2001-01-01T00:00:00Z"}}`), getObj(anon, "k"), A},

		// String operators: values OR'ed, absent keys, IfExists.
		{"string equals", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":["http://a/","http://b/"]}}`), getObj(with(anon, CondReferer, "http://b/"), "k"), A},
		{"string equals other", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":["http://a/","http://b/"]}}`), getObj(with(anon, CondReferer, "http://c/"), "k"), N},
		{"string equals case", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":"http://A/"}}`), getObj(with(anon, CondReferer, "http://a/"), "k"), N},
		{"string equals absent", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":"http://a/"}}`), getObj(anon, "k"), N},
		{"string equals if exists, absent", stmt(allowAll + `,"Condition":{"StringEqualsIfExists":{"aws:Referer":"http://a/"}}`), getObj(anon, "k"), A},
		{"string equals if exists, other", stmt(allowAll + `,"Condition":{"StringEqualsIfExists":{"aws:Referer":"http://a/"}}`), getObj(with(anon, CondReferer, "x"), "k"), N},
		{"string not equals", stmt(allowAll + `,"Condition":{"StringNotEquals":{"aws:Referer":["http://a/","http://b/"]}}`), getObj(with(anon, CondReferer, "http://c/"), "k"), A},
		{"string not equals one of", stmt(allowAll + `,"Condition":{"StringNotEquals":{"aws:Referer":["http://a/","http://b/"]}}`), getObj(with(anon, CondReferer, "http://a/"), "k"), N},
		{"string not equals absent", stmt(allowAll + `,"Condition":{"StringNotEquals":{"aws:Referer":"http://a/"}}`), getObj(anon, "k"), A},
		{"string not equals if exists, absent", stmt(allowAll + `,"Condition":{"StringNotEqualsIfExists":{"aws:Referer":"http://a/"}}`), getObj(anon, "k"), A},
		{"string equals ignore case", stmt(allowAll + `,"Condition":{"StringEqualsIgnoreCase":{"aws:UserAgent":"Curl/8"}}`), getObj(with(anon, CondUserAgent, "cURL/8"), "k"), A},
		{"string not equals ignore case", stmt(allowAll + `,"Condition":{"StringNotEqualsIgnoreCase":{"aws:UserAgent":"Curl/8"}}`), getObj(with(anon, CondUserAgent, "cURL/8"), "k"), N},
		{"string like", stmt(allowAll + `,"Condition":{"StringLike":{"aws:UserAgent":["*boto3*","aws-cli/*"]}}`), getObj(with(anon, CondUserAgent, "Boto3/1.2 botocore"), "k"), N},
		{"string like match", stmt(allowAll + `,"Condition":{"StringLike":{"aws:UserAgent":["*boto3*","aws-cli/?.*"]}}`), getObj(with(anon, CondUserAgent, "aws-cli/2.15"), "k"), A},
		{"string not like", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringNotLike":{"aws:Referer":"http://example.com/*"}}`), getObj(with(anon, CondReferer, "http://evil.com/"), "k"), D},
		{"string not like match", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringNotLike":{"aws:Referer":"http://example.com/*"}}`), getObj(with(anon, CondReferer, "http://example.com/x"), "k"), N},
		{"string not like absent", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringNotLike":{"aws:Referer":"http://example.com/*"}}`), getObj(anon, "k"), D},
		{"string not like if exists absent", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringNotLikeIfExists":{"aws:Referer":"http://example.com/*"}}`), getObj(anon, "k"), D},
		{"key name case", stmt(allowAll + `,"Condition":{"StringEquals":{"AWS:REFERER":"r"}}`), getObj(with(anon, CondReferer, "r"), "k"), A},
		{"prefix", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt","Condition":{"StringLike":{"s3:prefix":["home/bob/*",""]}}`), list(with(anon, CondPrefix, "home/bob/x")), A},
		{"prefix other", stmt(`"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt","Condition":{"StringLike":{"s3:prefix":["home/bob/*",""]}}`), list(with(anon, CondPrefix, "home/alice/")), N},
		{"several keys AND'ed", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":"r","aws:UserAgent":"u"}}`), getObj(with(with(anon, CondReferer, "r"), CondUserAgent, "v"), "k"), N},
		{"several keys all hold", stmt(allowAll + `,"Condition":{"StringEquals":{"aws:Referer":"r","aws:UserAgent":"u"}}`), getObj(with(with(anon, CondReferer, "r"), CondUserAgent, "u"), "k"), A},
		{"number as string value", stmt(allowAll + `,"Condition":{"StringEquals":{"s3:max-keys":10}}`), list(with(anon, CondMaxKeys, "10")), A},

		// Numeric operators.
		{"max-keys under", stmt(allowAll + `,"Condition":{"NumericLessThanEquals":{"s3:max-keys":"100"}}`), list(with(anon, CondMaxKeys, "100")), A},
		{"max-keys over", stmt(allowAll + `,"Condition":{"NumericLessThanEquals":{"s3:max-keys":100}}`), list(with(anon, CondMaxKeys, "101")), N},
		{"max-keys absent", stmt(allowAll + `,"Condition":{"NumericLessThanEquals":{"s3:max-keys":100}}`), list(anon), N},
		{"max-keys absent if exists", stmt(allowAll + `,"Condition":{"NumericLessThanEqualsIfExists":{"s3:max-keys":100}}`), list(anon), A},
		{"max-keys not a number", stmt(allowAll + `,"Condition":{"NumericGreaterThan":{"s3:max-keys":1}}`), list(with(anon, CondMaxKeys, "many")), N},
		{"max-keys not equals", stmt(allowAll + `,"Condition":{"NumericNotEquals":{"s3:max-keys":[1,2]}}`), list(with(anon, CondMaxKeys, "3")), A},

		// Null tests presence.
		{"null true, absent", stmt(allowAll + `,"Condition":{"Null":{"aws:Referer":"true"}}`), getObj(anon, "k"), A},
		{"null true, present", stmt(allowAll + `,"Condition":{"Null":{"aws:Referer":true}}`), getObj(with(anon, CondReferer, ""), "k"), N},
		{"null false, present", stmt(allowAll + `,"Condition":{"Null":{"aws:Referer":"false"}}`), getObj(with(anon, CondReferer, "r"), "k"), A},
		{"null false, absent", stmt(allowAll + `,"Condition":{"Null":{"aws:Referer":"false"}}`), getObj(anon, "k"), N},
		{"null source ip", stmt(allowAll + `,"Condition":{"Null":{"aws:SourceIp":"true"}}`), getObj(noIP(anon), "k"), A},
		{"null secure transport", stmt(allowAll + `,"Condition":{"Null":{"aws:SecureTransport":"true"}}`), getObj(anon, "k"), N},

		// IfExists on the other kinds.
		{"ip if exists, absent", stmt(allowAll + `,"Condition":{"IpAddressIfExists":{"aws:SourceIp":"192.168.0.0/16"}}`), getObj(noIP(anon), "k"), A},
		{"ip if exists, present", stmt(allowAll + `,"Condition":{"IpAddressIfExists":{"aws:SourceIp":"192.168.0.0/16"}}`), getObj(anon, "k"), N},
		{"bool if exists", stmt(allowAll + `,"Condition":{"BoolIfExists":{"aws:SecureTransport":"true"}}`), getObj(anon, "k"), N},
		{"date if exists", stmt(allowAll + `,"Condition":{"DateLessThanIfExists":{"aws:CurrentTime":"2021-01-01"}}`), when(getObj(anon, "k"), now), A},

		// Service principals never match a Cairn user.
		{"service principal", stmt(`"Effect":"Allow","Principal":{"Service":["s3.amazonaws.com","logging.s3.amazonaws.com"]},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), N},
		{"service principal anonymous", stmt(`"Effect":"Allow","Principal":{"Service":"s3.amazonaws.com"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(anon, "k"), N},
		{"service and user principal", stmt(`"Effect":"Allow","Principal":{"Service":"s3.amazonaws.com","AWS":"bbbb"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), A},
		{"not service principal", stmt(`"Effect":"Deny","NotPrincipal":{"Service":"s3.amazonaws.com"},"Action":"*","Resource":"arn:aws:s3:::bkt/*"`), getObj(user(bob), "k"), D},

		// Combining statements: Deny wins whatever the order, Allow beats silence.
		{"deny overrides allow", `{"Statement":[{` + allowAll + `},{"Effect":"Deny","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}]}`, getObj(user(bob), "secret/x"), D},
		{"deny first overrides allow", `{"Statement":[{"Effect":"Deny","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"},{` + allowAll + `}]}`, getObj(user(bob), "secret/x"), D},
		{"deny elsewhere, allow here", `{"Statement":[{` + allowAll + `},{"Effect":"Deny","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}]}`, getObj(user(bob), "public"), A},
		{"deny other user", `{"Statement":[{` + allowAll + `},{"Effect":"Deny","Principal":{"AWS":"bbbb"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}]}`, getObj(user(alice), "secret/x"), A},
		{"deny with failing condition says nothing", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"IpAddress":{"aws:SourceIp":"192.168.0.0/16"}}`), getObj(anon, "k"), N},
		{"deny ip range", stmt(`"Effect":"Deny","Principal":"*","Action":"*","Resource":"arn:aws:s3:::bkt/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`), getObj(user(alice), "k"), D},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.doc))
			if err != nil {
				t.Fatalf("ParsePolicy: %v", err)
			}
			if got := p.Evaluate(tt.req); got != tt.want {
				t.Errorf("Evaluate = %v, want %v", got, tt.want)
			}
		})
	}
	var nilPolicy *Policy
	if got := nilPolicy.Evaluate(getObj(anon, "k")); got != EffectNone {
		t.Errorf("nil policy: %v", got)
	}
}

// FuzzParsePolicy checks that parsing never panics, that an accepted document survives
// the round trip through its JSON form, and that evaluating it does not panic.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(stmt(allowAll)))
	f.Add([]byte(stmt(allowAll + `,"Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","::1"]},"Bool":{"aws:SecureTransport":"true"}}`)))
	f.Add([]byte(`{"Statement":{"Effect":"Deny","NotPrincipal":{"AWS":["a","b"]},"NotAction":"s3:Get?bject","NotResource":"arn:aws:s3:::bkt/x*"}}`))
	f.Add([]byte(stmt(allowAll + `,"Condition":{"DateLessThan":{"aws:EpochTime":12345}}`)))
	f.Add([]byte(`{"a":{"b":[1,{"c":2}],"c":3}}`))
	f.Add([]byte(stmt(allowAll + `,"Condition":{"StringLikeIfExists":{"aws:Referer":["*a*?b*",""]},"Null":{"s3:prefix":"false"},"NumericLessThan":{"s3:max-keys":"1e2"}}`)))
	f.Add([]byte(stmt(`"Effect":"Allow","Principal":{"Service":"s3.amazonaws.com","AWS":"a"},"Action":"*","Resource":"arn:aws:s3:::bkt","Condition":{"StringNotEqualsIgnoreCase":{"aws:UserAgent":"É"}}`)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := ParsePolicy(doc)
		if err != nil {
			if !IsCode(err, MalformedPolicy) {
				t.Fatalf("error %v is not MalformedPolicy", err)
			}
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back Policy
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !bytes.Equal(back.doc, p.doc) || len(back.statements) != len(p.statements) {
			t.Fatalf("round trip: %s became %s", p.doc, back.doc)
		}
		_ = p.CheckBucket("bkt")
		keys := map[string]string{CondReferer: "http://x/aéb", CondUserAgent: "é", CondPrefix: "", CondMaxKeys: "100"}
		for _, r := range []Requester{{Anonymous: true}, {ID: "a", SourceIP: netip.MustParseAddr("10.0.0.1"), Keys: keys}, {ID: "b", Secure: true, SourceIP: netip.MustParseAddr("::1")}} {
			for _, key := range []string{"", "x", "bkt/x*é"} {
				p.Evaluate(PolicyRequest{Requester: r, Action: ActionGetObject, Bucket: "bkt", Key: key})
			}
		}
	})
}

// asciiUpper upper-cases the ASCII letters of s.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// FuzzGlobMatch compares the matcher with a plain recursive one over runes, with and
// without case folding.
func FuzzGlobMatch(f *testing.F) {
	f.Add("a*b?c", "axxbéc")
	f.Add("*?*", "é")
	f.Add("**", "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 64 || !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return // policies and keys are UTF-8
		}
		want := slowGlob([]rune(pattern), []rune(s))
		if got := globMatch(pattern, s, false); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, want %v", pattern, s, got, want)
		}
		// With fold, ASCII letters match ignoring case (and nothing else changes).
		want = slowGlob([]rune(core.ASCIILower(pattern)), []rune(core.ASCIILower(s)))
		if got := globMatch(strings.ToUpper(pattern), s, true); strings.ToUpper(pattern) == asciiUpper(pattern) && got != want {
			t.Fatalf("globMatch(%q, %q, fold) = %v, want %v", strings.ToUpper(pattern), s, got, want)
		}
	})
}

// slowGlob is the reference matcher: dynamic programming over runes, where m[i][j]
// says whether p[i:] matches s[j:] (quadratic, never exponential, obviously right).
func slowGlob(p, s []rune) bool {
	m := make([][]bool, len(p)+1)
	for i := range m {
		m[i] = make([]bool, len(s)+1)
	}
	m[len(p)][len(s)] = true
	for i := len(p) - 1; i >= 0; i-- {
		for j := len(s); j >= 0; j-- {
			switch {
			case p[i] == '*':
				m[i][j] = m[i+1][j] || j < len(s) && m[i][j+1]
			case j < len(s) && (p[i] == '?' || p[i] == s[j]):
				m[i][j] = m[i+1][j+1]
			}
		}
	}
	return m[0][0]
}

// policyDoc renders a one-statement policy on bucket.
func policyDoc(bucket, effect, principal, action, resource, cond string) []byte {
	s := fmt.Sprintf(`{"Version":"2008-10-17","Statement":[{"Sid":"s","Effect":%q,"Principal":%s,"Action":%q,"Resource":%q`,
		effect, principal, action, "arn:aws:s3:::"+bucket+resource)
	if cond != "" {
		s += `,"Condition":` + cond
	}
	return []byte(s + "}]}")
}

func TestBucketPolicyService(t *testing.T) {
	ctx := context.Background()
	s, db := newTestService(t)
	alice := mustUser(t, s, "alice")
	bob := mustUser(t, s, "bob")
	anon := AnonymousRequester
	mustBucket(t, s, alice, "pol", "private")
	put(t, s, alice, "pol", "doc", []byte("hello"))

	// No policy yet.
	_, err := s.BucketPolicy(ctx, alice, "pol")
	wantCode(t, err, NoSuchBucketPolicy)
	_, err = s.BucketPolicy(ctx, bob, "pol")
	wantCode(t, err, AccessDenied)
	_, err = s.BucketPolicy(ctx, alice, "nope")
	wantCode(t, err, NoSuchBucket)
	if err := s.DeleteBucketPolicy(ctx, alice, "pol"); err != nil {
		t.Fatalf("delete of no policy: %v", err)
	}
	if _, err := s.OpenObject(ctx, anon, "pol", "doc"); !IsCode(err, AccessDenied) {
		t.Fatalf("anonymous read of a private object: %v", err)
	}

	// Only the owner sets it; a bad one is MalformedPolicy.
	doc := policyDoc("pol", "Allow", `"*"`, "s3:GetObject", "/*", "")
	wantCode(t, s.SetBucketPolicy(ctx, bob, "pol", doc), AccessDenied)
	wantCode(t, s.SetBucketPolicy(ctx, anon, "pol", doc), AccessDenied)
	wantCode(t, s.SetBucketPolicy(ctx, alice, "nope", doc), NoSuchBucket)
	wantCode(t, s.SetBucketPolicy(ctx, alice, "pol", []byte(`{"Statement":[]}`)), MalformedPolicy)
	wantCode(t, s.SetBucketPolicy(ctx, alice, "pol", policyDoc("other", "Allow", `"*"`, "s3:GetObject", "/*", "")), MalformedPolicy)
	if err := s.SetBucketPolicy(ctx, alice, "pol", []byte("  {\n"+string(doc[1:])+"\n")); err != nil {
		t.Fatalf("set: %v", err)
	}

	// The policy grants anonymous reads of the private object.
	if got := read(t, s, anon, "pol", "doc"); string(got) != "hello" {
		t.Fatalf("anonymous read: %q", got)
	}
	// But not writes, nor listing (the bucket ARN is not named).
	if _, err := s.PutObject(ctx, anon, "pol", "x", PutInput{Body: strings.NewReader("x"), Size: 1}); !IsCode(err, AccessDenied) {
		t.Fatalf("anonymous put: %v", err)
	}
	if _, err := s.ListObjects(ctx, anon, "pol", ListOptions{MaxKeys: 10}); !IsCode(err, AccessDenied) {
		t.Fatalf("anonymous list: %v", err)
	}

	// The document reads back compacted, to the owner only.
	got, err := s.BucketPolicy(ctx, alice, "pol")
	if err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("get: %s, %v; want %s", got, err, doc)
	}
	_, err = s.BucketPolicy(ctx, bob, "pol")
	wantCode(t, err, AccessDenied)

	// It survives a reload of the bucket record (cache dropped).
	s.buckets.drop("pol")
	b, err := s.Bucket(ctx, "pol")
	if err != nil || b.Policy == nil || !bytes.Equal(b.Policy.Document(), doc) {
		t.Fatalf("reloaded bucket: %+v, %v", b, err)
	}
	if got := read(t, s, anon, "pol", "doc"); string(got) != "hello" {
		t.Fatalf("anonymous read after reload: %q", got)
	}

	// A policy may let others read it.
	if err := s.SetBucketPolicy(ctx, alice, "pol", policyDoc("pol", "Allow", `{"AWS":"`+bob.ID+`"}`, "s3:GetBucketPolicy", "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BucketPolicy(ctx, bob, "pol"); err != nil {
		t.Fatalf("bob reads a policy granting it: %v", err)
	}
	wantCode(t, s.SetBucketPolicy(ctx, bob, "pol", doc), AccessDenied)
	wantCode(t, s.DeleteBucketPolicy(ctx, bob, "pol"), AccessDenied)
	// The replaced policy no longer grants anonymous reads.
	if _, err := s.OpenObject(ctx, anon, "pol", "doc"); !IsCode(err, AccessDenied) {
		t.Fatalf("anonymous read after replacement: %v", err)
	}

	// A Deny for the owner blocks its writes, but not the policy operations.
	deny := policyDoc("pol", "Deny", `{"AWS":["`+alice.ID+`"]}`, "*", "*", "")
	if err := s.SetBucketPolicy(ctx, alice, "pol", deny); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject(ctx, alice, "pol", "y", PutInput{Body: strings.NewReader("y"), Size: 1}); !IsCode(err, AccessDenied) {
		t.Fatalf("owner put under a Deny: %v", err)
	}
	if _, err := s.OpenObject(ctx, alice, "pol", "doc"); !IsCode(err, AccessDenied) {
		t.Fatalf("owner read under a Deny: %v", err)
	}
	wantCode(t, s.DeleteBucket(ctx, alice, "pol"), AccessDenied)
	if got, err := s.BucketPolicy(ctx, alice, "pol"); err != nil || !bytes.Equal(got, deny) {
		t.Fatalf("owner reads its policy under a Deny: %s, %v", got, err)
	}
	if err := s.DeleteBucketPolicy(ctx, alice, "pol"); err != nil {
		t.Fatalf("owner deletes its policy under a Deny: %v", err)
	}
	_, err = s.BucketPolicy(ctx, alice, "pol")
	wantCode(t, err, NoSuchBucketPolicy)
	put(t, s, alice, "pol", "y", []byte("y"))

	// A Deny on a source range blocks even the owner; outside it nothing changes.
	ipDeny := policyDoc("pol", "Deny", `"*"`, "s3:*", "/*", `{"IpAddress":{"aws:SourceIp":"127.0.0.0/8"}}`)
	if err := s.SetBucketPolicy(ctx, alice, "pol", ipDeny); err != nil {
		t.Fatal(err)
	}
	local := alice
	local.SourceIP = netip.MustParseAddr("127.0.0.1")
	if _, err := s.OpenObject(ctx, local, "pol", "doc"); !IsCode(err, AccessDenied) {
		t.Fatalf("read from a denied address: %v", err)
	}
	remote := alice
	remote.SourceIP = netip.MustParseAddr("192.0.2.1")
	if got := read(t, s, remote, "pol", "doc"); string(got) != "hello" {
		t.Fatalf("read from another address: %q", got)
	}

	// The deleted policy is gone from storage too.
	if err := s.DeleteBucketPolicy(ctx, alice, "pol"); err != nil {
		t.Fatal(err)
	}
	v, err := db.Get(bucketKey("pol"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(v, []byte("policy")) {
		t.Errorf("bucket record still has a policy: %s", v)
	}
}

// TestGlobMatchLinear: patterns of many *s against long strings finish at once; a
// backtracking matcher takes time exponential in the stars, and one retrying every
// star position len(pattern)·len(s) steps (here about 10^10).
func TestGlobMatchLinear(t *testing.T) {
	s := strings.Repeat("a", 1<<20)
	for _, tt := range []struct {
		pattern string
		want    bool
	}{
		{strings.Repeat("*a", 10000) + "*b", false},
		{strings.Repeat("a*", 10000) + "b", false},
		{strings.Repeat("*a", 10000) + "*", true},
		{"*" + strings.Repeat("a", 5000) + "b*", false},
	} {
		start := time.Now()
		if got := globMatch(tt.pattern, s, false); got != tt.want {
			t.Errorf("globMatch(%.20q…) = %v, want %v", tt.pattern, got, tt.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("globMatch(%.20q…) took %v", tt.pattern, d)
		}
	}
}
