package main

// Golden wire transcripts of link walking (testdata/golden/walk_*.txt), in the layout of
// golden_test.go. A walk response has more run-dependent bytes than normalise replaces
// (inner boundaries, clocks and vtags inside parts, the Expires date), so these cases
// use normaliseWalk, which runs normalise last.

import (
	"regexp"
	"strings"
	"testing"
)

var (
	walkExpiresRE = regexp.MustCompile(`(?m)^(Expires: )[^\r\n]+\r$`)
	walkInnerRE   = regexp.MustCompile(`(?m)^Content-Type: multipart/mixed; boundary=([0-9A-Za-z]+)\r$`)
	walkClockRE   = regexp.MustCompile(`(?m)^(X-(?:Riak|Store)-Vclock: )[^\r\n]+\r$`)
	walkVtagRE    = regexp.MustCompile(`(?m)(^Etag: |\?vtag=|^X-(?:Riak|Store)-Sibling-VTags: )([0-9A-Za-z]+(?:,[0-9A-Za-z]+)*)\r$`)
)

// normaliseWalk replaces what varies in a link-walk response and normalise leaves
// alone: the Expires date (<date>), each inner boundary (<inner-N>, in order of first
// appearance), the clocks of the objects (<vclock>) and their vtags (Location's vtag,
// Sibling-VTags and Etag lines: <vtag-N>, numbered in order of first appearance). Then
// normalise does the rest (outer boundary, Date, Last-Modified, header order).
func normaliseWalk(raw string) string {
	head, body, ok := strings.Cut(raw, "\r\n\r\n")
	if !ok {
		return raw
	}
	head = walkExpiresRE.ReplaceAllString(head+"\r", "${1}<date>\r")
	head = strings.TrimSuffix(head, "\r")
	for i, m := range walkInnerRE.FindAllStringSubmatch(body, -1) {
		body = strings.ReplaceAll(body, m[1], "<inner-"+itoa(i+1)+">")
	}
	body = walkClockRE.ReplaceAllString(body, "${1}<vclock>\r")
	n := &normaliser{}
	body = walkVtagRE.ReplaceAllStringFunc(body, func(s string) string {
		m := walkVtagRE.FindStringSubmatch(s)
		vs := strings.Split(m[2], ",")
		for i, v := range vs {
			vs[i] = n.vtag(v)
		}
		return m[1] + strings.Join(vs, ",") + "\r"
	})
	return normalise(head + "\r\n\r\n" + body)
}

func init() { goldenCaseSets = append(goldenCaseSets, walkGoldenCases) }

func walkGoldenCases() []goldenCase {
	// chain stores B/start → B-mid/one (next) → B-end/last (last), with metadata,
	// index entries and charsets to show every part header.
	chain := func(b string, d dialect) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/"+b+"/keys/start", "start", "Link",
				"</buckets/"+b+"-mid/keys/one>; "+d.tag+`="next", </buckets/`+b+"-mid/keys/missing>; "+d.tag+`="next"`)
			s.mustPut(t, "/buckets/"+b+"-mid/keys/one", `{"step":1}`, "Content-Type", "application/json; charset=utf-8",
				d.hdr+"Meta-Colour", "red", d.hdr+"Index-Age_int", "7",
				"Link", "</buckets/"+b+"-end/keys/last%20one>; "+d.tag+`="last"`)
			s.mustPut(t, "/buckets/"+b+"-end/keys/last%20one", "the end")
		}
	}
	return []goldenCase{
		{norm: normaliseWalk, name: "walk_old_riak_two_steps", riak: true, setup: chain("gw-old", dRiak),
			req: "GET /riak/gw-old/start/gw-old-mid,next,1/_,_,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_old_riak_unkept_step", riak: true, setup: chain("gw-unkept", dRiak),
			req: "GET /riak/gw-unkept/start/_,next,0/_,last,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_new_store", setup: chain("gw-new", dStore),
			req: "GET /buckets/gw-new/keys/start/_,_,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_siblings", setup: func(t *testing.T, s *child) {
			s.setProps(t, "gw-sib", `{"allow_mult":true}`)
			s.mustPut(t, "/buckets/gw-sib/keys/k", "first value", "X-Store-Meta-N", "1")
			s.mustPut(t, "/buckets/gw-sib/keys/k", `{"second":true}`, "Content-Type", "application/json")
			s.mustPut(t, "/buckets/gw-sib/keys/start", "start", "Link", `</buckets/gw-sib/keys/k>; storetag="s"`)
		}, req: "GET /buckets/gw-sib/keys/start/gw-sib,s,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_empty_steps", setup: func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/gw-empty/keys/start", "start")
		}, req: "GET /buckets/gw-empty/keys/start/_,_,1/_,_,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_err_400", req: "GET /buckets/gw/keys/k/gw,tag HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_err_400_riak_old", riak: true, req: "GET /riak/gw/k/gw,tag,1,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_err_403_typed", req: "GET /types/gt/buckets/gw/keys/k/_,_,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_err_404", req: "GET /buckets/gw/keys/missing/_,_,1 HTTP/1.1\n"},
		{norm: normaliseWalk, name: "walk_err_406", setup: func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/gw-406/keys/start", "start")
		}, req: "GET /buckets/gw-406/keys/start/_,_,1 HTTP/1.1\nAccept: application/json\n"},
	}
}

