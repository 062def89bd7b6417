package s3api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// lifecycleDoc is a LifecycleConfiguration of the given rules' inner XML.
func lifecycleDoc(rules ...string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>` +
		strings.Join(rules, `</Rule><Rule>`) + `</Rule></LifecycleConfiguration>`
}

// TestBucketLifecycleHTTP: PUT/GET/DELETE /{bucket}?lifecycle store, answer and
// remove the configuration (GET without one is 404 NoSuchLifecycleConfiguration);
// refused configurations answer AWS's codes and change nothing; another user is
// refused; other methods are 405; PUT, GET and HEAD of an object a rule will expire say
// so in x-amz-expiration, and of others do not.
func TestBucketLifecycleHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("lcy", e.alice)
	get := mpReq{method: "GET", path: "/lcy", query: "lifecycle", as: e.alice}
	e.mustErr(404, s3types.NoSuchLifecycleConfiguration, get)
	rule := `<ID>logs-rule</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`
	put := mpReq{method: "PUT", path: "/lcy", query: "lifecycle", body: lifecycleDoc(rule), as: e.alice}
	e.must(200, put)
	lc, err := s3xml.ParseLifecycle([]byte(e.must(200, get).body))
	if err != nil || len(lc.Rules) != 1 || lc.Rules[0].ID != "logs-rule" || lc.Rules[0].Filter.Prefix != "logs/" || lc.Rules[0].Expiration.Days != 1 {
		t.Fatalf("GET ?lifecycle: %+v %v", lc, err)
	}
	for _, c := range []struct {
		name   string
		status int
		code   s3types.Code
		body   string
	}{
		{"id too long", 400, s3types.InvalidArgument, lifecycleDoc(strings.Replace(rule, "logs-rule", strings.Repeat("a", 256), 1))},
		{"same id", 400, s3types.InvalidArgument, lifecycleDoc(rule, rule)},
		{"zero days", 400, s3types.InvalidArgument, lifecycleDoc(strings.Replace(rule, "<Days>1<", "<Days>0<", 1))},
		{"status", 400, s3types.MalformedXML, lifecycleDoc(strings.Replace(rule, "Enabled", "enabled", 1))},
		{"date at noon", 400, s3types.InvalidArgument, lifecycleDoc(strings.Replace(rule, "<Days>1</Days>", "<Date>2030-01-01T12:00:00Z</Date>", 1))},
		{"transition", 501, s3types.NotImplemented, lifecycleDoc(rule + `<Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`)},
		{"no action", 400, s3types.InvalidRequest, lifecycleDoc(`<ID>x</ID><Status>Enabled</Status>`)},
		{"too big", 400, s3types.MaxMessageLengthExceeded, lifecycleDoc(rule) + strings.Repeat(" ", s3xml.MaxLifecycleBody)},
	} {
		bad := put
		bad.body = c.body
		t.Log(c.name)
		e.mustErr(c.status, c.code, bad)
	}
	if got := e.must(200, get).body; !strings.Contains(got, "<ID>logs-rule</ID>") {
		t.Fatalf("a refused configuration changed the stored one: %s", got)
	}
	e.mustErr(403, s3types.AccessDenied, mpReq{method: "GET", path: "/lcy", query: "lifecycle", as: e.bob})
	e.mustErr(403, s3types.AccessDenied, mpReq{method: "PUT", path: "/lcy", query: "lifecycle", body: lifecycleDoc(rule), as: e.bob})
	e.mustErr(403, s3types.AccessDenied, mpReq{method: "DELETE", path: "/lcy", query: "lifecycle", as: e.bob})
	e.mustErr(405, s3types.MethodNotAllowed, mpReq{method: "POST", path: "/lcy", query: "lifecycle", as: e.alice})

	// x-amz-expiration on PUT, GET and HEAD.
	r := e.put("/lcy/logs/a", "data", e.alice)
	exp := r.header.Get("X-Amz-Expiration")
	head := e.must(200, mpReq{method: "HEAD", path: "/lcy/logs/a", as: e.alice})
	lm, err := http.ParseTime(head.header.Get("Last-Modified"))
	if err != nil {
		t.Fatal(err)
	}
	due := lm.Add(24 * time.Hour).Add(24*time.Hour - time.Nanosecond).Truncate(24 * time.Hour)
	want := `expiry-date="` + due.Format(http.TimeFormat) + `", rule-id="logs-rule"`
	if exp != want {
		t.Errorf("PUT: x-amz-expiration %q, want %q", exp, want)
	}
	for _, m := range []string{"GET", "HEAD"} {
		if got := e.must(200, mpReq{method: m, path: "/lcy/logs/a", as: e.alice}).header.Get("X-Amz-Expiration"); got != want {
			t.Errorf("%s: x-amz-expiration %q, want %q", m, got, want)
		}
	}
	if got := e.put("/lcy/other", "data", e.alice).header.Get("X-Amz-Expiration"); got != "" {
		t.Errorf("PUT outside the rule: x-amz-expiration %q", got)
	}
	// The rule id is the owner's text: URL-encoded in the header, so a quote or a
	// line break cannot forge another pair.
	odd := strings.Replace(strings.Replace(rule, "logs-rule", `x", rule-id="evil&#13;&#10;Set-Cookie: a=b`, 1), "<Prefix>logs/</Prefix>", "<Prefix>odd/</Prefix>", 1)
	e.must(200, mpReq{method: "PUT", path: "/lcy", query: "lifecycle", body: lifecycleDoc(rule, odd), as: e.alice})
	if got := e.put("/lcy/odd/a", "data", e.alice).header.Get("X-Amz-Expiration"); !strings.HasSuffix(got,
		`rule-id="x%22%2C%20rule-id=%22evil%0D%0ASet-Cookie:%20a=b"`) {
		t.Errorf("x-amz-expiration with an odd rule id: %q", got)
	}
	e.must(204, mpReq{method: "DELETE", path: "/lcy", query: "lifecycle", as: e.alice})
	e.mustErr(404, s3types.NoSuchLifecycleConfiguration, get)
	if got := e.must(200, mpReq{method: "HEAD", path: "/lcy/logs/a", as: e.alice}).header.Get("X-Amz-Expiration"); got != "" {
		t.Errorf("HEAD without a configuration: x-amz-expiration %q", got)
	}
}

// TestLifecycleFilterRoundTrip: a configuration stored by PUT ?lifecycle comes back
// from GET with each rule's filter as sent, through the bucket record: an explicit
// empty Prefix stays one, apart from an empty Filter and from no Filter at all.
func TestLifecycleFilterRoundTrip(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("lcy", e.alice)
	const exp = `<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`
	doc := lifecycleDoc(`<ID>empty-prefix</ID><Filter><Prefix></Prefix></Filter>`+exp,
		`<ID>empty-filter</ID><Filter></Filter>`+exp, `<ID>none</ID>`+exp)
	e.must(200, mpReq{method: "PUT", path: "/lcy", query: "lifecycle", body: doc, as: e.alice})
	got := e.must(200, mpReq{method: "GET", path: "/lcy", query: "lifecycle", as: e.alice}).body
	if want := s3xml.Header + doc; got != want {
		t.Fatalf("GET ?lifecycle:\n got %s\nwant %s", got, want)
	}
}
