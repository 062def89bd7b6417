package wire

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestParseLinks(t *testing.T) {
	l := func(b, k, tag string) core.Link { return core.Link{Bucket: b, Key: k, Tag: tag} }
	tests := []struct {
		name     string
		header   string
		api      API
		typ, bkt string
		want     []core.Link
		wantErr  bool
	}{
		{name: "empty", header: "", api: APIOld, bkt: "b"},
		{name: "only commas", header: ",,", api: APIOld, bkt: "b"},
		{name: "riak key link", header: `</riak/b/k2>; riaktag="tag1"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k2", "tag1")}},
		{name: "store key link", header: `</store/b/k2>; storetag="tag1"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k2", "tag1")}},
		{name: "mixed prefix and tag", header: `</store/b/k2>; riaktag="t", </riak/c/k3>; storetag="u"`, api: APIOld, bkt: "b",
			want: []core.Link{l("b", "k2", "t"), l("c", "k3", "u")}},
		{name: "GET echo", header: `</riak/b/k2>; riaktag="tag1", </riak/b>; rel="up"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k2", "tag1")}},
		{name: "up first", header: `</riak/b>; rel="up", </riak/other/k>; riaktag="next"`, api: APIOld, bkt: "b", want: []core.Link{l("other", "k", "next")}},
		{name: "no space after semicolon", header: `</riak/b/k>;riaktag="t"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k", "t")}},
		{name: "leading spaces and junk around", header: `   junk</riak/b/k>; riaktag="t"trailing`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k", "t")}},
		{name: "underscore tag", header: `</riak/b/k>; riaktag="_"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k", "_")}},
		{name: "unquoted parts", header: `</riak/my+bucket/test%40gmail.com>; riaktag="a%2Cb+c"`, api: APIOld, bkt: "b",
			want: []core.Link{l("my bucket", "test@gmail.com", "a,b c")}},
		{name: "raw at sign", header: `</riak/b/test@gmail.com>; riaktag="t"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "test@gmail.com", "t")}},
		{name: "greedy key", header: `</riak/b/k>; riaktag="t">; riaktag="u"`, api: APIOld, bkt: "b", want: []core.Link{l("b", `k>; riaktag="t"`, "u")}},
		{name: "later start matches", header: `</riak/x</riak/b/k>; riaktag="t"`, api: APIOld, bkt: "b", want: []core.Link{l("b", "k", "t")}},
		{name: "up link of quoted bucket", header: `</riak/my+b>; rel="up"`, api: APIOld, bkt: "my b"},
		{name: "duplicate up links", header: `</riak/b>; rel="up", </riak/b>; rel="up"`, api: APIOld, bkt: "b"},
		{name: "buckets key link", header: `</buckets/b/keys/k2>; riaktag="tag1", </buckets/b>; rel="up"`, api: APIBuckets, bkt: "b", want: []core.Link{l("b", "k2", "tag1")}},
		{name: "typed key link", header: `</types/T/buckets/b/keys/k2>; riaktag="tag1", </types/T/buckets/b>; rel="up"`, api: APITyped, typ: "T", bkt: "b",
			want: []core.Link{l("b", "k2", "tag1")}},
		{name: "buckets form on typed", header: `</buckets/c/keys/k>; storetag="x", </buckets/b>; rel="up"`, api: APITyped, typ: "T", bkt: "b", want: []core.Link{l("c", "k", "x")}},

		{name: "garbage", header: `hello`, api: APIOld, bkt: "b", wantErr: true},
		{name: "blank piece", header: `</riak/b/k>; riaktag="t", `, api: APIOld, bkt: "b", wantErr: true},
		{name: "unencoded comma in tag", header: `</riak/b/k>; riaktag="a,b"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "empty tag", header: `</riak/b/k>; riaktag=""`, api: APIOld, bkt: "b", wantErr: true},
		{name: "no tag", header: `</riak/b/k>`, api: APIOld, bkt: "b", wantErr: true},
		{name: "two spaces", header: `</riak/b/k>;  riaktag="t"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "other prefix", header: `</foo/b/k>; riaktag="t"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "other tag attribute", header: `</riak/b/k>; tag="t"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "buckets link on old API", header: `</buckets/b/keys/k>; riaktag="t"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "old link on buckets API", header: `</riak/b/k>; riaktag="t"`, api: APIBuckets, bkt: "b", wantErr: true},
		{name: "typed link on buckets API", header: `</types/T/buckets/b/keys/k>; riaktag="t"`, api: APIBuckets, bkt: "b", wantErr: true},
		{name: "up link to another bucket", header: `</riak/other>; rel="up"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "bucket link not up", header: `</riak/b>; rel="contained"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "typed link to another type", header: `</types/U/buckets/b/keys/k>; riaktag="t"`, api: APITyped, typ: "T", bkt: "b", wantErr: true},
		{name: "typed up link of another type", header: `</types/U/buckets/b>; rel="up"`, api: APITyped, typ: "T", bkt: "b", wantErr: true},
		{name: "empty key", header: `</riak/b/>; riaktag="t"`, api: APIOld, bkt: "b", wantErr: true},
		{name: "extra segment", header: `</riak/b/k/x>; riaktag="t"`, api: APIOld, bkt: "b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLinks(tt.header, tt.api, tt.typ, tt.bkt)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseLinks(%q) = %v, want error", tt.header, got)
				}
				if !errors.Is(err, ErrInvalidLink) {
					t.Fatalf("error %v does not match ErrInvalidLink", err)
				}
				var le *LinkError
				if !errors.As(err, &le) || le.Piece == "" {
					t.Fatalf("error %#v is not a *LinkError with a piece", err)
				}
			} else if err != nil {
				t.Fatalf("ParseLinks(%q): %v", tt.header, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseLinks(%q) = %q, want %q", tt.header, got, tt.want)
			}
			ref, ok := refParseLinks(tt.header, tt.api, tt.typ, tt.bkt)
			if ok != (err == nil) || !slices.Equal(ref, got) {
				t.Fatalf("regexp reference = %q, %v; scanner = %q, %v", ref, ok, got, err)
			}
		})
	}
}

func TestFormatLinks(t *testing.T) {
	links := []core.Link{{Bucket: "b", Key: "k2", Tag: "tag1"}}
	tests := []struct {
		api  API
		d    Dialect
		typ  string
		want string
	}{
		{APIOld, DialectRiak, "", `</riak/b/k2>; riaktag="tag1", </riak/b>; rel="up"`},
		{APIOld, DialectStore, "", `</store/b/k2>; storetag="tag1", </store/b>; rel="up"`},
		{APIBuckets, DialectRiak, "", `</buckets/b/keys/k2>; riaktag="tag1", </buckets/b>; rel="up"`},
		{APIBuckets, DialectStore, "", `</buckets/b/keys/k2>; storetag="tag1", </buckets/b>; rel="up"`},
		{APITyped, DialectRiak, "T", `</types/T/buckets/b/keys/k2>; riaktag="tag1", </types/T/buckets/b>; rel="up"`},
	}
	for _, tt := range tests {
		if got := FormatLinks(links, tt.api, tt.d, tt.typ, "b"); got != tt.want {
			t.Errorf("FormatLinks(%v, %v) = %q, want %q", tt.api, tt.d, got, tt.want)
		}
		// What a GET returns, a PUT accepts (and the up link is dropped).
		back, err := ParseLinks(tt.want, tt.api, tt.typ, "b")
		if err != nil || !slices.Equal(back, links) {
			t.Errorf("ParseLinks(%q) = %q, %v; want %q", tt.want, back, err, links)
		}
	}

	if got, want := FormatLinks(nil, APIOld, DialectRiak, "", "b"), `</riak/b>; rel="up"`; got != want {
		t.Errorf("no links: %q, want %q", got, want)
	}
	l := func(b, k, tag string) core.Link { return core.Link{Bucket: b, Key: k, Tag: tag} }
	many := []core.Link{l("b", "k1", "t1"), l("a b", "test@gmail.com", "x,y"), l("c", "k3", "_")}
	wantMany := `</riak/b/k1>; riaktag="t1", </riak/a+b/test%40gmail.com>; riaktag="x%2Cy", </riak/c/k3>; riaktag="_", </riak/my+b%2Fx>; rel="up"`
	if got := FormatLinks(many, APIOld, DialectRiak, "", "my b/x"); got != wantMany {
		t.Errorf("FormatLinks = %q\nwant %q", got, wantMany)
	}
	if back, err := ParseLinks(wantMany, APIOld, "", "my b/x"); err != nil || !slices.Equal(back, many) {
		t.Errorf("round trip: %q, %v", back, err)
	}
	wantPart := `</riak/b>; rel="up", </riak/b/k1>; riaktag="t1", </riak/a+b/test%40gmail.com>; riaktag="x%2Cy", </riak/c/k3>; riaktag="_"`
	if got := FormatPartLinks(many, APIOld, DialectRiak, "", "b"); got != wantPart {
		t.Errorf("FormatPartLinks = %q\nwant %q", got, wantPart)
	}
	if back, err := ParseLinks(wantPart, APIOld, "", "b"); err != nil || !slices.Equal(back, many) {
		t.Errorf("part round trip: %q, %v", back, err)
	}
	for _, tt := range []struct {
		api  API
		d    Dialect
		want string
	}{
		{APIOld, DialectRiak, `</riak/b>; rel="up"`},
		{APIOld, DialectStore, `</store/b>; rel="up"`},
		{APIBuckets, DialectStore, `</buckets/b>; rel="up"`},
		{APITyped, DialectRiak, `</types/t+1/buckets/b>; rel="up"`},
	} {
		if got := FormatUpLink(tt.api, tt.d, "t 1", "b"); got != tt.want {
			t.Errorf("FormatUpLink(%v, %v) = %q, want %q", tt.api, tt.d, got, tt.want)
		}
	}
}

func TestLinkErrorMessage(t *testing.T) {
	tests := []struct {
		api  API
		d    Dialect
		want string
	}{
		{APIOld, DialectRiak, "Invalid Link header. Links must be of the form\n</riak/BUCKET/KEY>; riaktag=\"TAG\"\n"},
		{APIOld, DialectStore, "Invalid Link header. Links must be of the form\n</store/BUCKET/KEY>; storetag=\"TAG\"\n"},
		{APIBuckets, DialectRiak, "Invalid Link header. Links must be of the form\n</buckets/BUCKET/keys/KEY>; riaktag=\"TAG\"\n"},
		{APITyped, DialectStore, "Invalid Link header. Links must be of the form\n</types/TYPE/buckets/BUCKET/keys/KEY>; storetag=\"TAG\"\n"},
	}
	for _, tt := range tests {
		if got := LinkErrorMessage(tt.api, tt.d); got != tt.want {
			t.Errorf("LinkErrorMessage(%v, %v) = %q, want %q", tt.api, tt.d, got, tt.want)
		}
	}
}

func TestObjectPath(t *testing.T) {
	tests := []struct {
		api  API
		d    Dialect
		want string
	}{
		{APIOld, DialectRiak, "/riak/my+b/test%40gmail.com"},
		{APIOld, DialectStore, "/store/my+b/test%40gmail.com"},
		{APIBuckets, DialectRiak, "/buckets/my+b/keys/test%40gmail.com"},
		{APITyped, DialectRiak, "/types/T/buckets/my+b/keys/test%40gmail.com"},
	}
	for _, tt := range tests {
		if got := ObjectPath(tt.api, tt.d, "T", "my b", "test@gmail.com"); got != tt.want {
			t.Errorf("ObjectPath(%v, %v) = %q, want %q", tt.api, tt.d, got, tt.want)
		}
	}
}

// TestParseLinksLinear guards against quadratic behaviour on hostile headers.
func TestParseLinksLinear(t *testing.T) {
	hostile := []string{
		"</riak/" + strings.Repeat(`a>; riaktag="`, 20000),
		strings.Repeat("</riak/b/", 20000),
		"</riak/b/" + strings.Repeat(">;", 50000),
		"</types/" + strings.Repeat("</types/x/buckets/", 10000),
	}
	for _, h := range hostile {
		for _, api := range []API{APIOld, APIBuckets, APITyped} {
			_, _ = ParseLinks(h, api, "T", "b") // must simply finish quickly
		}
	}
}

func TestAPIString(t *testing.T) {
	for api, want := range map[API]string{APIOld: "old", APIBuckets: "buckets", APITyped: "typed", 9: "API(9)"} {
		if got := api.String(); got != want {
			t.Errorf("%d: %q, want %q", int(api), got, want)
		}
	}
}

// TestParseLinksMatchesRegexp compares the scanner with the reference regular
// expressions on random headers built from the grammar's own tokens, which reach the
// interesting cases far more often than byte-level fuzzing does.
func TestParseLinksMatchesRegexp(t *testing.T) {
	tokens := []string{"</", "<", ">", "/", ";", " ", ",", `"`, "=", `="`, ">; ", ">;",
		"riak", "store", "buckets", "keys", "types", "riaktag", "storetag", "rel", "up",
		"b", "T", "k", "%2C", "+", "%", "x"}
	rng := rand.New(rand.NewPCG(1, 2))
	apis := []API{APIOld, APIBuckets, APITyped}
	n := 4000 // far more in ad-hoc runs; this keeps -race runs quick
	if testing.Short() {
		n = 500
	}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	seg := func() string {
		if rng.IntN(2) == 0 {
			return pick("b", "k")
		}
		var sb strings.Builder
		for range 1 + rng.IntN(3) {
			sb.WriteString(pick("b", "k", "T", "x", "%2C", "+", "%", ">", `"`, ";", " ", "<", ">; ", `="`))
		}
		return sb.String()
	}
	piece := func() string {
		var sb strings.Builder
		sb.WriteString(pick("", " ", "x", "</riak/"))
		sb.WriteString("</")
		switch rng.IntN(3) {
		case 0:
			sb.WriteString(pick("riak", "store", "foo") + "/" + seg())
			if rng.IntN(2) == 0 {
				sb.WriteString("/" + seg())
			}
		case 1:
			sb.WriteString("buckets/" + seg())
			if rng.IntN(2) == 0 {
				sb.WriteString(pick("/keys/", "/", "/key/") + seg())
			}
		default:
			sb.WriteString("types/" + pick("T", "U", seg()) + "/buckets/" + seg())
			if rng.IntN(2) == 0 {
				sb.WriteString("/keys/" + seg())
			}
		}
		sb.WriteString(pick(">;", ">; ", ">;  ", ">", "; "))
		sb.WriteString(pick("riaktag", "storetag", "rel", "tag") + pick(`="`, "=", `"`))
		sb.WriteString(pick("up", "up", "t", "", seg()) + pick(`"`, `"`, "", `">`))
		sb.WriteString(pick("", " ", seg()))
		return sb.String()
	}
	allForms := []*linkForm{&oldBucketForm, &oldKeyForm, &bucketsBucketForm, &bucketsKeyForm, &typedBucketForm, &typedKeyForm}
	allRefForms := []refForm{refOldBucket, refOldKey, refBucketsBucket, refBucketsKey, refTypedBucket, refTypedKey}
	var parsed, matches int
	for range n {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = piece()
		}
		h := strings.Join(parts, pick(",", ", ", ""))
		if rng.IntN(4) == 0 { // a random mutation
			i := rng.IntN(len(h) + 1)
			h = h[:i] + pick(tokens...) + h[i:]
		}
		for i, f := range allForms {
			var caps [3]string
			val, ok := f.find(h, caps[:])
			m := allRefForms[i].re.FindStringSubmatch(h)
			if ok != (m != nil) {
				t.Fatalf("form %d on %q: scanner %v, regexp %q", i, h, ok, m)
			}
			if ok {
				matches++
				got := append(slices.Clone(caps[:len(f.seps)+1]), val)
				if !slices.Equal(got, m[1:]) {
					t.Fatalf("form %d on %q: scanner %q, regexp %q", i, h, got, m[1:])
				}
			}
		}
		for _, api := range apis {
			got, err := ParseLinks(h, api, "T", "b")
			want, ok := refParseLinks(h, api, "T", "b")
			if ok != (err == nil) || !slices.Equal(got, want) {
				t.Fatalf("%v %q: scanner %q, %v; regexp %q, %v", api, h, got, err, want, ok)
			}
			if len(got) > 0 {
				parsed++
			}
		}
	}
	t.Logf("%d form matches; %d of %d parses produced links", matches, parsed, 3*n)
}
