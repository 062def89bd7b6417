package main

// Items 4, 6, 9 and 10 on objects: store, fetch, delete, headers, conditional requests,
// quorum parameters, dialects, URL forms, percent-decoding and trailing slashes. Every
// case runs against a store-dialect and a riak-dialect server, in the old URL form (with
// either input prefix) and the new one.

import (
	"encoding/base64"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/kvapi/wire"
)

const (
	objReapDelay = time.Second
	objMaxSize   = 4096
)

var (
	vtagRE      = regexp.MustCompile(`^[0-9A-Za-z]{22}$`)
	quotedTagRE = regexp.MustCompile(`^"[0-9A-Za-z]{1,22}"$`)
	keyRE       = `[0-9A-Za-z]{27}`
)

const notFoundPage = `<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD><BODY><H1>Not Found</H1>The requested document was not found on this server.<P><HR><ADDRESS>cairn web server</ADDRESS></BODY></HTML>`

func statusPage(code int) string {
	p := http.StatusText(code)
	return "<html><head><title>" + itoa(code) + " " + p + "</title></head><body><h1>" + p + "</h1>" + p + "<p><hr><address>cairn web server</address></body></html>"
}

func itoa(n int) string { return strconv.Itoa(n) }

// expectText checks a text/plain error (or not-found) response exactly.
func expectText(t testing.TB, r *resp, status int, body string) {
	t.Helper()
	expect(t, r, status, &body)
	expectHeader(t, r, "Content-Type", "text/plain")
}

// expectPage checks an HTML status page.
func expectPage(t testing.TB, r *resp, status int) {
	t.Helper()
	want := statusPage(status)
	if status == 404 {
		want = notFoundPage
	}
	if r.Request.Method == "HEAD" {
		want = ""
	}
	expect(t, r, status, &want)
	expectHeader(t, r, "Content-Type", "text/html")
}

// vclockOf returns the response's vector clock in dialect d, checking that it is
// base64 and that the other dialect's header is absent.
func vclockOf(t testing.TB, r *resp, d dialect) string {
	t.Helper()
	v := r.Header.Get(d.hdr + "Vclock")
	if v == "" {
		t.Fatalf("no %sVclock:\n%s", d.hdr, r)
	}
	if _, err := base64.StdEncoding.DecodeString(v); err != nil {
		t.Fatalf("%sVclock %q is not base64", d.hdr, v)
	}
	if o := r.Header.Get(d.other().hdr + "Vclock"); o != "" {
		t.Fatalf("response uses the other dialect's header %sVclock", d.other().hdr)
	}
	return v
}

func TestObjects(t *testing.T) {
	t.Parallel()
	args := []string{"--delete-reap-delay", objReapDelay.String(), "--max-object-size", itoa(objMaxSize)}
	forEachDialect(t, args, func(t *testing.T, s *child, d dialect) {
		for _, f := range forms {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				objectCases(t, s, d, f)
			})
		}
		t.Run("typed-unknown", func(t *testing.T) {
			t.Parallel()
			const msg = "Unknown bucket type: nosuchtype"
			p := "/types/nosuchtype/buckets/b/keys/k"
			expectText(t, s.get(t, p), 404, msg)
			expectText(t, s.do(t, "HEAD", p, nil, ""), 404, "")
			expectText(t, s.do(t, "PUT", p, hdr{"Content-Type", "text/plain"}, "v"), 404, msg)
			expectText(t, s.do(t, "POST", p, hdr{"Content-Type", "text/plain"}, "v"), 404, msg)
			expectText(t, s.do(t, "POST", "/types/nosuchtype/buckets/b/keys", hdr{"Content-Type", "text/plain"}, "v"), 404, msg)
			expectText(t, s.do(t, "DELETE", p, nil, ""), 404, msg)
			// Percent-decoded like every other segment.
			expectText(t, s.get(t, "/types/no+such%20type/buckets/b/keys/k"), 404, "Unknown bucket type: no such type")
		})
	})
}

