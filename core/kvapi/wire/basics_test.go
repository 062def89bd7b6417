package wire

import (
	"errors"
	"slices"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestDialect(t *testing.T) {
	tests := []struct {
		d                                         Dialect
		prefix, hprefix, tag, vclock, res, string string
	}{
		{DialectStore, "/store", "X-Store-", "storetag", "X-Store-Vclock", "store_kv_wm_object", "store"},
		{DialectRiak, "/riak", "X-Riak-", "riaktag", "X-Riak-Vclock", "riak_kv_wm_object", "riak"},
		{Dialect{}, "/store", "X-Store-", "storetag", "X-Store-Vclock", "store_kv_wm_object", "store"},
	}
	for _, tt := range tests {
		got := []string{tt.d.Prefix(), tt.d.HeaderPrefix(), tt.d.LinkTag(), tt.d.Header("Vclock"), tt.d.Resource("kv_wm_object"), tt.d.String(),
			tt.d.VclockHeader(), tt.d.DeletedHeader()}
		want := []string{tt.prefix, tt.hprefix, tt.tag, tt.vclock, tt.res, tt.string, tt.vclock, tt.d.Header("Deleted")}
		if !slices.Equal(got, want) {
			t.Errorf("%#v: %q, want %q", tt.d, got, want)
		}
	}
	for s, want := range map[string]Dialect{"store": DialectStore, "riak": DialectRiak, "RIAK": DialectRiak} {
		if d, err := ParseDialect(s); err != nil || d != want {
			t.Errorf("ParseDialect(%q) = %v, %v", s, d, err)
		}
	}
	for _, s := range []string{"", "raw", "riak "} {
		if _, err := ParseDialect(s); err == nil {
			t.Errorf("ParseDialect(%q): want error", s)
		}
	}
}

// TestRequestDialect checks the precedence of a request's hints: the URL, then the
// headers, then the configured default.
func TestRequestDialect(t *testing.T) {
	riakH := map[string][]string{"X-Riak-Clientid": {"c"}}
	storeH := map[string][]string{"X-Store-Vclock": {"a85hYGBgzGDKBVIcR4M2cgczH7HPYEpkzGNlsP/VfYYvCwA="}}
	bothH := map[string][]string{"X-Riak-Meta-A": {"1"}, "X-Store-Meta-B": {"2"}}
	lowerH := map[string][]string{"x-riak-index-email_bin": {"a"}} // a map built by hand
	otherH := map[string][]string{"Content-Type": {"text/plain"}, "X-Riakish": {"no"}}
	tests := []struct {
		name    string
		path    string
		headers map[string][]string
		def     Dialect
		want    Dialect
	}{
		{"riak URL", "/riak/b/k", nil, DialectStore, DialectRiak},
		{"riak root", "/riak", nil, DialectStore, DialectRiak},
		{"store URL", "/store/b/k", nil, DialectRiak, DialectStore},
		{"store root", "/store", nil, DialectRiak, DialectStore},
		{"URL beats headers (riak)", "/riak/b/k", storeH, DialectStore, DialectRiak},
		{"URL beats headers (store)", "/store/b/k", riakH, DialectRiak, DialectStore},
		{"riak header", "/buckets/b/keys/k", riakH, DialectStore, DialectRiak},
		{"store header", "/buckets/b/keys/k", storeH, DialectRiak, DialectStore},
		{"header case ignored", "/buckets/b/keys/k", lowerH, DialectStore, DialectRiak},
		{"both headers: default store", "/buckets/b/keys/k", bothH, DialectStore, DialectStore},
		{"both headers: default riak", "/buckets/b/keys/k", bothH, DialectRiak, DialectRiak},
		{"no hint: default store", "/buckets/b/keys/k", otherH, DialectStore, DialectStore},
		{"no hint: default riak", "/types/t/buckets/b/keys/k", nil, DialectRiak, DialectRiak},
		{"prefix must be a segment", "/riakx/b", nil, DialectStore, DialectStore},
		{"store-like segment", "/stored", nil, DialectRiak, DialectRiak},
		{"bucket named riak", "/buckets/riak/keys/k", nil, DialectStore, DialectStore},
	}
	for _, tt := range tests {
		if got := RequestDialect(tt.path, tt.headers, tt.def); got != tt.want {
			t.Errorf("%s: RequestDialect(%q) = %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
}

func TestQuotePlus(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abcXYZ019_.-~", "abcXYZ019_.-~"},
		{"a b", "a+b"},
		{"test@gmail.com", "test%40gmail.com"},
		{"a+b", "a%2Bb"},
		{"100%", "100%25"},
		{"a/b,c;d\"e", "a%2Fb%2Cc%3Bd%22e"},
		{"tét", "t%C3%A9t"},
		{"\x00\xff", "%00%FF"},
	}
	for _, tt := range tests {
		if got := QuotePlus(tt.in); got != tt.want {
			t.Errorf("QuotePlus(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Every byte survives a round trip.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if got := Unquote(QuotePlus(string(all))); got != string(all) {
		t.Errorf("round trip of all bytes failed: %q", got)
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a+b", "a b"},
		{"%2f%2F", "//"},
		{"test%40gmail.com", "test@gmail.com"},
		{"%", "%"},
		{"%4", "%4"},
		{"%zz", "%zz"},
		{"100%", "100%"},
		{"%%41", "%A"},
		{"%4g%41", "%4gA"},
		{"t%C3%A9t", "tét"},
	}
	for _, tt := range tests {
		if got := Unquote(tt.in); got != tt.want {
			t.Errorf("Unquote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestErlangString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", `"abc"`},
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"a\nb\t", `"a\nb\t"`},
		{"a\x00", "[97,0]"},
		{"\xe9", "\"\xe9\""},
		{"\x85", "[133]"},
	}
	for _, tt := range tests {
		if got := erlangString(tt.in); got != tt.want {
			t.Errorf("erlangString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseMeta(t *testing.T) {
	got := ParseMeta(map[string][]string{
		"X-Riak-Meta-Details": {"d1"},
		"x-store-meta-color":  {"blue", "green"},
		"X-Riak-Meta-A":       {"1"},
		"X-Riak-Vclock":       {"zzz"},
		"X-Riak-Metadata":     {"not meta"},
		"Content-Type":        {"text/plain"},
	})
	m := func(n, v string) core.MetaEntry { return core.MetaEntry{Name: n, Value: v} }
	want := []core.MetaEntry{m("A", "1"), m("Details", "d1"), m("color", "blue"), m("color", "green")}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseMeta = %q, want %q", got, want)
	}
	if ParseMeta(map[string][]string{"Accept": {"*/*"}}) != nil {
		t.Fatal("want nil")
	}
	if got := MetaHeaderName(DialectRiak, "Details"); got != "X-Riak-Meta-Details" {
		t.Fatal(got)
	}
	if got := MetaHeaderName(DialectStore, "Details"); got != "X-Store-Meta-Details" {
		t.Fatal(got)
	}
}

func TestParseContentType(t *testing.T) {
	tests := []struct {
		in, mt, cs string
		bad        bool
	}{
		{in: "text/plain", mt: "text/plain"},
		{in: "application/json; charset=utf-8", mt: "application/json", cs: "utf-8"},
		{in: "application/json;charset=UTF-8;foo=bar", mt: "application/json", cs: "UTF-8"},
		{in: `text/plain; Charset="iso-8859-1"`, mt: "text/plain", cs: "iso-8859-1"},
		{in: "text/plain; foo=bar", mt: "text/plain"},
		{in: "  Text/Plain ; charset=x", mt: "Text/Plain", cs: "x"},
		{in: "application/x-erlang-binary", mt: "application/x-erlang-binary"},
		{in: "foo", bad: true},
		{in: "", bad: true},
		{in: " ; charset=x", bad: true},
		{in: "text/", bad: true},
		{in: "/plain", bad: true},
		{in: "a/b/c", bad: true},
	}
	for _, tt := range tests {
		mt, cs, err := ParseContentType(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrInvalidMediaType) {
				t.Errorf("ParseContentType(%q) = %q, %q, %v; want ErrInvalidMediaType", tt.in, mt, cs, err)
			}
			continue
		}
		if err != nil || mt != tt.mt || cs != tt.cs {
			t.Errorf("ParseContentType(%q) = %q, %q, %v; want %q, %q", tt.in, mt, cs, err, tt.mt, tt.cs)
		}
	}
	if got := MediaTypeErrorMessage("foo"); got != "\"foo\" is not a valid media type for the Content-type header.\n" {
		t.Errorf("MediaTypeErrorMessage = %q", got)
	}
	for _, tt := range []struct{ mt, cs, want string }{
		{"text/plain", "", "text/plain"},
		{"text/plain", "utf-8", "text/plain; charset=utf-8"},
		{"", "", "application/octet-stream"},
	} {
		if got := FormatContentType(tt.mt, tt.cs); got != tt.want {
			t.Errorf("FormatContentType(%q, %q) = %q, want %q", tt.mt, tt.cs, got, tt.want)
		}
	}
}

func TestParams(t *testing.T) {
	if got, want := QuorumParamError("r"), "r query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"; got != want {
		t.Errorf("QuorumParamError = %q", got)
	}
	if got, want := BoolParamError("basic_quorum"), "basic_quorum query parameter must be true or false\n"; got != want {
		t.Errorf("BoolParamError = %q", got)
	}
	if got, want := TimeoutError("abc"), "Bad timeout value \"abc\"\n"; got != want {
		t.Errorf("TimeoutError = %q", got)
	}
	tests := []struct {
		in               string
		val, isDef, isOK bool
	}{
		{"true", true, false, true}, {"TRUE", true, false, true}, {"False", false, false, true},
		{"default", false, true, true}, {"DeFault", false, true, true},
		{"", false, false, false}, {"yes", false, false, false}, {"1", false, false, false},
		{"falſe", false, false, false}, {"truee", false, false, false},
	}
	for _, tt := range tests {
		v, d, ok := ParseBoolParam(tt.in)
		if v != tt.val || d != tt.isDef || ok != tt.isOK {
			t.Errorf("ParseBoolParam(%q) = %v, %v, %v", tt.in, v, d, ok)
		}
	}
}
