package main

// End-to-end tests of link walking: GET /store/B/K/steps and /buckets/B/keys/K/steps.

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// walkObj is one object of a link-walk response: its header lines in order and its body.
type walkObj struct {
	hdr  [][2]string
	body string
}

// get returns the value of the first header named name (exact case), "" if none.
func (o walkObj) get(name string) string {
	for _, h := range o.hdr {
		if h[0] == name {
			return h[1]
		}
	}
	return ""
}

// names returns the header names in order.
func (o walkObj) names() []string {
	var n []string
	for _, h := range o.hdr {
		n = append(n, h[0])
	}
	return n
}

// place is "bucket/key" from the Location header, without the query.
func (o walkObj) place(t testing.TB) string {
	t.Helper()
	loc, _, _ := strings.Cut(o.get("Location"), "?")
	for _, p := range []string{"/store/", "/riak/", "/buckets/"} {
		if rest, ok := strings.CutPrefix(loc, p); ok {
			return strings.Replace(rest, "/keys/", "/", 1)
		}
	}
	t.Fatalf("Location %q", loc)
	return ""
}

// walkResp is a parsed link-walk response: one object list per kept step.
type walkResp struct {
	r     *resp
	steps [][]walkObj
}

// places renders the steps as "[b/k b/k][...]".
func (w *walkResp) places(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, objs := range w.steps {
		var ps []string
		for _, o := range objs {
			ps = append(ps, o.place(t))
		}
		b.WriteString("[" + strings.Join(ps, " ") + "]")
	}
	return b.String()
}

var (
	walkCTRE      = regexp.MustCompile(`^multipart/mixed; boundary=([0-9A-Za-z]+)$`)
	walkInnerCTRE = regexp.MustCompile(`^Content-Type: multipart/mixed; boundary=([0-9A-Za-z]+)\r\n`)
)

// splitParts splits a multipart body with the reference's exact framing
// ("\r\n--B\r\n" before each part, "\r\n--B--\r\n" at the end, nothing else) into its
// parts' contents, failing the test on any other framing.
func splitParts(t testing.TB, body, boundary string) []string {
	t.Helper()
	delim := "\r\n--" + boundary
	rest, ok := strings.CutSuffix(body, delim+"--\r\n")
	if !ok {
		t.Fatalf("body does not end with the closing delimiter of %s: %q", boundary, body)
	}
	if rest == "" {
		return nil
	}
	rest, ok = strings.CutPrefix(rest, delim+"\r\n")
	if !ok {
		t.Fatalf("body does not start with the delimiter of %s: %q", boundary, body)
	}
	return strings.Split(rest, delim+"\r\n")
}

// parseWalk checks a 200 link-walk response's headers and parses its body strictly.
func parseWalk(t testing.TB, r *resp) *walkResp {
	t.Helper()
	expect(t, r, http.StatusOK, nil)
	m := walkCTRE.FindStringSubmatch(r.Header.Get("Content-Type"))
	if m == nil {
		t.Fatalf("Content-Type %q\n%s", r.Header.Get("Content-Type"), r)
	}
	exp, err := http.ParseTime(r.Header.Get("Expires"))
	if d := time.Until(exp); err != nil || d < 590*time.Second || d > 610*time.Second {
		t.Errorf("Expires %q is not 600 s ahead (%v)", r.Header.Get("Expires"), err)
	}
	seen := map[string]bool{m[1]: true}
	w := &walkResp{r: r, steps: [][]walkObj{}}
	for _, part := range splitParts(t, string(r.Body), m[1]) {
		im := walkInnerCTRE.FindStringSubmatch(part)
		if im == nil {
			t.Fatalf("outer part does not start with its multipart Content-Type: %q", part)
		}
		if seen[im[1]] {
			t.Errorf("boundary %s used twice", im[1])
		}
		seen[im[1]] = true
		objs := []walkObj{}
		for _, p := range splitParts(t, part[len(im[0]):], im[1]) {
			head, body, ok := strings.Cut(p, "\r\n\r\n")
			if !ok {
				t.Fatalf("object part without a header block: %q", p)
			}
			var o walkObj
			for line := range strings.SplitSeq(head, "\r\n") {
				name, val, ok := strings.Cut(line, ": ")
				if !ok {
					t.Fatalf("header line %q", line)
				}
				o.hdr = append(o.hdr, [2]string{name, val})
			}
			o.body = body
			objs = append(objs, o)
		}
		w.steps = append(w.steps, objs)
	}
	return w
}

