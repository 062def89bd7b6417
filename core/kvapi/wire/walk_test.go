package wire

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
)

func TestParseWalk(t *testing.T) {
	const wc = WalkAny
	for _, c := range []struct {
		in   string
		want []WalkStep // nil: malformed
	}{
		{"b,t,1", []WalkStep{{"b", "t", true}}},
		{"b,t,0", []WalkStep{{"b", "t", true}}}, // a single step is always kept
		{"_,_,_", []WalkStep{{wc, wc, true}}},
		{"a,x,1/b,y,0/c,z,_", []WalkStep{{"a", "x", true}, {"b", "y", false}, {"c", "z", true}}},
		{"a,x,_/b,y,1", []WalkStep{{"a", "x", false}, {"b", "y", true}}},   // "_" is 0 before the end
		{"a,x,yes/b,y,0", []WalkStep{{"a", "x", false}, {"b", "y", true}}}, // the last step is kept
		{"a,x,1/b,y,1", []WalkStep{{"a", "x", true}, {"b", "y", true}}},    // both kept
		{"my+b,t%2C1,1", []WalkStep{{"my b", "t,1", true}}},                // unquoted after the split
		{"%5F,%5f,1", []WalkStep{{wc, wc, true}}},                          // an encoded "_" is "_" too
		{"a%2Fb,_,1", []WalkStep{{"a/b", wc, true}}},                       // an encoded slash stays in the name
		{"/b,t,1//c,u,1/", []WalkStep{{"b", "t", true}, {"c", "u", true}}}, // empty segments skipped
		{"b%zz,t,1", []WalkStep{{"b%zz", "t", true}}},                      // a stray % is kept, as Unquote does
		{"", nil},
		{"/", nil},
		{"b,t", nil},
		{"b", nil},
		{"b,t,1,2", nil},
		{"b,,1", nil},
		{",t,1", nil},
		{"b,t,", nil},
		{",b,t,1", nil},
		{"a,,t,1", nil},
		{"b,t,1/preflist", nil},
		{"b,t,1/c,u", nil},
	} {
		got, err := ParseWalk(c.in)
		if c.want == nil {
			var we *WalkError
			if err == nil || !errors.As(err, &we) || !errors.Is(err, ErrInvalidWalk) || err.Error() == "" {
				t.Errorf("ParseWalk(%q) = %v, %v; want a *WalkError", c.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseWalk(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestWalkMessages(t *testing.T) {
	if got, want := WalkErrorMessage(DialectRiak), "Invalid link walk query submitted. Valid link walk query format is: /riak/some_bucket/some_key/<bucket>,<riaktag>,0|1/..."; got != want {
		t.Errorf("riak: %q", got)
	}
	if got, want := WalkErrorMessage(DialectStore), "Invalid link walk query submitted. Valid link walk query format is: /store/some_bucket/some_key/<bucket>,<storetag>,0|1/..."; got != want {
		t.Errorf("store: %q", got)
	}
	if WalkErrorMessage(Dialect{}) != WalkErrorMessage(DialectStore) {
		t.Error("the zero dialect is not the store dialect")
	}
}

// walkDocExample is the object of the reference's link-walk documentation example.
func walkDocExample() *core.Object {
	return &core.Object{
		Type: core.DefaultType, Bucket: "test", Key: "doc",
		VClock: walkB64("a85hYGBgzGDKBVIsbLvm1WYwJTLmsTLcjeE5ypcFAA=="),
		Siblings: []core.Sibling{{
			Value: []byte(`{"riak":"CAP"}`), ContentType: "application/json",
			VTag: "3pvmY35coyWPxh8mh4uBQC", LastModified: time.Date(2010, 3, 10, 20, 14, 13, 0, time.UTC),
			Links: []core.Link{{Bucket: "test", Key: "doc2", Tag: "next"}},
		}},
	}
}

func walkB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func fixedBoundaries(names ...string) func() string {
	return func() string {
		n := names[0]
		names = names[1:]
		return n
	}
}

// TestAppendWalkReference: the reference's documented example, byte for byte.
func TestAppendWalkReference(t *testing.T) {
	got := AppendWalk(nil, "OUTER", [][]*core.Object{{walkDocExample()}}, APIOld, DialectRiak, fixedBoundaries("INNER"))
	want, err := os.ReadFile(filepath.Join("testdata", "linkwalk_multipart.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if n := WalkSizeHint([][]*core.Object{{walkDocExample()}}); n < len(got) {
		t.Errorf("size hint %d below the body's %d bytes", n, len(got))
	}
}

func TestAppendWalk(t *testing.T) {
	lm := time.Date(2010, 3, 10, 20, 14, 13, 0, time.UTC)
	sib := &core.Object{
		Type: core.DefaultType, Bucket: "my b", Key: "k/1", VClock: []byte{1, 2, 3},
		Siblings: []core.Sibling{
			{Value: []byte("one"), ContentType: "text/plain", Charset: "utf-8", VTag: "v1", LastModified: lm,
				Meta: []core.MetaEntry{{Name: "Colour", Value: "red"}}, Indexes: []core.IndexEntry{{Field: "age_int", Value: "7"}}},
			{Value: []byte("two"), ContentType: "text/plain", VTag: "v2", LastModified: lm},
			{Deleted: true, VTag: "v3", LastModified: lm},
		},
	}
	plain := &core.Object{Type: core.DefaultType, Bucket: "b", Key: "k", VClock: []byte{4},
		Siblings: []core.Sibling{{Value: []byte("v"), ContentType: "application/octet-stream", Encoding: "gzip", VTag: "v4", LastModified: lm}}}
	results := [][]*core.Object{{sib, plain}, {}}
	const date = "Wed, 10 Mar 2010 20:14:13 GMT"

	got := string(AppendWalk(nil, "O", results, APIBuckets, DialectStore, fixedBoundaries("I1", "I2")))
	want := "\r\n--O\r\nContent-Type: multipart/mixed; boundary=I1\r\n" +
		"\r\n--I1\r\n" +
		"X-Store-Vclock: AQID\r\n" +
		"Location: /buckets/my+b/keys/k%2F1?vtag=v1\r\n" +
		"X-Store-Sibling-VTags: v2,v3\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Link: </buckets/my+b>; rel=\"up\"\r\n" +
		"Etag: v1\r\n" +
		"Last-Modified: " + date + "\r\n" +
		"X-Store-Meta-Colour: red\r\n" +
		"x-store-index-age_int: 7\r\n" +
		"\r\none" +
		"\r\n--I1\r\n" +
		"X-Store-Vclock: BA==\r\n" +
		"Location: /buckets/b/keys/k\r\n" +
		"Content-Type: application/octet-stream\r\n" +
		"Content-Encoding: gzip\r\n" +
		"Link: </buckets/b>; rel=\"up\"\r\n" +
		"Etag: v4\r\n" +
		"Last-Modified: " + date + "\r\n" +
		"\r\nv" +
		"\r\n--I1--\r\n" +
		"\r\n--O\r\nContent-Type: multipart/mixed; boundary=I2\r\n" +
		"\r\n--I2--\r\n" +
		"\r\n--O--\r\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if n := WalkSizeHint(results); n < len(got) {
		t.Errorf("size hint %d below the body's %d bytes", n, len(got))
	}

	// Old API in the riak dialect.
	h := WalkObjectHeaders(sib, APIOld, DialectRiak)
	if h[0] != [2]string{"X-Riak-Vclock", "AQID"} || h[1] != [2]string{"Location", "/riak/my+b/k%2F1?vtag=v1"} ||
		h[2] != [2]string{"X-Riak-Sibling-VTags", "v2,v3"} || h[3][0] != "Content-Type" {
		t.Errorf("old-API headers %q", h)
	}

	// No kept step: only the closing delimiter.
	if got := string(AppendWalk(nil, "O", nil, APIOld, DialectRiak, nil)); got != "\r\n--O--\r\n" {
		t.Errorf("no step: %q", got)
	}

	// The body reads back level by level with the multipart reader.
	outer, err := ParseMultipart([]byte(want), "O")
	if err != nil || len(outer) != 2 || outer[0].Headers[0][1] != "multipart/mixed; boundary=I1" {
		t.Fatalf("outer: %v %v", err, outer)
	}
	inner, err := ParseMultipart(outer[0].Body, "I1")
	if err != nil || len(inner) != 2 || string(inner[0].Body) != "one" || string(inner[1].Body) != "v" {
		t.Fatalf("inner: %v %v", err, inner)
	}
	empty, err := ParseMultipart(outer[1].Body, "I2")
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty inner: %v %v", err, empty)
	}
}

// refWalkSegment is ParseWalk's grammar for one segment as a regular expression.
var refWalkSegment = regexp.MustCompile(`^([^,]+),([^,]+),([^,]+)$`)

// refParseWalk is an independent statement of ParseWalk.
func refParseWalk(rest string) ([]WalkStep, bool) {
	var segs []string
	for _, s := range strings.Split(rest, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return nil, false
	}
	var out []WalkStep
	for i, s := range segs {
		m := refWalkSegment.FindStringSubmatch(s)
		if m == nil {
			return nil, false
		}
		name := func(x string) string {
			if x == "_" {
				return "_"
			}
			return Unquote(x)
		}
		out = append(out, WalkStep{name(m[1]), name(m[2]), m[3] == "1" || i == len(segs)-1})
	}
	return out, true
}

func FuzzParseWalk(f *testing.F) {
	for _, s := range []string{"b,t,1", "_,_,_", "a,x,0/b,y,1/c,z,_", "my+b,t%2C1,1", "b,,1", "b,t,1,2", "/a,b,c//d,e,f/", "%5F,%zz,0", "preflist", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		steps, err := ParseWalk(rest)
		ref, ok := refParseWalk(rest)
		if ok != (err == nil) || !slices.Equal(steps, ref) {
			t.Fatalf("ParseWalk(%q) = %v, %v; reference %v, %v", rest, steps, err, ref, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidWalk) {
				t.Fatalf("error %v is not ErrInvalidWalk", err)
			}
			return
		}
		if !steps[len(steps)-1].Keep {
			t.Fatalf("last step not kept: %v", steps)
		}
		for _, s := range steps {
			if s.Bucket == "" || s.Tag == "" {
				t.Fatalf("empty name in %v", steps)
			}
		}
		back, err := ParseWalk(FormatWalk(steps))
		if err != nil || !slices.Equal(back, steps) {
			t.Fatalf("%q → %v → %q → %v, %v", rest, steps, FormatWalk(steps), back, err)
		}
	})
}
