package s3api

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// taggingBody is a Tagging document of the key/value pairs kv.
func taggingBody(kv ...string) string {
	var b strings.Builder
	b.WriteString(`<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>`)
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("<Tag><Key>" + s3xml.EscapeText(kv[i]) + "</Key><Value>" + s3xml.EscapeText(kv[i+1]) + "</Value></Tag>")
	}
	b.WriteString(`</TagSet></Tagging>`)
	return b.String()
}

// tagsIn parses a GET ?tagging answer into its key/value pairs.
func tagsIn(t *testing.T, body string) []string {
	t.Helper()
	tags, err := s3xml.ParseTagging([]byte(body))
	if err != nil {
		t.Fatalf("GET ?tagging answered %s: %v", body, err)
	}
	out := []string{}
	for _, tg := range tags {
		out = append(out, tg.Key, tg.Value)
	}
	return out
}

// TestObjectTaggingHTTP: PUT/GET/DELETE /{bucket}/{key}?tagging store, answer and
// remove the object's tags (GET of an untagged object is an empty TagSet); the data
// and metadata stay; GET and HEAD say x-amz-tagging-count; the limits and malformed
// bodies answer AWS's codes and change nothing; other methods are 405; a missing key
// is 404 NoSuchKey; another user is refused.
func TestObjectTaggingHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("tags", e.alice)
	e.put("/tags/obj", "the data", e.alice, "x-amz-meta-color", "blue")
	obj := mpReq{method: "GET", path: "/tags/obj", query: "tagging", as: e.alice}
	if got := tagsIn(t, e.must(200, obj).body); len(got) != 0 {
		t.Fatalf("untagged object: %v", got)
	}
	put := obj
	put.method, put.body = "PUT", taggingBody("project", "cairn", "empty", "", "sp ace", "a&b<c>")
	e.must(200, put)
	want := []string{"project", "cairn", "empty", "", "sp ace", "a&b<c>"}
	if got := tagsIn(t, e.must(200, obj).body); !reflect.DeepEqual(got, want) {
		t.Fatalf("tags %q, want %q", got, want)
	}
	for _, m := range []string{"GET", "HEAD"} {
		r := e.must(200, mpReq{method: m, path: "/tags/obj", as: e.alice})
		if r.header.Get("X-Amz-Tagging-Count") != "3" || r.header.Get("X-Amz-Meta-Color") != "blue" {
			t.Fatalf("%s: headers %v", m, r.header)
		}
		if m == "GET" && r.body != "the data" {
			t.Fatalf("GET after tagging: %q", r.body)
		}
	}
	tooMany := make([]string, 0, 22)
	for i := range 11 {
		tooMany = append(tooMany, fmt.Sprint("k", i), "v")
	}
	for _, c := range []struct {
		name, body string
		code       s3.Code
	}{
		{"eleven tags", taggingBody(tooMany...), s3.BadRequest},
		{"long key", taggingBody(strings.Repeat("k", 129), "v"), s3.InvalidTag},
		{"long value", taggingBody("k", strings.Repeat("é", 257)), s3.InvalidTag},
		{"empty key", taggingBody("", "v"), s3.InvalidTag},
		{"aws prefix", taggingBody("aws:cloudformation", "v"), s3.InvalidTag},
		{"same key twice", taggingBody("k", "1", "k", "2"), s3.InvalidTag},
		{"control character", "<Tagging><TagSet><Tag><Key>k</Key><Value>a&#x1;b</Value></Tag></TagSet></Tagging>", s3.MalformedXML},
		{"not XML", "<Tagging>", s3.MalformedXML},
		{"other root", "<Tags><TagSet/></Tags>", s3.MalformedXML},
		{"no TagSet", "<Tagging/>", s3.MalformedXML},
		{"no Value", "<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>", s3.MalformedXML},
		{"empty body", "", s3.MalformedXML},
	} {
		q := put
		q.body = c.body
		e.mustErr(400, c.code, q)
	}
	// 128 characters of key and 256 of value are allowed, whatever their bytes.
	put.body = taggingBody(strings.Repeat("ключ", 32), strings.Repeat("値", 256))
	e.must(200, put)
	if got := tagsIn(t, e.must(200, obj).body); len(got) != 2 || got[0] != strings.Repeat("ключ", 32) {
		t.Fatalf("longest tag: %q", got)
	}
	// The body is checked against Content-MD5 when one is given.
	md5q := put
	md5q.header = map[string]string{"Content-MD5": md5b64("something else")}
	e.mustErr(400, s3.BadDigest, md5q)
	md5q.header = map[string]string{"Content-MD5": md5b64(put.body)}
	e.must(200, md5q)
	// A body over the bound is refused before it is parsed.
	big := put
	big.body = taggingBody("k", strings.Repeat("v", s3xml.MaxTaggingBody))
	e.mustErr(400, s3types.MaxMessageLengthExceeded, big)
	// Another user may neither read nor change them; a missing key is 404.
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/tags/obj", query: "tagging", as: e.bob})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "PUT", path: "/tags/obj", query: "tagging", body: taggingBody("x", "y"), as: e.bob})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "DELETE", path: "/tags/obj", query: "tagging", as: e.bob})
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/tags/absent", query: "tagging", as: e.alice})
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "PUT", path: "/tags/absent", query: "tagging", body: taggingBody("x", "y"), as: e.alice})
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "POST", path: "/tags/obj", query: "tagging", as: e.alice})
	// DELETE removes them: 204, the count header goes.
	e.must(http.StatusNoContent, mpReq{method: "DELETE", path: "/tags/obj", query: "tagging", as: e.alice})
	if got := tagsIn(t, e.must(200, obj).body); len(got) != 0 {
		t.Fatalf("after DELETE: %v", got)
	}
	if r := e.must(200, mpReq{method: "HEAD", path: "/tags/obj", as: e.alice}); r.header.Get("X-Amz-Tagging-Count") != "" {
		t.Fatalf("HEAD after DELETE: count %q", r.header.Get("X-Amz-Tagging-Count"))
	}
	if r := e.must(200, mpReq{method: "GET", path: "/tags/obj", as: e.alice}); r.body != "the data" {
		t.Fatalf("GET after DELETE ?tagging: %q", r.body)
	}
}