// walkPut stores a text value with links given as "bucket/key/tag", written in the new
// URL form with tag attribute tag.
func walkPut(t testing.TB, s *child, bucket, key, value, tag string, links ...string) {
	t.Helper()
	var ls []string
	for _, l := range links {
		p := strings.SplitN(l, "/", 3)
		ls = append(ls, "</buckets/"+p[0]+"/keys/"+p[1]+">; "+tag+`="`+p[2]+`"`)
	}
	h := []string{}
	if len(ls) > 0 {
		h = append(h, "Link", strings.Join(ls, ", "))
	}
	s.mustPut(t, "/buckets/"+bucket+"/keys/"+key, value, h...)
}

// walkGraph stores the walk tests' graph (ghost is never stored):
//
//	people/alice → people/bob (friend), people/carol (friend), pets/rex (pet), people/ghost (friend)
//	people/bob   → pets/rex (pet), people/carol (friend)
//	people/carol → pets/rex (pet), pets/tom (pet), people/alice (friend)
func walkGraph(t testing.TB, s *child, d dialect) {
	walkPut(t, s, "people", "alice", "A", d.tag, "people/bob/friend", "people/carol/friend", "pets/rex/pet", "people/ghost/friend")
	walkPut(t, s, "people", "bob", "B", d.other().tag, "pets/rex/pet", "people/carol/friend")
	walkPut(t, s, "people", "carol", "C", d.tag, "pets/rex/pet", "pets/tom/pet", "people/alice/friend")
	walkPut(t, s, "pets", "rex", "R", d.tag)
	walkPut(t, s, "pets", "tom", "T", d.tag)
}