func objectCases(t *testing.T, s *child, d dialect, f form) {
	b := "obj-" + f.name
	d = f.answer(d)
	o := d.other()

	t.Run("store-fetch-headers", func(t *testing.T) {
		k := "full"
		// Request headers in both name sets; the response uses the server's.
		r := s.do(t, "PUT", f.obj(b, k), hdr{
			"Content-Type", "text/plain; charset=utf-8",
			d.hdr + "Meta-Colour", "blue",
			o.hdr + "Meta-Shape", "round",
			d.hdr + "Index-Age_int", "42",
			o.hdr + "Index-email_bin", "a@example.com, b@example.com",
			"Link", linkTo(f, o, b, "k2", "friend") + ", " + linkTo(f, d, "other bucket", "k3", "a tag"),
		}, "héllo")
		expect(t, r, 204, ptr(""))
		// The reference writes the negotiated type (the request's) on a bodiless 204 too;
		// nodiak crashes on a response without Content-Type.
		expectHeader(t, r, "Content-Type", "text/plain; charset=utf-8")

		for _, m := range []string{"GET", "HEAD"} {
			r = s.do(t, m, f.obj(b, k), nil, "")
			want := "héllo"
			if m == "HEAD" {
				want = ""
			}
			expect(t, r, 200, &want)
			expectHeader(t, r, "Content-Length", "6")
			expectHeader(t, r, "Content-Type", "text/plain; charset=utf-8")
			expectHeader(t, r, d.hdr+"Meta-Colour", "blue")
			expectHeader(t, r, d.hdr+"Meta-Shape", "round")
			expectHeader(t, r, o.hdr+"Meta-Shape", "")
			expectHeader(t, r, d.hdr+"Index-Age_int", "42")
			expectHeader(t, r, d.hdr+"Index-Email_bin", "a@example.com, b@example.com")
			expectHeader(t, r, "Link", "<"+f.outObj(d, b, "k2")+">; "+d.tag+`="friend", <`+f.outObj(d, "other+bucket", "k3")+">; "+d.tag+`="a+tag", `+f.upLink(d, b))
			expectHeader(t, r, "Vary", "Accept-Encoding")
			vclockOf(t, r, d)
			if et := r.Header.Get("ETag"); !quotedTagRE.MatchString(et) || !vtagRE.MatchString(strings.Trim(et, `"`)) {
				t.Errorf("ETag %q is not a quoted vtag", et)
			}
			lm, ok := wire.ParseHTTPDate(r.Header.Get("Last-Modified"))
			if !ok || time.Since(lm) > time.Minute || time.Until(lm) > time.Second {
				t.Errorf("Last-Modified %q is not a recent RFC 1123 date", r.Header.Get("Last-Modified"))
			}
		}
		// The index header names are written lower-case on the wire.
		raw := rawExchange(t, s, "GET "+f.obj(b, k)+" HTTP/1.1\r\nHost: localhost:8098\r\nConnection: close\r\n\r\n")
		for _, want := range []string{"\r\nx-" + strings.ToLower(d.name) + "-index-age_int: 42\r\n", "\r\n" + d.hdr + "Meta-Colour: blue\r\n", "\r\n" + d.hdr + "Meta-Shape: round\r\n"} {
			if !strings.Contains(raw, want) {
				t.Errorf("raw response lacks %q:\n%s", want, raw)
			}
		}
	})

	t.Run("content-type", func(t *testing.T) {
		expectText(t, s.do(t, "PUT", f.obj(b, "noct"), nil, "v"), 400, "Missing Content-Type request header")
		expectText(t, s.do(t, "POST", f.bucketPost(b), nil, "v"), 400, "Missing Content-Type request header")
		expectText(t, s.do(t, "PUT", f.obj(b, "badct"), hdr{"Content-Type", "foo"}, "v"), 415, "\"foo\" is not a valid media type for the Content-type header.\n")
		expectText(t, s.get(t, f.obj(b, "noct")), 404, "not found\n")
		// Only the charset parameter is kept; the bytes are stored exactly.
		s.mustPut(t, f.obj(b, "params"), "t\xc3\xa9t\x00\xff", "Content-Type", "text/plain; format=flowed; charset=ISO-8859-1")
		r := s.get(t, f.obj(b, "params"))
		expect(t, r, 200, ptr("t\xc3\xa9t\x00\xff"))
		expectHeader(t, r, "Content-Type", "text/plain; charset=ISO-8859-1")
		s.mustPut(t, f.obj(b, "json"), `{"a":1}`, "Content-Type", "application/json")
		expectHeader(t, s.get(t, f.obj(b, "json")), "Content-Type", "application/json")
		// A stored Content-Encoding is returned, and the value is served as stored
		// (so there is no encoding to vary on).
		s.mustPut(t, f.obj(b, "gz"), "\x1f\x8bnot really gzip", "Content-Encoding", "gzip")
		r = s.get(t, f.obj(b, "gz"), "Accept-Encoding", "identity")
		expect(t, r, 200, ptr("\x1f\x8bnot really gzip"))
		expectHeader(t, r, "Content-Encoding", "gzip")
		expectHeader(t, r, "Vary", "")
	})

	t.Run("post-to-bucket", func(t *testing.T) {
		locRE := regexp.MustCompile("^" + regexp.QuoteMeta(f.outObj(d, b, "")) + keyRE + "$")
		for _, path := range []string{f.bucketPost(b), f.bucketPost(b) + "/"} { // trailing slash tolerated
			r := s.do(t, "POST", path, hdr{"Content-Type", "text/plain"}, "posted")
			expect(t, r, 201, ptr(""))
			expectHeader(t, r, "Content-Length", "0")
			loc := r.Header.Get("Location")
			if !locRE.MatchString(loc) {
				t.Fatalf("POST %s: Location %q, want %s", path, loc, locRE)
			}
			expect(t, s.get(t, loc), 200, ptr("posted"))
		}
		// returnbody: still 201, with the object.
		r := s.do(t, "POST", f.bucketPost(b)+"?returnbody=true", hdr{"Content-Type", "text/plain", d.hdr + "Meta-M", "1"}, "rb")
		expect(t, r, 201, ptr("rb"))
		if !locRE.MatchString(r.Header.Get("Location")) {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		vclockOf(t, r, d)
		expectHeader(t, r, d.hdr+"Meta-M", "1")
		expectHeader(t, r, "Link", f.upLink(d, b))
	})

	t.Run("post-to-key", func(t *testing.T) {
		r := s.do(t, "POST", f.obj(b, "pk"), hdr{"Content-Type", "text/plain"}, "v1")
		expect(t, r, 204, ptr(""))
		expectHeader(t, r, "Location", "")
		expectHeader(t, r, "Content-Type", "text/plain")
		expect(t, s.get(t, f.obj(b, "pk")), 200, ptr("v1"))
	})

	t.Run("returnbody", func(t *testing.T) {
		r := s.do(t, "PUT", f.obj(b, "rb")+"?returnbody=true", hdr{"Content-Type", "text/plain", d.hdr + "Meta-A", "x", d.hdr + "Index-t_bin", "v"}, "body")
		expect(t, r, 200, ptr("body"))
		expectHeader(t, r, "Content-Type", "text/plain")
		expectHeader(t, r, d.hdr+"Meta-A", "x")
		expectHeader(t, r, d.hdr+"Index-T_bin", "v")
		expectHeader(t, r, "Link", f.upLink(d, b))
		clock := vclockOf(t, r, d)
		if !quotedTagRE.MatchString(r.Header.Get("ETag")) || r.Header.Get("Last-Modified") == "" {
			t.Errorf("returnbody without ETag / Last-Modified:\n%s", r)
		}
		g := s.get(t, f.obj(b, "rb"))
		if vclockOf(t, g, d) != clock || g.Header.Get("ETag") != r.Header.Get("ETag") {
			t.Errorf("returnbody clock/etag differ from a fetch:\n%s\n%s", r, g)
		}
		// Anything but exactly "true" is false.
		expect(t, s.do(t, "PUT", f.obj(b, "rb")+"?returnbody=TRUE", hdr{"Content-Type", "text/plain"}, "b2"), 204, ptr(""))
		// A body the client cannot accept is refused before anything is written.
		expectPage(t, s.do(t, "PUT", f.obj(b, "rb-406")+"?returnbody=true", hdr{"Content-Type", "text/plain", "Accept", "application/json"}, "x"), 406)
		expectText(t, s.get(t, f.obj(b, "rb-406")), 404, "not found\n")
		expectPage(t, s.do(t, "POST", f.bucketPost(b)+"?returnbody=true", hdr{"Content-Type", "text/plain", "Accept", "image/*"}, "x"), 406)
		expect(t, s.do(t, "PUT", f.obj(b, "rb-406")+"?returnbody=true", hdr{"Content-Type", "text/plain; charset=utf-8", "Accept", "text/*"}, "y"), 200, ptr("y"))
	})

	t.Run("vclock-update", func(t *testing.T) {
		s.mustPut(t, f.obj(b, "vc"), "one")
		c1 := vclockOf(t, s.get(t, f.obj(b, "vc")), d)
		// Sent back in the other name set.
		s.mustPut(t, f.obj(b, "vc"), "two", o.hdr+"Vclock", c1)
		r := s.get(t, f.obj(b, "vc"))
		expect(t, r, 200, ptr("two"))
		if c2 := vclockOf(t, r, d); c2 == c1 {
			t.Errorf("clock unchanged by an update")
		}
		expectText(t, s.do(t, "PUT", f.obj(b, "vc"), hdr{"Content-Type", "text/plain", d.hdr + "Vclock", "!!not base64!!"}, "x"), 400, "Invalid vector clock: not base64\n")
	})

	t.Run("fetch-params", func(t *testing.T) {
		s.mustPut(t, f.obj(b, "fp"), "v")
		for _, q := range []string{"r=1", "r=3", "r=one", "r=quorum", "r=all", "r=default", "pr=0", "pr=all", "pr=default",
			"basic_quorum=true", "basic_quorum=FALSE", "basic_quorum=default", "notfound_ok=false", "notfound_ok=True",
			"r=2&pr=1&basic_quorum=false&notfound_ok=true", "timeout=5000", "w=all&dw=one&rw=2&pw=0"} {
			expect(t, s.get(t, f.obj(b, "fp")+"?"+q), 200, ptr("v"))
		}
		for _, c := range []struct{ q, body string }{
			{"r=4", "Specified w/dw/pw values invalid for bucket n value of 3\n"},
			{"pr=10", "Specified w/dw/pw values invalid for bucket n value of 3\n"},
			{"r=lots", "r query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"pr=-", "pr query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"r=", "r query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"basic_quorum=maybe", "basic_quorum query parameter must be true or false\n"},
			{"notfound_ok=1", "notfound_ok query parameter must be true or false\n"},
			{"timeout=abc", "Bad timeout value \"abc\"\n"},
		} {
			r := s.get(t, f.obj(b, "fp")+"?"+c.q)
			expect(t, r, 400, &c.body)
		}
		// A missing key validates its parameters too, then is not found.
		expectText(t, s.get(t, f.obj(b, "nope")+"?r=one&notfound_ok=false"), 404, "not found\n")
	})

	t.Run("write-params", func(t *testing.T) {
		for _, q := range []string{"w=1", "w=3", "w=one", "w=quorum", "w=all", "w=default", "dw=0", "dw=1", "dw=all", "dw=default",
			"pw=0", "pw=quorum", "pw=default", "w=2&dw=2&pw=1", "timeout=5000", "asis=false"} {
			expect(t, s.do(t, "PUT", f.obj(b, "wp")+"?"+q, hdr{"Content-Type", "text/plain"}, q), 204, ptr(""))
			expect(t, s.get(t, f.obj(b, "wp")), 200, &q)
		}
		for _, c := range []struct{ q, body string }{
			{"w=4", "Specified w/dw/pw values invalid for bucket n value of 3\n"},
			{"dw=5", "Specified w/dw/pw values invalid for bucket n value of 3\n"},
			{"pw=4", "Specified w/dw/pw values invalid for bucket n value of 3\n"},
			{"w=lots", "w query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"dw=lots", "dw query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"pw=1.5", "pw query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n"},
			{"asis=perhaps", "asis query parameter must be true or false\n"},
			{"timeout=0x10", "Bad timeout value \"0x10\"\n"},
		} {
			expect(t, s.do(t, "PUT", f.obj(b, "wp")+"?"+c.q, hdr{"Content-Type", "text/plain"}, "bad"), 400, &c.body)
			expect(t, s.do(t, "POST", f.bucketPost(b)+"?"+c.q, hdr{"Content-Type", "text/plain"}, "bad"), 400, &c.body)
		}
		// Nothing was stored by the refused writes.
		expect(t, s.get(t, f.obj(b, "wp")), 200, ptr("asis=false"))
		// Delete takes rw, r, pr, w, dw, pw.
		s.mustPut(t, f.obj(b, "dp"), "v")
		expectText(t, s.do(t, "DELETE", f.obj(b, "dp")+"?rw=4", nil, ""), 400, "Specified w/dw/pw values invalid for bucket n value of 3\n")
		expectText(t, s.do(t, "DELETE", f.obj(b, "dp")+"?rw=lots", nil, ""), 400, "rw query parameter must be an integer or one of the following words: 'one', 'quorum' or 'all'\n")
		expect(t, s.get(t, f.obj(b, "dp")), 200, ptr("v"))
		expect(t, s.do(t, "DELETE", f.obj(b, "dp")+"?rw=all&r=one&pr=0&w=quorum&dw=all&pw=default", nil, ""), 204, ptr(""))
	})

	t.Run("conditional-get", func(t *testing.T) {
		s.mustPut(t, f.obj(b, "cg"), "v")
		r := s.get(t, f.obj(b, "cg"))
		etag, lm := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		for _, m := range []string{"GET", "HEAD"} {
			for _, h := range []hdr{{"If-None-Match", etag}, {"If-None-Match", `"x", ` + etag}, {"If-None-Match", "*"}, {"If-Modified-Since", lm}} {
				r := s.do(t, m, f.obj(b, "cg"), h, "")
				expect(t, r, 304, ptr(""))
				expectHeader(t, r, "Content-Type", "")
				expectHeader(t, r, "ETag", etag)
			}
			for _, h := range []hdr{{"If-None-Match", `"other"`}, {"If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"},
				{"If-Match", etag}, {"If-Match", "*"}, {"If-Unmodified-Since", lm}, {"If-Modified-Since", "garbage"}} {
				expect(t, s.do(t, m, f.obj(b, "cg"), h, ""), 200, nil)
			}
			expectPage(t, s.do(t, m, f.obj(b, "cg"), hdr{"If-Match", `"other"`}, ""), 412)
			expectPage(t, s.do(t, m, f.obj(b, "cg"), hdr{"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"}, ""), 412)
		}
	})

	t.Run("not-acceptable", func(t *testing.T) {
		s.mustPut(t, f.obj(b, "acc"), "v")
		for _, a := range []string{"application/json", "text/html, application/*", "text/plain;q=0"} {
			expectPage(t, s.get(t, f.obj(b, "acc"), "Accept", a), 406)
		}
		for _, a := range []string{"text/plain", "text/*", "*/*", "*/*;q=0.5", "multipart/mixed,application/json;q=0.7, */*;q=0.5", "application/json, text/plain;q=0.1"} {
			expect(t, s.get(t, f.obj(b, "acc"), "Accept", a), 200, ptr("v"))
		}
	})

	t.Run("conditional-put", func(t *testing.T) {
		k := "cp"
		// If-None-Match: * creates only.
		expect(t, s.do(t, "PUT", f.obj(b, k), hdr{"Content-Type", "text/plain", "If-None-Match", "*"}, "first"), 204, nil)
		r := s.get(t, f.obj(b, k))
		etag, lm := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		for _, h := range []hdr{
			{"If-None-Match", "*"},
			{"If-None-Match", etag},
			{"If-Match", `"not-the-etag"`},
			{"If-Unmodified-Since", "Sat, 01 Jan 2000 00:00:00 GMT"},
			{"If-Modified-Since", lm}, // the interface says 412 for a store
		} {
			r := s.do(t, "PUT", f.obj(b, k), append(hdr{"Content-Type", "text/plain"}, h...), "second")
			expectPage(t, r, 412)
			expect(t, s.get(t, f.obj(b, k)), 200, ptr("first"))
		}
		// If-Match on a missing key fails; If-None-Match: * on a missing key passes.
		expectPage(t, s.do(t, "PUT", f.obj(b, "cp-missing"), hdr{"Content-Type", "text/plain", "If-Match", "*"}, "x"), 412)
		expectText(t, s.get(t, f.obj(b, "cp-missing")), 404, "not found\n")
		// Passing conditions store.
		expect(t, s.do(t, "PUT", f.obj(b, k), hdr{"Content-Type", "text/plain", "If-Match", etag, "If-Unmodified-Since", lm, "If-None-Match", `"x"`}, "second"), 204, nil)
		expect(t, s.get(t, f.obj(b, k)), 200, ptr("second"))
		// A conditional delete that fails keeps the object.
		expectPage(t, s.do(t, "DELETE", f.obj(b, k), hdr{"If-Match", etag}, ""), 412)
		expect(t, s.get(t, f.obj(b, k)), 200, ptr("second"))
	})

	t.Run("delete-tombstone-reap", func(t *testing.T) {
		k := "del"
		s.mustPut(t, f.obj(b, k), "v")
		expectText(t, s.do(t, "DELETE", f.obj(b, "never-stored"), nil, ""), 404, "not found\n")
		start := time.Now()
		r := s.do(t, "DELETE", f.obj(b, k), nil, "")
		expect(t, r, 204, ptr(""))
		expectHeader(t, r, "Content-Type", "text/html") // the reference's DELETE offers text/html
		for _, m := range []string{"GET", "HEAD", "DELETE"} {
			r = s.do(t, m, f.obj(b, k), nil, "")
			if time.Since(start) >= objReapDelay {
				t.Skipf("too slow to see the tombstone inside the %v reap delay", objReapDelay)
			}
			body := "not found\n"
			if m == "HEAD" {
				body = ""
			}
			expectText(t, r, 404, body)
			expectHeader(t, r, d.hdr+"Deleted", "true")
			expectHeader(t, r, o.hdr+"Deleted", "")
			vclockOf(t, r, d)
		}
		waitFor(t, 10*objReapDelay, "the tombstone to be reaped", func() bool {
			return s.get(t, f.obj(b, k)).Header.Get(d.hdr+"Deleted") == ""
		})
		if el := time.Since(start); el < objReapDelay-50*time.Millisecond {
			t.Errorf("tombstone reaped after %v, before the %v delay", el, objReapDelay)
		}
		r = s.get(t, f.obj(b, k))
		expectText(t, r, 404, "not found\n")
		expectHeader(t, r, d.hdr+"Vclock", "")
		expectText(t, s.do(t, "DELETE", f.obj(b, k), nil, ""), 404, "not found\n")
		// The key can be stored again.
		s.mustPut(t, f.obj(b, k), "again")
		expect(t, s.get(t, f.obj(b, k)), 200, ptr("again"))
	})

	t.Run("too-large", func(t *testing.T) {
		expect(t, s.do(t, "PUT", f.obj(b, "big"), hdr{"Content-Type", "application/octet-stream"}, strings.Repeat("a", objMaxSize)), 204, nil)
		big := strings.Repeat("b", objMaxSize+1)
		r := s.do(t, "PUT", f.obj(b, "big"), hdr{"Content-Type", "application/octet-stream"}, big)
		expectText(t, r, 413, "Object exceeds the maximum size of 4096 bytes\n")
		// Without a Content-Length (chunked request body).
		req, _ := http.NewRequest("PUT", s.URL+f.obj(b, "big"), io.MultiReader(strings.NewReader(big)))
		req.Header.Set("Content-Type", "application/octet-stream")
		expectText(t, s.send(t, req), 413, "Object exceeds the maximum size of 4096 bytes\n")
		expect(t, s.do(t, "POST", f.bucketPost(b), hdr{"Content-Type", "application/octet-stream"}, big), 413, nil)
		expect(t, s.get(t, f.obj(b, "big")), 200, ptr(strings.Repeat("a", objMaxSize)))
	})

	t.Run("index-headers", func(t *testing.T) {
		for _, c := range []struct {
			h    hdr
			body string
		}{
			{hdr{d.hdr + "Index-age_int", "abc"}, "Could not parse field 'age_int', value 'abc'.\n"},
			{hdr{o.hdr + "Index-foo", "1"}, "Unknown field type for field: 'foo'.\n"},
			{hdr{d.hdr + "Index-foo", "1", d.hdr + "Index-n_int", "1.5"}, "Could not parse field 'n_int', value '1.5'.\nUnknown field type for field: 'foo'.\n"},
		} {
			expectText(t, s.do(t, "PUT", f.obj(b, "ix"), append(hdr{"Content-Type", "text/plain"}, c.h...), "v"), 400, c.body)
		}
		expectText(t, s.get(t, f.obj(b, "ix")), 404, "not found\n")
		// Values split on ", " only; repeated headers join; integers normalised; sorted and
		// de-duplicated.
		s.mustPut(t, f.obj(b, "ix"), "v",
			d.hdr+"Index-Tags_bin", "b, a",
			d.hdr+"Index-Tags_bin", "a",
			d.hdr+"Index-Raw_bin", "x,y",
			o.hdr+"Index-N_int", "+7, -3, 007")
		r := s.get(t, f.obj(b, "ix"))
		expectHeader(t, r, d.hdr+"Index-Tags_bin", "a, b")
		expectHeader(t, r, d.hdr+"Index-Raw_bin", "x,y")
		expectHeader(t, r, d.hdr+"Index-N_int", "-3, 7")
		// A write replaces the entries.
		s.mustPut(t, f.obj(b, "ix"), "v2", d.hdr+"Index-Tags_bin", "c")
		r = s.get(t, f.obj(b, "ix"))
		expectHeader(t, r, d.hdr+"Index-Tags_bin", "c")
		expectHeader(t, r, d.hdr+"Index-N_int", "")
	})

	t.Run("link-headers", func(t *testing.T) {
		msg := "Invalid Link header. Links must be of the form\n<" + d.prefix + "/BUCKET/KEY>; " + d.tag + "=\"TAG\"\n"
		wrongForm := "</buckets/" + b + "/keys/k>; " + d.tag + `="t"`
		switch {
		case f.typ != "":
			msg = "Invalid Link header. Links must be of the form\n</types/TYPE/buckets/BUCKET/keys/KEY>; " + d.tag + "=\"TAG\"\n"
			wrongForm = "<" + d.prefix + "/" + b + "/k>; " + d.tag + `="t"`
		case !f.old:
			msg = "Invalid Link header. Links must be of the form\n</buckets/BUCKET/keys/KEY>; " + d.tag + "=\"TAG\"\n"
			wrongForm = "<" + d.prefix + "/" + b + "/k>; " + d.tag + `="t"`
		}
		bad := []string{
			"garbage",
			wrongForm,
			linkTo(f, d, b, "k", ""), // empty tag
			f.upLink(d, "elsewhere"), // another bucket's up link
			strings.Replace(f.upLink(d, b), `"up"`, `"down"`, 1), // own bucket, not rel=up
			linkTo(f, d, b, "k", "t") + ", nonsense",
		}
		if f.typ != "" {
			bad = append(bad, "</types/other-type/buckets/"+b+"/keys/k>; "+d.tag+`="t"`) // another type
		}
		for _, l := range bad {
			expectText(t, s.do(t, "PUT", f.obj(b, "ln"), hdr{"Content-Type", "text/plain", "Link", l}, "v"), 400, msg)
		}
		expectText(t, s.get(t, f.obj(b, "ln")), 404, "not found\n")
		// Both tag names; encoded commas and spaces; repeated headers join.
		s.mustPut(t, f.obj(b, "ln"), "v",
			"Link", linkTo(f, d, b, "a%2Cb", "t1"),
			"Link", linkTo(f, o, "x+y", "k", "t%202"))
		r := s.get(t, f.obj(b, "ln"))
		want := "<" + f.outObj(d, b, "a%2Cb") + ">; " + d.tag + `="t1", <` + f.outObj(d, "x+y", "k") + ">; " + d.tag + `="t+2", ` + f.upLink(d, b)
		expectHeader(t, r, "Link", want)
		// Echoing the fetched Link header back (with its rel="up") is accepted unchanged.
		s.mustPut(t, f.obj(b, "ln"), "v2", "Link", r.Header.Get("Link"))
		expectHeader(t, s.get(t, f.obj(b, "ln")), "Link", want)
		// No Link header: the links are replaced by none.
		s.mustPut(t, f.obj(b, "ln"), "v3")
		expectHeader(t, s.get(t, f.obj(b, "ln")), "Link", f.upLink(d, b))
	})

	t.Run("percent-decoding", func(t *testing.T) {
		// "+" is a space, %XX is decoded, raw "@" works.
		s.mustPut(t, f.obj("my+"+b, "test@gmail.com"), "at")
		for _, p := range []string{f.obj("my%20"+b, "test%40gmail.com"), f.obj("my+"+b, "test%40gmail.com"), f.obj("my%20"+b, "test@gmail.com")} {
			r := s.get(t, p)
			expect(t, r, 200, ptr("at"))
			expectHeader(t, r, "Link", f.upLink(d, "my+"+b))
		}
		s.mustPut(t, f.obj(b, "a%2Fb"), "slash")
		expect(t, s.get(t, f.obj(b, "a%2fb")), 200, ptr("slash"))
		s.mustPut(t, f.obj(b, "t%C3%A9t"), "utf8")
		expect(t, s.get(t, f.obj(b, "t\u00e9t")), 200, ptr("utf8"))
		s.mustPut(t, f.obj(b, "one%2Btwo"), "plus")
		expect(t, s.get(t, f.obj(b, "one%2btwo")), 200, ptr("plus"))
		expectText(t, s.get(t, f.obj(b, "one+two")), 404, "not found\n")
		r := s.do(t, "POST", f.bucketPost("my+"+b), hdr{"Content-Type", "text/plain"}, "p")
		expect(t, r, 201, nil)
		if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, f.outObj(d, "my+"+b, "")) {
			t.Errorf("Location %q does not quote the bucket", loc)
		}
	})

	t.Run("trailing-slash", func(t *testing.T) {
		s.mustPut(t, f.obj(b, "ts")+"/", "slash")
		expect(t, s.get(t, f.obj(b, "ts")), 200, ptr("slash"))
		expect(t, s.get(t, f.obj(b, "ts")+"/"), 200, ptr("slash"))
		expect(t, s.get(t, strings.Replace(f.obj(b, "ts"), "/", "//", 2)), 200, ptr("slash"))
	})

	t.Run("method-not-allowed", func(t *testing.T) {
		for _, m := range []string{"OPTIONS", "TRACE"} {
			r := s.do(t, m, f.obj(b, "x"), nil, "")
			expectPage(t, r, 405)
			expectHeader(t, r, "Allow", "HEAD, GET, POST, PUT, DELETE")
		}
	})

	t.Run("large-value-framing", func(t *testing.T) {
		v := strings.Repeat("0123456789abcdef", objMaxSize/16)
		s.mustPut(t, f.obj(b, "lv"), v)
		r := s.get(t, f.obj(b, "lv"))
		expect(t, r, 200, &v)
		expectHeader(t, r, "Content-Length", itoa(len(v)))
	})
}

// linkTo is a Link header element pointing at bucket/key in form f, tagged in dialect d's
// name (bucket, key and tag given encoded).
func linkTo(f form, d dialect, bucket, key, tag string) string {
	return "<" + f.obj(bucket, key) + ">; " + d.tag + `="` + tag + `"`
}