// TestTaggingHeaderHTTP: x-amz-tagging on PUT, multipart initiate (the tags land at
// completion) and copy (x-amz-tagging-directive COPY keeps the source's, REPLACE takes
// the header's); a malformed header, too many tags or an unknown directive answer
// AWS's codes before anything is stored.
func TestTaggingHeaderHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("hdr", e.alice)
	get := func(key string) []string {
		return tagsIn(t, e.must(200, mpReq{method: "GET", path: "/hdr/" + key, query: "tagging", as: e.alice}).body)
	}
	e.put("/hdr/a", "data", e.alice, "x-amz-tagging", "k1=v1&k%202=v%262&flag")
	if got, want := get("a"), []string{"k1", "v1", "k 2", "v&2", "flag", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("PUT x-amz-tagging: %q, want %q", got, want)
	}
	tooMany := make([]string, 0, 11)
	for i := range 11 {
		tooMany = append(tooMany, fmt.Sprintf("k%d=v", i))
	}
	for _, c := range []struct {
		name, value string
		code        s3.Code
	}{
		{"duplicate", "k=1&k=2", s3.InvalidArgument},
		{"bad escape", "k=%zz", s3.InvalidArgument},
		{"eleven", strings.Join(tooMany, "&"), s3.BadRequest},
		{"aws prefix", "aws:x=1", s3.InvalidTag},
		{"long value", "k=" + strings.Repeat("v", 257), s3.InvalidTag},
		{"control character", "k=a%01b", s3.InvalidTag}, // a GET ?tagging could not answer it
		{"invalid UTF-8", "k=%FF", s3.InvalidTag},
	} {
		e.mustErr(400, c.code, mpReq{method: "PUT", path: "/hdr/refused", header: map[string]string{"x-amz-tagging": c.value}, body: "x", as: e.alice})
	}
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/hdr/refused", as: e.alice})
	// Multipart: the tags given at initiation are the object's at completion.
	id := e.initiate("/hdr/mp", e.alice, "x-amz-tagging", "stage=upload")
	r := e.put("/hdr/mp?partNumber=1&uploadId="+id, "part", e.alice)
	e.must(200, mpReq{method: "POST", path: "/hdr/mp", query: "uploadId=" + id, body: completeBody([2]string{"1", r.header.Get("ETag")}), as: e.alice})
	if got := get("mp"); !reflect.DeepEqual(got, []string{"stage", "upload"}) {
		t.Fatalf("multipart: %q", got)
	}
	e.mustErr(400, s3.BadRequest, mpReq{method: "POST", path: "/hdr/mp2", query: "uploads", header: map[string]string{"x-amz-tagging": strings.Join(tooMany, "&")}, as: e.alice})
	// Copy: COPY (the default) keeps the source's tags, REPLACE takes the header's.
	e.must(200, mpReq{method: "PUT", path: "/hdr/c1", header: map[string]string{"x-amz-copy-source": "/hdr/a", "x-amz-tagging": "ignored=1"}, as: e.alice})
	if got := get("c1"); !reflect.DeepEqual(got, get("a")) {
		t.Fatalf("copy, default directive: %q", got)
	}
	e.must(200, mpReq{method: "PUT", path: "/hdr/c2", header: map[string]string{"x-amz-copy-source": "/hdr/a", "x-amz-tagging-directive": "REPLACE", "x-amz-tagging": "new=tag"}, as: e.alice})
	if got := get("c2"); !reflect.DeepEqual(got, []string{"new", "tag"}) {
		t.Fatalf("copy, REPLACE: %q", got)
	}
	e.must(200, mpReq{method: "PUT", path: "/hdr/c3", header: map[string]string{"x-amz-copy-source": "/hdr/a", "x-amz-tagging-directive": "REPLACE"}, as: e.alice})
	if got := get("c3"); len(got) != 0 {
		t.Fatalf("copy, REPLACE without tags: %q", got)
	}
	e.mustErr(400, s3.InvalidArgument, mpReq{method: "PUT", path: "/hdr/c4", header: map[string]string{"x-amz-copy-source": "/hdr/a", "x-amz-tagging-directive": "MERGE"}, as: e.alice})
}

