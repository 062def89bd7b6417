package main

// Golden wire transcripts: for each case the exact request bytes and the response bytes as
// the server wrote them, normalised only where the server must vary (see normalise), are
// compared with testdata/golden/<case>.txt. `go test -run TestGolden -update` rewrites
// them.
//
// Transcript file layout (the response keeps its CRLFs, so framing is checked byte for
// byte):
//
//	=== request
//	<request bytes>
//	=== response
//	<normalised response bytes>

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

type goldenCase struct {
	name  string
	riak  bool                         // run on the riak-dialect server (default: store)
	setup func(t *testing.T, s *child) // requests made before the transcribed one
	// req is the request: the request line, header lines and, after an empty line, the
	// body, with "\n" line ends. Host, Content-Length (when there is a body) and
	// Connection: close are added; lines end in CRLF on the wire.
	req string
	// norm, if set, replaces normalise for this case's response (formats with more
	// run-dependent bytes, such as link walks, normalise those first).
	norm func(raw string) string
}

// wireRequest turns a goldenCase request into its exact bytes.
func wireRequest(req string) string {
	head, body, _ := strings.Cut(req, "\n\n")
	lines := strings.Split(strings.TrimSuffix(head, "\n"), "\n")
	out := []string{lines[0], "Host: localhost:8098"}
	out = append(out, lines[1:]...)
	if body != "" {
		out = append(out, "Content-Length: "+itoa(len(body)))
	}
	out = append(out, "Connection: close")
	return strings.Join(out, "\r\n") + "\r\n\r\n" + body
}

// normaliser replaces the parts of a response that legitimately differ between runs by
// placeholders, and nothing else:
//   - Date and Last-Modified values (headers and multipart part headers) → <date>
//   - X-Request-Id → <request-id>; X-Store-Vclock / X-Riak-Vclock → <vclock>
//   - the multipart boundary → <boundary>
//   - vtags (300 text lines, part Etag lines, a single value's ETag) → <vtag-N>, numbered
//     in order of first appearance in the body, then the headers
//   - the ETag of a 300 (a hash of the clock) → <clock-etag>
//   - the server-chosen key at the end of a Location → <key>
//
// Header lines are sorted by name (case-insensitively); header names and everything
// else are kept byte for byte.
type normaliser struct {
	vtags []string
}

func (n *normaliser) vtag(v string) string {
	for i, x := range n.vtags {
		if x == v {
			return "<vtag-" + itoa(i+1) + ">"
		}
	}
	n.vtags = append(n.vtags, v)
	return "<vtag-" + itoa(len(n.vtags)) + ">"
}

var (
	boundaryRE   = regexp.MustCompile(`boundary=([0-9A-Za-z]+)`)
	partEtagRE   = regexp.MustCompile(`(?m)^Etag: ([0-9A-Za-z]{22})\r$`)
	partDateRE   = regexp.MustCompile(`(?m)^(Last-Modified: )[^\r\n]+\r$`)
	vtagLineRE   = regexp.MustCompile(`^[0-9A-Za-z]{22}$`)
	locationKeyR = regexp.MustCompile(`/[0-9A-Za-z]{27}$`)
)

func normalise(raw string) string {
	head, body, ok := strings.Cut(raw, "\r\n\r\n")
	if !ok {
		return raw // not a complete response; compared as is
	}
	lines := strings.Split(head, "\r\n")
	status, hs := lines[0], lines[1:]
	n := &normaliser{}

	// Body: boundary, then vtags in order.
	if m := boundaryRE.FindStringSubmatch(head); m != nil {
		body = strings.ReplaceAll(body, m[1], "<boundary>")
	}
	if strings.HasPrefix(status, "HTTP/1.1 300 ") && strings.HasPrefix(body, "Siblings:\n") {
		bl := strings.Split(body, "\n")
		for i, l := range bl {
			if vtagLineRE.MatchString(l) {
				bl[i] = n.vtag(l)
			}
		}
		body = strings.Join(bl, "\n")
	}
	body = partEtagRE.ReplaceAllStringFunc(body, func(l string) string {
		return "Etag: " + n.vtag(partEtagRE.FindStringSubmatch(l)[1]) + "\r"
	})
	body = partDateRE.ReplaceAllString(body, "${1}<date>\r")

	for i, h := range hs {
		name, value, _ := strings.Cut(h, ": ")
		switch strings.ToLower(name) {
		case "date", "last-modified":
			value = "<date>"
		case "x-request-id":
			value = "<request-id>"
		case "x-store-vclock", "x-riak-vclock":
			value = "<vclock>"
		case "content-type":
			value = boundaryRE.ReplaceAllString(value, "boundary=<boundary>")
		case "location":
			value = locationKeyR.ReplaceAllString(value, "/<key>")
		case "etag":
			if strings.HasPrefix(status, "HTTP/1.1 300 ") {
				value = `"<clock-etag>"`
			} else {
				value = `"` + n.vtag(strings.Trim(value, `"`)) + `"`
			}
		}
		hs[i] = name + ": " + value
	}
	sort.SliceStable(hs, func(i, j int) bool {
		a, _, _ := strings.Cut(hs[i], ":")
		b, _, _ := strings.Cut(hs[j], ":")
		return strings.ToLower(a) < strings.ToLower(b)
	})
	return status + "\r\n" + strings.Join(hs, "\r\n") + "\r\n\r\n" + body
}