func TestLinkWalk(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		walkGraph(t, s, d)

		t.Run("old form", func(t *testing.T) {
			for _, e := range []dialect{d, d.other()} { // answered in the prefix's names
				in := e.prefix
				w := parseWalk(t, s.get(t, in+"/people/alice/_,_,_"))
				if got := w.places(t); got != "[people/bob people/carol pets/rex]" {
					t.Fatalf("%s: %s", in, got)
				}
				bob := w.steps[0][0]
				g := s.get(t, "/buckets/people/keys/bob")
				wantNames := []string{e.hdr + "Vclock", "Location", "Content-Type", "Link", "Etag", "Last-Modified"}
				if !slices.Equal(bob.names(), wantNames) {
					t.Errorf("headers %v, want %v", bob.names(), wantNames)
				}
				if bob.get(e.hdr+"Vclock") != g.Header.Get(d.hdr+"Vclock") || bob.get(e.hdr+"Vclock") == "" {
					t.Errorf("vclock %q, GET has %q", bob.get(e.hdr+"Vclock"), g.Header.Get(d.hdr+"Vclock"))
				}
				if got := bob.get("Location"); got != e.prefix+"/people/bob" {
					t.Errorf("Location %q", got)
				}
				wantLink := "<" + e.prefix + `/people>; rel="up", <` + e.prefix + `/pets/rex>; ` + e.tag + `="pet", <` +
					e.prefix + `/people/carol>; ` + e.tag + `="friend"`
				if got := bob.get("Link"); got != wantLink {
					t.Errorf("Link %q, want %q", got, wantLink)
				}
				if `"`+bob.get("Etag")+`"` != g.Header.Get("ETag") || bob.get("Last-Modified") != g.Header.Get("Last-Modified") {
					t.Errorf("Etag %q / Last-Modified %q; GET has %q / %q", bob.get("Etag"), bob.get("Last-Modified"),
						g.Header.Get("ETag"), g.Header.Get("Last-Modified"))
				}
				if bob.body != "B" || bob.get("Content-Type") != "text/plain" {
					t.Errorf("body %q, type %q", bob.body, bob.get("Content-Type"))
				}
			}
		})

		t.Run("new form", func(t *testing.T) {
			w := parseWalk(t, s.get(t, "/buckets/people/keys/bob/_,_,1"))
			if got := w.places(t); got != "[people/carol pets/rex]" {
				t.Fatal(got)
			}
			carol := w.steps[0][0]
			if got := carol.get("Location"); got != "/buckets/people/keys/carol" {
				t.Errorf("Location %q", got)
			}
			// The up link, then the stored links in the order they were written.
			if got, want := carol.get("Link"), `</buckets/people>; rel="up", </buckets/pets/keys/rex>; `+d.tag+
				`="pet", </buckets/pets/keys/tom>; `+d.tag+`="pet", </buckets/people/keys/alice>; `+d.tag+`="friend"`; got != want {
				t.Errorf("Link %q, want %q", got, want)
			}
		})

		for _, c := range []struct{ name, path, want string }{
			{"bucket filter", "/buckets/people/keys/alice/people,_,1", "[people/bob people/carol]"},
			{"tag filter", "/buckets/people/keys/alice/_,pet,1", "[pets/rex]"},
			{"bucket and tag", "/buckets/people/keys/carol/pets,pet,1", "[pets/rex pets/tom]"},
			{"no match", "/buckets/people/keys/alice/cars,_,1", "[]"},
			{"single step with keep 0 is kept", "/buckets/people/keys/alice/_,pet,0", "[pets/rex]"},
			{"unkept step chains", "/buckets/people/keys/alice/people,friend,0/_,pet,1", "[pets/rex pets/tom]"},
			{"default keep of an inner step is 0", "/buckets/people/keys/alice/people,friend,_/_,pet,_", "[pets/rex pets/tom]"},
			{"two kept steps, de-duplicated", "/buckets/people/keys/alice/people,friend,1/_,_,1",
				"[people/bob people/carol][people/alice people/carol pets/rex pets/tom]"},
			{"three steps, middle unkept", d.other().prefix + "/people/bob/_,friend,1/_,friend,0/_,_,1",
				"[people/carol][people/bob people/carol pets/rex]"},
			{"final step kept despite 0", "/buckets/people/keys/alice/_,pet,1/_,_,0", "[pets/rex][]"},
			{"empty kept steps", "/buckets/people/keys/alice/_,nosuchtag,1/_,_,1", "[][]"},
			{"trailing slash", "/buckets/people/keys/alice/_,pet,1/", "[pets/rex]"},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got := parseWalk(t, s.get(t, c.path)).places(t); got != c.want {
					t.Errorf("%s: got %s, want %s", c.path, got, c.want)
				}
			})
		}

		t.Run("encoded names", func(t *testing.T) {
			s.mustPut(t, "/buckets/my%20b/keys/k%2F1", "target")
			s.mustPut(t, "/buckets/enc/keys/start", "start", "Link", `</buckets/my+b/keys/k%2F1>; `+d.tag+`="t%2C1"`)
			w := parseWalk(t, s.get(t, "/buckets/enc/keys/start/my+b,t%2C1,1"))
			if len(w.steps) != 1 || len(w.steps[0]) != 1 || w.steps[0][0].body != "target" {
				t.Fatalf("%s\n%s", w.places(t), w.r)
			}
			if got := w.steps[0][0].get("Location"); got != "/buckets/my+b/keys/k%2F1" {
				t.Errorf("Location %q", got)
			}
			w = parseWalk(t, s.get(t, d.prefix+"/enc/start/my%20b,_,1"))
			if got := w.steps[0][0].get("Location"); got != d.prefix+"/my+b/k%2F1" {
				t.Errorf("old-form Location %q", got)
			}
		})

		t.Run("siblings", func(t *testing.T) {
			s.setProps(t, "multi", `{"allow_mult":true}`)
			s.mustPut(t, "/buckets/multi/keys/m", "one", d.hdr+"Meta-N", "1")
			s.mustPut(t, "/buckets/multi/keys/m", "two", "Content-Type", "application/json")
			walkPut(t, s, "sibstart", "s", "S", d.tag, "multi/m/x")
			vtags := strings.Split(strings.TrimSpace(strings.TrimPrefix(string(s.get(t, "/buckets/multi/keys/m").Body), "Siblings:\n")), "\n")
			if len(vtags) != 2 {
				t.Fatalf("vtags %q", vtags)
			}
			for _, path := range []string{"/buckets/sibstart/keys/s/_,_,1", d.prefix + "/sibstart/s/_,_,1"} {
				w := parseWalk(t, s.get(t, path))
				if len(w.steps) != 1 || len(w.steps[0]) != 1 {
					t.Fatalf("%s: %s", path, w.places(t))
				}
				m := w.steps[0][0]
				wantLoc := "/buckets/multi/keys/m"
				if strings.HasPrefix(path, d.prefix) {
					wantLoc = d.prefix + "/multi/m"
				}
				loc, first, ok := strings.Cut(m.get("Location"), "?vtag=")
				if !ok || loc != wantLoc {
					t.Fatalf("Location %q", m.get("Location"))
				}
				other := m.get(d.hdr + "Sibling-VTags")
				if got := []string{first, other}; !slices.Contains(vtags, first) || !slices.Contains(vtags, other) || first == other {
					t.Errorf("vtags in the part %q, the object's %q", got, vtags)
				}
				wantNames := []string{d.hdr + "Vclock", "Location", d.hdr + "Sibling-VTags", "Content-Type", "Link", "Etag", "Last-Modified"}
				if m.body == "one" {
					wantNames = append(wantNames, d.hdr+"Meta-N")
				}
				if !slices.Equal(m.names(), wantNames) {
					t.Errorf("headers %v, want %v", m.names(), wantNames)
				}
				if m.get("Etag") != first {
					t.Errorf("part Etag %q, Location vtag %q", m.get("Etag"), first)
				}
				g := s.get(t, "/buckets/multi/keys/m?vtag="+first)
				if string(g.Body) != m.body || g.Header.Get("Content-Type") != m.get("Content-Type") {
					t.Errorf("part body %q (%s); the sibling is %q (%s)", m.body, m.get("Content-Type"), g.Body, g.Header.Get("Content-Type"))
				}
			}
		})

		t.Run("deleted targets skipped", func(t *testing.T) {
			walkPut(t, s, "del", "start", "S", d.tag, "del/gone/x", "del/here/x")
			walkPut(t, s, "del", "gone", "G", d.tag)
			walkPut(t, s, "del", "here", "H", d.tag)
			expect(t, s.do(t, "DELETE", "/buckets/del/keys/gone", nil, ""), 204, nil)
			if got := parseWalk(t, s.get(t, "/buckets/del/keys/start/_,_,1")).places(t); got != "[del/here]" {
				t.Errorf("got %s", got)
			}
			// A deleted origin is missing.
			expect(t, s.get(t, "/buckets/del/keys/gone/_,_,1"), 404, nil)
		})

		t.Run("methods", func(t *testing.T) {
			g := parseWalk(t, s.get(t, "/buckets/people/keys/alice/_,pet,1"))
			p := parseWalk(t, s.do(t, "POST", "/buckets/people/keys/alice/_,pet,1", nil, ""))
			if g.places(t) != p.places(t) || g.steps[0][0].body != p.steps[0][0].body {
				t.Errorf("POST %s, GET %s", p.places(t), g.places(t))
			}
			h := s.do(t, "HEAD", "/buckets/people/keys/alice/_,pet,1", nil, "")
			if h.StatusCode != 200 || len(h.Body) != 0 || !walkCTRE.MatchString(h.Header.Get("Content-Type")) ||
				h.Header.Get("Expires") == "" || h.ContentLength != int64(len(g.r.Body)) {
				t.Errorf("HEAD:\n%s", h)
			}
			r := s.do(t, "PUT", "/buckets/people/keys/alice/_,pet,1", hdr{"Content-Type", "text/plain"}, "x")
			expect(t, r, 405, nil)
			expectHeader(t, r, "Allow", "HEAD, GET, POST")
		})

		t.Run("accept", func(t *testing.T) {
			for _, a := range []string{"*/*", "multipart/*", "multipart/mixed,application/json;q=0.7, */*;q=0.5"} {
				parseWalk(t, s.get(t, "/buckets/people/keys/alice/_,pet,1", "Accept", a))
			}
			for _, a := range []string{"application/json", "text/plain, multipart/mixed;q=0"} {
				r := s.get(t, "/buckets/people/keys/alice/_,pet,1", "Accept", a)
				expect(t, r, 406, nil)
				expectHeader(t, r, "Content-Type", "text/html")
			}
		})

		t.Run("errors", func(t *testing.T) {
			msg := "Invalid link walk query submitted. Valid link walk query format is: " + d.prefix +
				"/some_bucket/some_key/<bucket>,<" + d.tag + ">,0|1/..."
			for _, p := range []string{
				"/buckets/people/keys/alice/_,_",
				"/buckets/people/keys/alice/a,b,1,2",
				"/buckets/people/keys/alice/a,,1",
				"/buckets/people/keys/alice/,a,b,1",
				"/buckets/people/keys/alice/_,_,1/x",
				d.prefix + "/people/alice/_,_,1/_,_",
				d.prefix + "/people/alice/preflist",
				"/buckets/people/keys/missing/_,_", // malformed before missing
			} {
				r := s.get(t, p)
				expect(t, r, 400, &msg)
				expectHeader(t, r, "Content-Type", "text/plain")
			}
			r := s.get(t, "/buckets/people/keys/missing/_,_,1")
			expect(t, r, 404, nil)
			expectHeader(t, r, "Content-Type", "text/html")
			if !strings.Contains(string(r.Body), "<TITLE>404 Not Found</TITLE>") {
				t.Errorf("404 body %q", r.Body)
			}
			expect(t, s.get(t, d.prefix+"/people/missing/_,_,1"), 404, nil)
			for _, p := range []string{"/types/" + e2eType + "/buckets/people/keys/alice/_,_,1", "/types/default/buckets/people/keys/alice/_,_,1"} {
				r = s.get(t, p)
				expect(t, r, 403, ptr("Link-walking is not allowed on keys stored in bucket-types."))
				expectHeader(t, r, "Content-Type", "text/plain")
			}
			// The preflist route comes first for a single step named preflist.
			r = s.get(t, "/buckets/people/keys/alice/preflist")
			expect(t, r, 200, nil)
			expectHeader(t, r, "Content-Type", "application/json")
		})
	})
}