// TestBucketTaggingHTTP: PUT/GET/DELETE /{bucket}?tagging; GET without tags is 404
// NoSuchTagSet; 50 tags are allowed, 51 are 400 InvalidTag; only the owner may.
func TestBucketTaggingHTTP(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("tagged", e.alice)
	get := mpReq{method: "GET", path: "/tagged", query: "tagging", as: e.alice}
	e.mustErr(404, s3.NoSuchTagSet, get)
	kv := make([]string, 0, 102)
	for i := range 51 {
		kv = append(kv, fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	e.mustErr(400, s3.InvalidTag, mpReq{method: "PUT", path: "/tagged", query: "tagging", body: taggingBody(kv...), as: e.alice})
	e.must(http.StatusNoContent, mpReq{method: "PUT", path: "/tagged", query: "tagging", body: taggingBody(kv[:100]...), as: e.alice})
	if got := tagsIn(t, e.must(200, get).body); !reflect.DeepEqual(got, kv[:100]) {
		t.Fatalf("bucket tags: %q", got)
	}
	e.mustErr(403, s3.AccessDenied, mpReq{method: "GET", path: "/tagged", query: "tagging", as: e.bob})
	e.mustErr(403, s3.AccessDenied, mpReq{method: "PUT", path: "/tagged", query: "tagging", body: taggingBody("a", "b"), as: e.bob})
	e.mustErr(400, s3.MalformedXML, mpReq{method: "PUT", path: "/tagged", query: "tagging", body: "<Tagging/>", as: e.alice})
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "POST", path: "/tagged", query: "tagging", as: e.alice})
	e.must(http.StatusNoContent, mpReq{method: "DELETE", path: "/tagged", query: "tagging", as: e.alice})
	e.mustErr(404, s3.NoSuchTagSet, get)
	e.must(http.StatusNoContent, mpReq{method: "DELETE", path: "/tagged", query: "tagging", as: e.alice})
	// The bucket itself is untouched: it lists and deletes as before.
	e.must(200, mpReq{method: "GET", path: "/tagged", as: e.alice})
	e.must(http.StatusNoContent, mpReq{method: "DELETE", path: "/tagged", as: e.alice})
}

func TestParseTaggingHeader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []s3.Tag
		code s3.Code
	}{
		{"", nil, ""},
		{"&&", nil, ""},
		{"a=1", []s3.Tag{{Key: "a", Value: "1"}}, ""},
		{"a=1&b", []s3.Tag{{Key: "a", Value: "1"}, {Key: "b"}}, ""},
		{"a+b=c%3Dd", []s3.Tag{{Key: "a b", Value: "c=d"}}, ""},
		{"=v", []s3.Tag{{Value: "v"}}, ""}, // the service refuses the empty key
		{"a=1&a=2", nil, s3.InvalidArgument},
		{"a=%", nil, s3.InvalidArgument},
		{strings.Repeat("k=v&", 3) + "x", nil, s3.InvalidArgument},
		{"a&b&c&d&e&f&g&h&i&j&k", nil, s3.BadRequest},
	} {
		got, err := parseTaggingHeader(c.in)
		if c.code != "" {
			if !s3.IsCode(err, c.code) {
				t.Errorf("%q: err %v, want %s", c.in, err, c.code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseTaggingHeader: the x-amz-tagging parser never panics, answers only S3
// errors, and what it accepts has at most MaxObjectTags distinct keys.
func FuzzParseTaggingHeader(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a+b=%20&c", "a=1&a=2", "%zz=1", "a&b&c&d&e&f&g&h&i&j&k", "=&=&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tags, err := parseTaggingHeader(v)
		if err != nil {
			if s3.AsError(err) == nil {
				t.Fatalf("error is not an *s3.Error: %v", err)
			}
			return
		}
		if len(tags) > s3.MaxObjectTags {
			t.Fatalf("accepted %d tags", len(tags))
		}
		seen := map[string]bool{}
		for _, tg := range tags {
			if seen[tg.Key] {
				t.Fatalf("accepted the key %q twice", tg.Key)
			}
			seen[tg.Key] = true
		}
	})
}