// goldenCaseSets holds more golden cases, registered by other test files (one per
// feature) from init functions.
var goldenCaseSets []func() []goldenCase

func goldenCases() []goldenCase {
	cases := baseGoldenCases()
	for _, set := range goldenCaseSets {
		cases = append(cases, set()...)
	}
	return cases
}

func baseGoldenCases() []goldenCase {
	putText := func(path, value string, h ...string) func(*testing.T, *child) {
		return func(t *testing.T, s *child) { s.mustPut(t, path, value, h...) }
	}
	siblings := func(bucket string, d dialect) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			s.setProps(t, bucket, `{"allow_mult":true}`)
			s.mustPut(t, "/buckets/"+bucket+"/keys/k", "first value", d.hdr+"Meta-Colour", "red",
				d.hdr+"Index-Age_int", "7, 11", "Link", "</buckets/"+bucket+"/keys/other>; "+d.tag+`="next"`)
			s.mustPut(t, "/buckets/"+bucket+"/keys/k", `{"second":true}`, "Content-Type", "application/json; charset=utf-8")
		}
	}
	object := func(bucket string, d dialect) func(*testing.T, *child) {
		return putText("/buckets/"+bucket+"/keys/k", "hello, world", "Content-Type", "text/plain; charset=utf-8",
			d.hdr+"Meta-Author", "e2e", d.hdr+"Meta-Z-Last", "z",
			d.hdr+"Index-Email_bin", "b@example.com, a@example.com", d.hdr+"Index-Age_int", "42",
			"Link", "</buckets/"+bucket+"/keys/k2>; "+d.tag+`="friend", </buckets/other/keys/x%20y>; `+d.tag+`="with space"`)
	}
	return []goldenCase{
		{name: "siblings_text", setup: siblings("g-sib-text", dStore), req: "GET /buckets/g-sib-text/keys/k HTTP/1.1\n"},
		{name: "siblings_multipart", setup: siblings("g-sib-mp", dStore), req: "GET /buckets/g-sib-mp/keys/k HTTP/1.1\nAccept: multipart/mixed\n"},
		{name: "siblings_multipart_riak_old", riak: true, setup: siblings("g-sib-mp", dRiak), req: "GET /riak/g-sib-mp/k HTTP/1.1\nAccept: multipart/mixed\n"},
		{name: "object_get", setup: object("g-obj", dStore), req: "GET /buckets/g-obj/keys/k HTTP/1.1\n"},
		{name: "object_get_riak_old", riak: true, setup: object("g-obj", dRiak), req: "GET /riak/g-obj/k HTTP/1.1\n"},
		{name: "object_get_typed", setup: putText("/types/gt/buckets/g-obj/keys/k", "typed", "Link", "</types/gt/buckets/g-obj/keys/k2>; riaktag=\"t\""),
			req: "GET /types/gt/buckets/g-obj/keys/k HTTP/1.1\n"},
		{name: "siblings_multipart_typed_riak", riak: true, setup: func(t *testing.T, s *child) {
			s.mustPut(t, "/types/gt/buckets/g-sib/keys/k", "one")
			s.mustPut(t, "/types/gt/buckets/g-sib/keys/k", "two")
		}, req: "GET /types/gt/buckets/g-sib/keys/k HTTP/1.1\nAccept: multipart/mixed\n"},
		{name: "object_post_created_typed", req: "POST /types/gt/buckets/g-post/keys HTTP/1.1\nContent-Type: text/plain\n\nvalue"},
		{name: "props_get_typed", req: "GET /types/gt/buckets/g-props/props HTTP/1.1\n"},
		{name: "object_head", setup: object("g-head", dStore), req: "HEAD /buckets/g-head/keys/k HTTP/1.1\n"},
		{name: "object_put", req: "PUT /buckets/g-put/keys/k HTTP/1.1\nContent-Type: text/plain\n\nvalue"},
		{name: "object_put_returnbody", req: "PUT /buckets/g-rb/keys/k?returnbody=true HTTP/1.1\nContent-Type: text/plain\nX-Riak-Meta-A: 1\n\nvalue"},
		{name: "object_post_created", req: "POST /buckets/g-post/keys HTTP/1.1\nContent-Type: text/plain\n\nvalue"},
		{name: "object_post_created_old", req: "POST /riak/g-post HTTP/1.1\nContent-Type: text/plain\n\nvalue"},
		{name: "object_delete", setup: putText("/buckets/g-del/keys/k", "v"), req: "DELETE /buckets/g-del/keys/k HTTP/1.1\n"},
		{name: "not_modified_304", setup: putText("/buckets/g-304/keys/k", "v"), req: "GET /buckets/g-304/keys/k HTTP/1.1\nIf-None-Match: *\n"},
		{name: "props_get", req: "GET /buckets/g-props/props HTTP/1.1\n"},
		{name: "props_get_riak_old", riak: true, req: "GET /riak/g-props HTTP/1.1\n"},
		{name: "props_put", req: "PUT /buckets/g-props-put/props HTTP/1.1\nContent-Type: application/json\n\n{\"props\":{\"n_val\":2}}"},
		{name: "err_400_missing_content_type", req: "PUT /buckets/g/keys/k HTTP/1.1\n\nvalue"},
		{name: "err_400_quorum_word", req: "PUT /buckets/g/keys/k?dw=lots HTTP/1.1\nContent-Type: text/plain\n\nvalue"},
		{name: "err_400_quorum_n_val", req: "GET /buckets/g/keys/k?r=4 HTTP/1.1\n"},
		{name: "err_400_bool_param", req: "GET /buckets/g/keys/k?notfound_ok=maybe HTTP/1.1\n"},
		{name: "err_400_link", req: "PUT /buckets/g/keys/k HTTP/1.1\nContent-Type: text/plain\nLink: </riak/g/x>; riaktag=\"t\"\n\nvalue"},
		{name: "err_400_link_riak_old", riak: true, req: "PUT /riak/g/k HTTP/1.1\nContent-Type: text/plain\nLink: </buckets/g/keys/x>; storetag=\"t\"\n\nvalue"},
		{name: "err_400_index", req: "PUT /buckets/g/keys/k HTTP/1.1\nContent-Type: text/plain\nX-Store-Index-Foo: 1\nX-Riak-Index-Age_int: old\n\nvalue"},
		{name: "err_400_props_reasons", req: "PUT /buckets/g/props HTTP/1.1\nContent-Type: application/json\n\n{\"props\":{\"n_val\":\"three\",\"allow_mult\":\"maybe\",\"r\":\"default\"}}"},
		{name: "err_400_props_shape", req: "PUT /buckets/g/props HTTP/1.1\nContent-Type: application/json\n\n{\"n_val\":3}"},
		{name: "err_404_not_found", req: "GET /buckets/g/keys/missing HTTP/1.1\n"},
		{name: "err_404_delete_missing", req: "DELETE /buckets/g/keys/missing HTTP/1.1\n"},
		{name: "err_404_tombstone", setup: func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/g-tomb/keys/k", "v")
			expect(t, s.do(t, "DELETE", "/buckets/g-tomb/keys/k", nil, ""), 204, nil)
		}, req: "GET /buckets/g-tomb/keys/k HTTP/1.1\n"},
		{name: "err_404_unknown_type", req: "GET /types/nosuchtype/buckets/g/keys/k HTTP/1.1\n"},
		{name: "err_404_page", req: "GET /types/nosuchtype/buckets/g/props HTTP/1.1\n"},
		{name: "err_404_vtag_page", setup: putText("/buckets/g-vt/keys/k", "v"), req: "GET /buckets/g-vt/keys/k?vtag=nosuchvtag HTTP/1.1\n"},
		{name: "err_405", req: "DELETE /ping HTTP/1.1\n"},
		{name: "err_405_props_old", req: "DELETE /store/g HTTP/1.1\n"},
		{name: "err_406", setup: putText("/buckets/g-406/keys/k", "v"), req: "GET /buckets/g-406/keys/k HTTP/1.1\nAccept: application/json\n"},
		{name: "err_412", setup: putText("/buckets/g-412/keys/k", "v"), req: "PUT /buckets/g-412/keys/k HTTP/1.1\nContent-Type: text/plain\nIf-None-Match: *\n\nvalue"},
		{name: "err_413", req: "PUT /buckets/g/keys/big HTTP/1.1\nContent-Type: text/plain\n\n" + strings.Repeat("x", goldenMaxSize+1)},
		{name: "err_415_props", req: "PUT /buckets/g/props HTTP/1.1\nContent-Type: text/plain\n\n{\"props\":{}}"},
		{name: "err_415_media_type", req: "PUT /buckets/g/keys/k HTTP/1.1\nContent-Type: textplain\n\nvalue"},
		{name: "err_501", req: "PATCH /buckets/g/keys/k HTTP/1.1\n"},
		{name: "discovery_json", req: "GET / HTTP/1.1\nAccept: application/json\n"},
		{name: "discovery_html", req: "GET / HTTP/1.1\n"},
		{name: "discovery_json_riak", riak: true, req: "GET / HTTP/1.1\nAccept: application/json\n"},
		{name: "ping", req: "GET /ping HTTP/1.1\n"},
	}
}

