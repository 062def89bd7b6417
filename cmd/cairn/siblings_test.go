package main

// Item 5: siblings under allow_mult=true (300 as text/plain and multipart/mixed, ?vtag=,
// resolution with the clock read), allow_mult=false and last_write_wins.

import (
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// sibling is one part of a 300 multipart/mixed response.
type sibling struct {
	headers map[string]string // canonical name → value; repeated names joined with "\n"
	order   []string          // header names as written
	body    string
}

// parseSiblings checks the framing of a multipart/mixed 300 response and returns its parts.
func parseSiblings(t testing.TB, r *resp) []sibling {
	t.Helper()
	parts, err := siblingParts(r)
	if err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return parts
}

var boundaryValueRE = regexp.MustCompile(`^[0-9A-Za-z]{27}$`)

// siblingParts is parseSiblings without t.Fatal, for use from other goroutines.
func siblingParts(r *resp) ([]sibling, error) {
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "multipart/mixed; boundary=") {
		return nil, fmt.Errorf("Content-Type %q, want multipart/mixed; boundary=...", ct)
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/mixed" || !boundaryValueRE.MatchString(params["boundary"]) {
		return nil, fmt.Errorf("bad multipart Content-Type %q", ct)
	}
	bd := params["boundary"]
	body := string(r.Body)
	if !strings.HasPrefix(body, "\r\n--"+bd+"\r\n") || !strings.HasSuffix(body, "\r\n--"+bd+"--\r\n") {
		return nil, fmt.Errorf("multipart framing: body does not start with CRLF--B CRLF and end with CRLF--B--CRLF")
	}
	parts, err := wire.ParseMultipart(r.Body, bd)
	if err != nil {
		return nil, fmt.Errorf("ParseMultipart: %w", err)
	}
	out := make([]sibling, len(parts))
	for i, p := range parts {
		out[i].headers = map[string]string{}
		for _, h := range p.Headers {
			name := http.CanonicalHeaderKey(h[0])
			if v, ok := out[i].headers[name]; ok {
				out[i].headers[name] = v + "\n" + h[1]
			} else {
				out[i].headers[name] = h[1]
			}
			out[i].order = append(out[i].order, h[0])
		}
		out[i].body = string(p.Body)
	}
	return out, nil
}

// siblingVTags parses a 300 text/plain body.
func siblingVTags(t testing.TB, r *resp) []string {
	t.Helper()
	expectHeader(t, r, "Content-Type", "text/plain")
	body := string(r.Body)
	if !strings.HasPrefix(body, "Siblings:\n") || !strings.HasSuffix(body, "\n") {
		t.Fatalf("300 text body %q, want Siblings:\\n<vtag>\\n...", body)
	}
	tags := strings.Split(strings.TrimSuffix(strings.TrimPrefix(body, "Siblings:\n"), "\n"), "\n")
	for _, v := range tags {
		if !vtagRE.MatchString(v) {
			t.Fatalf("vtag %q in %q", v, body)
		}
	}
	return tags
}

func TestSiblings(t *testing.T) {
	t.Parallel()
	forEachDialect(t, []string{"--delete-reap-delay", "2s"}, func(t *testing.T, s *child, d dialect) {
		for _, f := range forms {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				siblingCases(t, s, d, f)
			})
		}
	})
}