// TestGoldenWalkNormaliser pins normaliseWalk on a response with every varying part.
func TestGoldenWalkNormaliser(t *testing.T) {
	t.Parallel()
	const v1, v2, v3 = "AAAAAAAAAAAAAAAAAAAAA1", "BBBBBBBBBBBBBBBBBBBBB2", "CCCCCCCCCCCCCCCCCCCCC3"
	const outer, in1, in2 = "OOOOOOOOOOOOOOOOOOOOOOOOOO1", "IIIIIIIIIIIIIIIIIIIIIIIIII1", "IIIIIIIIIIIIIIIIIIIIIIIIII2"
	raw := "HTTP/1.1 200 OK\r\nExpires: Wed, 10 Mar 2010 18:21:41 GMT\r\nContent-Type: multipart/mixed; boundary=" + outer +
		"\r\nContent-Length: 9\r\nDate: Wed, 10 Mar 2010 18:11:41 GMT\r\n\r\n" +
		"\r\n--" + outer + "\r\nContent-Type: multipart/mixed; boundary=" + in1 + "\r\n" +
		"\r\n--" + in1 + "\r\nX-Riak-Vclock: a85hYGBg==\r\nLocation: /riak/b/k?vtag=" + v2 + "\r\nX-Riak-Sibling-VTags: " + v1 + "," + v3 +
		"\r\nContent-Type: text/plain\r\nEtag: " + v2 + "\r\nLast-Modified: Wed, 10 Mar 2010 18:11:41 GMT\r\n\r\nx" +
		"\r\n--" + in1 + "--\r\n" +
		"\r\n--" + outer + "\r\nContent-Type: multipart/mixed; boundary=" + in2 + "\r\n" +
		"\r\n--" + in2 + "--\r\n" +
		"\r\n--" + outer + "--\r\n"
	want := "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nContent-Type: multipart/mixed; boundary=<boundary>\r\nDate: <date>\r\nExpires: <date>\r\n\r\n" +
		"\r\n--<boundary>\r\nContent-Type: multipart/mixed; boundary=<inner-1>\r\n" +
		"\r\n--<inner-1>\r\nX-Riak-Vclock: <vclock>\r\nLocation: /riak/b/k?vtag=<vtag-1>\r\nX-Riak-Sibling-VTags: <vtag-2>,<vtag-3>" +
		"\r\nContent-Type: text/plain\r\nEtag: <vtag-1>\r\nLast-Modified: <date>\r\n\r\nx" +
		"\r\n--<inner-1>--\r\n" +
		"\r\n--<boundary>\r\nContent-Type: multipart/mixed; boundary=<inner-2>\r\n" +
		"\r\n--<inner-2>--\r\n" +
		"\r\n--<boundary>--\r\n"
	if got := normaliseWalk(raw); got != want {
		t.Errorf("normaliseWalk:\n got %q\nwant %q", got, want)
	}
}