const goldenMaxSize = 64

func TestGolden(t *testing.T) {
	t.Parallel()
	servers := map[bool]*child{
		false: startServerWithTypes(t, map[string]string{"gt": ""}, "--dialect", "store", "--max-object-size", itoa(goldenMaxSize)),
		true:  startServerWithTypes(t, map[string]string{"gt": ""}, "--dialect", "riak", "--max-object-size", itoa(goldenMaxSize)),
	}
	dir := filepath.Join("testdata", "golden")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := servers[c.riak]
			if c.setup != nil {
				c.setup(t, s)
			}
			req := wireRequest(c.req)
			norm := normalise
			if c.norm != nil {
				norm = c.norm
			}
			got := "=== request\n" + req + "\n=== response\n" + norm(rawExchange(t, s, req))
			path := filepath.Join(dir, c.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs (run with -update to accept):\n%s", path, firstDifference(string(want), got))
			}
		})
	}
}

// firstDifference shows the first differing line of two transcripts, with CRs visible.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			return "line " + itoa(i+1) + ":\n  want " + quoteLine(w, i < len(wl)) + "\n  got  " + quoteLine(g, i < len(gl)) +
				"\n--- full response:\n" + strings.ReplaceAll(got, "\r", `\r`)
		}
	}
	return "(same lines)"
}