// TestLinkWalkWASMLinkfun walks links that the example WebAssembly linkfun
// (wasm-examples/go/json-linkfun) reads from JSON values.
func TestLinkWalkWASMLinkfun(t *testing.T) {
	t.Parallel()
	s := startProcess(t) // WebAssembly modules compile slowly under -race in process
	putModule(t, s, "json_links", exampleWASM(t, "go/json-linkfun"), 201)
	s.setProps(t, "people", `{"linkfun":{"mod":"json_links","fun":"links_from_json"}}`)
	jsonCT := []string{"Content-Type", "application/json"}
	// The stored Link to pets/tom is not what this bucket's linkfun reads.
	s.mustPut(t, "/buckets/people/keys/alice", `{"name":"Alice","links":[{"bucket":"people","key":"bob","tag":"friend"},`+
		`{"bucket":"people","key":"carol","tag":"sister"},{"bucket":"pets","key":"rex","tag":"friend"}]}`,
		append(jsonCT, "Link", `</buckets/pets/keys/tom>; storetag="friend"`)...)
	s.mustPut(t, "/buckets/people/keys/bob", `{"name":"Bob","links":[{"bucket":"pets","key":"tom","tag":"pet"}]}`, jsonCT...)
	s.mustPut(t, "/buckets/people/keys/carol", `{"name":"Carol"}`, jsonCT...)
	s.mustPut(t, "/buckets/people/keys/mallory", `{"links":[{"bucket":"people"}]}`, jsonCT...)
	// pets keeps the stock linkfun: its stored links.
	walkPut(t, s, "pets", "rex", "R", "storetag", "pets/tom/pet")
	walkPut(t, s, "pets", "tom", "T", "storetag")

	for _, c := range []struct{ path, want string }{
		{"/buckets/people/keys/alice/_,friend,1", "[people/bob pets/rex]"},
		{"/buckets/people/keys/alice/people,_,1", "[people/bob people/carol]"},
		{"/buckets/people/keys/alice/_,_,1/_,_,1", "[people/bob people/carol pets/rex][pets/tom]"},
		{"/store/people/alice/people,friend,0/pets,pet,1", "[pets/tom]"},
		{"/buckets/people/keys/carol/_,_,1", "[]"},
	} {
		if got := parseWalk(t, s.get(t, c.path)).places(t); got != c.want {
			t.Errorf("%s: got %s, want %s", c.path, got, c.want)
		}
	}
	w := parseWalk(t, s.get(t, "/buckets/people/keys/alice/people,sister,1"))
	if len(w.steps) != 1 || len(w.steps[0]) != 1 || w.steps[0][0].body != `{"name":"Carol"}` ||
		w.steps[0][0].get("Content-Type") != "application/json" {
		t.Fatalf("%s\n%s", w.places(t), w.r)
	}

	// A linkfun failure is a 500 naming the linkfun and carrying its message.
	r := s.get(t, "/buckets/people/keys/mallory/_,_,1")
	expect(t, r, 500, nil)
	expectHeader(t, r, "Content-Type", "text/plain")
	for _, want := range []string{"linkfun json_links:links_from_json", `people/mallory: "links"[0] needs a non-empty "bucket" and "key"`} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("500 body %q lacks %q", r.Body, want)
		}
	}
	// A walk that reaches mallory fails the same way.
	s.mustPut(t, "/buckets/people/keys/eve", `{"links":[{"bucket":"people","key":"mallory"}]}`, jsonCT...)
	expect(t, s.get(t, "/buckets/people/keys/eve/_,_,0/_,_,1"), 500, nil)
	parseWalk(t, s.get(t, "/buckets/people/keys/eve/_,_,1"))
}