func siblingCases(t *testing.T, s *child, d dialect, f form) {
	d = f.answer(d)
	o := d.other()
	b := "sib-" + f.name
	// Set allow_mult through this form's props address.
	r := s.do(t, "PUT", f.props(b), hdr{"Content-Type", "application/json"}, `{"props":{"allow_mult":true}}`)
	expect(t, r, 204, ptr(""))

	t.Run("300", func(t *testing.T) {
		k := "k"
		s.mustPut(t, f.obj(b, k), "one", d.hdr+"Meta-Who", "first", "Link", linkTo(f, d, b, "t", "tag"))
		s.mustPut(t, f.obj(b, k), "two", "Content-Type", "application/json; charset=utf-8", o.hdr+"Index-X_bin", "v")

		// No Accept, */*, or text/plain preferred: the list of vtags.
		var tags []string
		for _, a := range []string{"", "*/*", "text/plain, multipart/mixed;q=0.5"} {
			r := s.get(t, f.obj(b, k), "Accept", a)
			expect(t, r, 300, nil)
			tags = siblingVTags(t, r)
			if len(tags) != 2 || tags[0] == tags[1] {
				t.Fatalf("want 2 distinct vtags, got %v", tags)
			}
			expectHeader(t, r, "Vary", "Accept, Accept-Encoding")
			expectHeader(t, r, "Link", "")
			vclockOf(t, r, d)
			if !quotedTagRE.MatchString(r.Header.Get("ETag")) || r.Header.Get("Last-Modified") == "" {
				t.Errorf("300 without quoted ETag / Last-Modified:\n%s", r)
			}
		}
		// HEAD: same status and length, no body.
		g := s.get(t, f.obj(b, k))
		h := s.do(t, "HEAD", f.obj(b, k), nil, "")
		expect(t, h, 300, ptr(""))
		expectHeader(t, h, "Content-Length", itoa(len(g.Body)))

		// multipart/mixed: every sibling with its headers, in the reference order.
		for _, a := range []string{"multipart/mixed", "multipart/mixed,application/json;q=0.7, */*;q=0.5"} {
			r := s.get(t, f.obj(b, k), "Accept", a)
			expect(t, r, 300, nil)
			expectHeader(t, r, "Vary", "Accept, Accept-Encoding")
			vclockOf(t, r, d)
			parts := parseSiblings(t, r)
			if len(parts) != 2 {
				t.Fatalf("%d parts, want 2", len(parts))
			}
			p1, p2 := parts[0], parts[1]
			if p1.body != "one" || p2.body != "two" {
				p1, p2 = p2, p1
			}
			if p1.body != "one" || p2.body != "two" {
				t.Fatalf("part bodies %q, %q", parts[0].body, parts[1].body)
			}
			wantOrder1 := []string{"Content-Type", "Link", "Etag", "Last-Modified", d.hdr + "Meta-Who"}
			wantOrder2 := []string{"Content-Type", "Link", "Etag", "Last-Modified", "x-" + d.name + "-index-x_bin"}
			if strings.Join(p1.order, ",") != strings.Join(wantOrder1, ",") || strings.Join(p2.order, ",") != strings.Join(wantOrder2, ",") {
				t.Errorf("part headers %v / %v, want %v / %v", p1.order, p2.order, wantOrder1, wantOrder2)
			}
			if p1.headers["Content-Type"] != "text/plain" || p2.headers["Content-Type"] != "application/json; charset=utf-8" {
				t.Errorf("part content types %q, %q", p1.headers["Content-Type"], p2.headers["Content-Type"])
			}
			if want := f.upLink(d, b) + ", <" + f.outObj(d, b, "t") + ">; " + d.tag + `="tag"`; p1.headers["Link"] != want {
				t.Errorf("part Link %q, want %q", p1.headers["Link"], want)
			}
			if p2.headers["Link"] != f.upLink(d, b) {
				t.Errorf("part Link %q, want %q", p2.headers["Link"], f.upLink(d, b))
			}
			if p1.headers[d.hdr+"Meta-Who"] != "first" || p2.headers["X-"+strings.ToUpper(d.name[:1])+d.name[1:]+"-Index-X_bin"] != "v" {
				t.Errorf("part meta/index headers: %v / %v", p1.headers, p2.headers)
			}
			got := []string{p1.headers["Etag"], p2.headers["Etag"]}
			want := append([]string(nil), tags...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("part Etags %v, want the vtags %v", got, want)
			}
			for _, p := range parts {
				if _, ok := wire.ParseHTTPDate(p.headers["Last-Modified"]); !ok {
					t.Errorf("part Last-Modified %q", p.headers["Last-Modified"])
				}
			}
		}
		expectPage(t, s.get(t, f.obj(b, k), "Accept", "application/json"), 406)

		// ?vtag= selects one sibling, with the fetch headers of a single value.
		for _, tag := range tags {
			r := s.get(t, f.obj(b, k)+"?vtag="+tag)
			expect(t, r, 200, nil)
			expectHeader(t, r, "ETag", `"`+tag+`"`)
			vclockOf(t, r, d)
			if string(r.Body) == "one" {
				expectHeader(t, r, "Content-Type", "text/plain")
				expectHeader(t, r, d.hdr+"Meta-Who", "first")
			} else if string(r.Body) != "two" {
				t.Errorf("vtag %s: body %q", tag, r.Body)
			}
		}
		expectPage(t, s.get(t, f.obj(b, k)+"?vtag=nosuchvtag"), 404)

		// A conditional GET of the 300 uses its ETag.
		r := s.get(t, f.obj(b, k))
		expect(t, s.get(t, f.obj(b, k), "If-None-Match", r.Header.Get("ETag")), 304, ptr(""))

		// A write with the clock read resolves them (clock sent in the other name set).
		clock := vclockOf(t, r, d)
		s.mustPut(t, f.obj(b, k), "merged", o.hdr+"Vclock", clock)
		expect(t, s.get(t, f.obj(b, k)), 200, ptr("merged"))
	})

	t.Run("returnbody", func(t *testing.T) {
		k := "rb"
		s.mustPut(t, f.obj(b, k), "a")
		r := s.do(t, "PUT", f.obj(b, k)+"?returnbody=true", hdr{"Content-Type", "text/plain"}, "b")
		expect(t, r, 300, nil)
		if len(siblingVTags(t, r)) != 2 {
			t.Fatalf("returnbody 300: %s", r)
		}
		// Accept is negotiated against the stored type before the write (406, nothing
		// written), then decides the form of the sibling list.
		expectPage(t, s.do(t, "PUT", f.obj(b, k)+"?returnbody=true", hdr{"Content-Type", "text/plain", "Accept", "multipart/mixed"}, "x"), 406)
		r = s.do(t, "PUT", f.obj(b, k)+"?returnbody=true", hdr{"Content-Type", "text/plain", "Accept", "multipart/mixed, */*;q=0.5"}, "c")
		expect(t, r, 300, nil)
		parts := parseSiblings(t, r)
		var bodies []string
		for _, p := range parts {
			bodies = append(bodies, p.body)
		}
		sort.Strings(bodies)
		if strings.Join(bodies, ",") != "a,b,c" {
			t.Fatalf("returnbody multipart: %v, want a, b, c", bodies)
		}
	})

	t.Run("stale-clock", func(t *testing.T) {
		// A write carrying an older clock does not descend the stored one: a sibling.
		k := "stale"
		s.mustPut(t, f.obj(b, k), "v1")
		c1 := vclockOf(t, s.get(t, f.obj(b, k)), d)
		s.mustPut(t, f.obj(b, k), "v2", d.hdr+"Vclock", c1)
		s.mustPut(t, f.obj(b, k), "v3", d.hdr+"Vclock", c1)
		r := s.get(t, f.obj(b, k), "Accept", "multipart/mixed")
		expect(t, r, 300, nil)
		var bodies []string
		for _, p := range parseSiblings(t, r) {
			bodies = append(bodies, p.body)
		}
		sort.Strings(bodies)
		if strings.Join(bodies, ",") != "v2,v3" {
			t.Errorf("siblings %v, want v2 and v3", bodies)
		}
	})

	t.Run("delete-with-stale-clock", func(t *testing.T) {
		// A tombstone written with a clock that does not descend the stored one becomes a
		// sibling marked deleted.
		k := "tomb-sib"
		s.mustPut(t, f.obj(b, k), "v1")
		c1 := vclockOf(t, s.get(t, f.obj(b, k)), d)
		s.mustPut(t, f.obj(b, k), "v2")
		expect(t, s.do(t, "DELETE", f.obj(b, k), hdr{o.hdr + "Vclock", c1}, ""), 204, nil)
		r := s.get(t, f.obj(b, k), "Accept", "multipart/mixed")
		expect(t, r, 300, nil)
		deleted := 0
		for _, p := range parseSiblings(t, r) {
			if p.headers[d.hdr+"Deleted"] == "true" {
				deleted++
				if p.body != "" {
					t.Errorf("tombstone part has body %q", p.body)
				}
				// The Deleted header follows Last-Modified.
				if i := indexOf(p.order, d.hdr+"Deleted"); i < 1 || p.order[i-1] != "Last-Modified" {
					t.Errorf("tombstone part header order %v", p.order)
				}
			}
		}
		if deleted != 1 {
			t.Errorf("%d tombstone parts, want 1:\n%s", deleted, r.Body)
		}
	})

	t.Run("write-over-tombstone", func(t *testing.T) {
		k := "over-tomb"
		s.mustPut(t, f.obj(b, k), "v1")
		expect(t, s.do(t, "DELETE", f.obj(b, k), nil, ""), 204, nil)
		r := s.get(t, f.obj(b, k))
		expect(t, r, 404, nil)
		clock := vclockOf(t, r, d)
		s.mustPut(t, f.obj(b, k), "v2", d.hdr+"Vclock", clock)
		expect(t, s.get(t, f.obj(b, k)), 200, ptr("v2"))
	})

	t.Run("allow_mult=false", func(t *testing.T) {
		bb := "nomult-" + f.name // default props
		for i, v := range []string{"a", "b", "c"} {
			s.mustPut(t, f.obj(bb, "k"), v)
			r := s.get(t, f.obj(bb, "k"))
			expect(t, r, 200, &[]string{"a", "b", "c"}[i])
		}
		// Even with a stale clock the newest write wins.
		c := vclockOf(t, s.get(t, f.obj(bb, "k")), d)
		s.mustPut(t, f.obj(bb, "k"), "d")
		s.mustPut(t, f.obj(bb, "k"), "e", d.hdr+"Vclock", c)
		expect(t, s.get(t, f.obj(bb, "k")), 200, ptr("e"))
	})

	t.Run("last_write_wins", func(t *testing.T) {
		bb := "lww-" + f.name
		expect(t, s.do(t, "PUT", f.props(bb), hdr{"Content-Type", "application/json"}, `{"props":{"allow_mult":true,"last_write_wins":true}}`), 204, nil)
		s.mustPut(t, f.obj(bb, "k"), "a")
		s.mustPut(t, f.obj(bb, "k"), "b")
		c := vclockOf(t, s.get(t, f.obj(bb, "k")), d)
		s.mustPut(t, f.obj(bb, "k"), "c")
		s.mustPut(t, f.obj(bb, "k"), "d", d.hdr+"Vclock", c)
		expect(t, s.get(t, f.obj(bb, "k")), 200, ptr("d"))
	})
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