func quoteLine(s string, present bool) string {
	if !present {
		return "<end of file>"
	}
	return strings.ReplaceAll(s, "\r", `\r`)
}

// TestGoldenNormaliser pins the normalisation itself, so a transcript cannot hide a change
// behind an over-eager placeholder.
func TestGoldenNormaliser(t *testing.T) {
	t.Parallel()
	const v1, v2 = "AAAAAAAAAAAAAAAAAAAAA1", "BBBBBBBBBBBBBBBBBBBBB2"
	const bd = "CCCCCCCCCCCCCCCCCCCCCCCCCC3"
	raw := "HTTP/1.1 300 Multiple Choices\r\nX-Store-Vclock: a85hYGBgzGDKBVIsbLvm1WYwJTLmsTLcjeE5ypcFAA==\r\n" +
		"ETag: \"6t1ORELfHnBYQ8xaa00nLm\"\r\nContent-Type: multipart/mixed; boundary=" + bd + "\r\n" +
		"Date: Wed, 10 Mar 2010 18:11:41 GMT\r\nx-request-id: abc\r\nContent-Length: 1\r\n\r\n" +
		"\r\n--" + bd + "\r\nContent-Type: text/plain\r\nEtag: " + v2 + "\r\nLast-Modified: Wed, 10 Mar 2010 18:11:41 GMT\r\n\r\nx" +
		"\r\n--" + bd + "\r\nEtag: " + v1 + "\r\n\r\n" + v2 + "\r\n--" + bd + "--\r\n"
	want := "HTTP/1.1 300 Multiple Choices\r\nContent-Length: 1\r\nContent-Type: multipart/mixed; boundary=<boundary>\r\n" +
		"Date: <date>\r\nETag: \"<clock-etag>\"\r\nx-request-id: <request-id>\r\nX-Store-Vclock: <vclock>\r\n\r\n" +
		"\r\n--<boundary>\r\nContent-Type: text/plain\r\nEtag: <vtag-1>\r\nLast-Modified: <date>\r\n\r\nx" +
		"\r\n--<boundary>\r\nEtag: <vtag-2>\r\n\r\n" + v2 + "\r\n--<boundary>--\r\n"
	if got := normalise(raw); got != want {
		t.Errorf("normalise:\n got %q\nwant %q", got, want)
	}
	// A single value's ETag is a vtag; Location's generated key is replaced; other
	// headers are untouched.
	raw = "HTTP/1.1 201 Created\r\nLocation: /buckets/b/keys/" + bd + "\r\nETag: \"" + v1 + "\"\r\nLink: </buckets/b>; rel=\"up\"\r\n\r\n"
	want = "HTTP/1.1 201 Created\r\nETag: \"<vtag-1>\"\r\nLink: </buckets/b>; rel=\"up\"\r\nLocation: /buckets/b/keys/<key>\r\n\r\n"
	if got := normalise(raw); got != want {
		t.Errorf("normalise:\n got %q\nwant %q", got, want)
	}
}
