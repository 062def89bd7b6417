package main

// Item 7: secondary-index (2i) queries — exact and range on _bin and _int, $bucket, $key,
// return_terms, max_results with continuations, stream=true, term_regex,
// pagination_sort, the 400 messages, typed buckets, both dialects' index headers, and the
// entries' life through updates, deletes and siblings.

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/kvapi/wire"
)

// idxBody is a non-streamed 2i response body.
type idxBody struct {
	Keys         []string            `json:"keys"`
	Results      []map[string]string `json:"results"`
	Continuation string              `json:"continuation"`
}

// idxGet runs a query and checks the response is 200 application/json with exactly the
// members the reference writes.
func idxGet(t testing.TB, s *child, path string) idxBody {
	t.Helper()
	r := s.get(t, path)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s:\n%s", path, r)
	}
	expectHeader(t, r, "Content-Type", "application/json")
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatalf("GET %s: body %q: %v", path, r.Body, err)
	}
	for k := range raw {
		if k != "keys" && k != "results" && k != "continuation" {
			t.Fatalf("GET %s: unexpected member %q in %s", path, k, r.Body)
		}
	}
	if _, k := raw["keys"]; k == (raw["results"] != nil) {
		t.Fatalf("GET %s: want exactly one of keys and results: %s", path, r.Body)
	}
	var b idxBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return b
}

// idxKeys runs a query that returns keys and checks the keys and the absence of a
// continuation.
func idxKeys(t testing.TB, s *child, path string, want ...string) {
	t.Helper()
	b := idxGet(t, s, path)
	if b.Results != nil || b.Continuation != "" || !slices.Equal(b.Keys, want) || b.Keys == nil {
		t.Errorf("GET %s: keys %q, continuation %q; want keys %q", path, b.Keys, b.Continuation, want)
	}
}

// idxPairs flattens results into "term=key" strings.
func idxPairs(t testing.TB, b idxBody) []string {
	t.Helper()
	var out []string
	for _, m := range b.Results {
		if len(m) != 1 {
			t.Fatalf("result %v is not a one-member object", m)
		}
		for term, key := range m {
			out = append(out, term+"="+key)
		}
	}
	return out
}

func idxResults(t testing.TB, s *child, path string, want ...string) {
	t.Helper()
	b := idxGet(t, s, path)
	if got := idxPairs(t, b); b.Keys != nil || b.Continuation != "" || !slices.Equal(got, want) {
		t.Errorf("GET %s: results %q keys %q continuation %q; want results %q", path, got, b.Keys, b.Continuation, want)
	}
}

// idxWalk follows continuations with page size n and returns every page's items
// (keys, or term=key with return_terms), checking that only full pages carry one.
func idxWalk(t testing.TB, s *child, path string, n int) []string {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var all []string
	cont := ""
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("%s: pagination does not end", path)
		}
		p := path + sep + "max_results=" + itoa(n)
		if cont != "" {
			p += "&continuation=" + cont
		}
		b := idxGet(t, s, p)
		items := b.Keys
		if b.Results != nil {
			items = idxPairs(t, b)
		}
		if len(items) > n {
			t.Fatalf("%s: %d items on a page of %d", p, len(items), n)
		}
		if (b.Continuation != "") != (len(items) == n) {
			t.Fatalf("%s: %d items (page size %d) with continuation %q", p, len(items), n, b.Continuation)
		}
		all = append(all, items...)
		if b.Continuation == "" {
			return all
		}
		if seen[b.Continuation] {
			t.Fatalf("%s: continuation %q repeats", p, b.Continuation)
		}
		seen[b.Continuation] = true
		if again := idxGet(t, s, p); again.Continuation != b.Continuation {
			t.Fatalf("%s: continuation not stable: %q then %q", p, b.Continuation, again.Continuation)
		}
		cont = b.Continuation
	}
}

// idxStream reads a stream=true response and returns its parts' JSON objects, checking
// the framing: multipart/mixed;boundary=B without a space, chunked, every chunk one or
// more whole parts starting with the delimiter, the body ending with the close.
func idxStream(t testing.TB, s *child, path string) []map[string]json.RawMessage {
	t.Helper()
	r := s.stream(t, "GET", path, nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%s", path, r.StatusCode, r.Body)
	}
	ct := r.Header.Get("Content-Type")
	boundary, ok := strings.CutPrefix(ct, "multipart/mixed;boundary=")
	if !ok || boundary == "" || strings.ContainsAny(boundary, " ;") {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	if r.Chunks == nil || r.Header.Get("Content-Length") != "" {
		t.Fatalf("GET %s: not chunked (Content-Length %q)", path, r.Header.Get("Content-Length"))
	}
	delim := "\r\n--" + boundary
	for i, c := range r.Chunks {
		if !strings.HasPrefix(c, delim) {
			t.Fatalf("GET %s: chunk %d does not start with the delimiter: %q", path, i, c)
		}
	}
	if !strings.HasSuffix(r.Body, delim+"--\r\n") || strings.Count(r.Body, delim+"--") != 1 {
		t.Fatalf("GET %s: body does not end with one closing delimiter: %q", path, r.Body)
	}
	if last := r.Chunks[len(r.Chunks)-1]; !strings.HasSuffix(last, delim+"--\r\n") {
		t.Fatalf("GET %s: the closing delimiter is not in the last chunk", path)
	}
	parts, err := wire.ParseMultipart([]byte(r.Body), boundary)
	if err != nil {
		t.Fatalf("GET %s: %v\n%q", path, err, r.Body)
	}
	var out []map[string]json.RawMessage
	for _, p := range parts {
		if len(p.Headers) != 1 || p.Headers[0] != [2]string{"Content-Type", "application/json"} {
			t.Fatalf("GET %s: part headers %q", path, p.Headers)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(p.Body, &m); err != nil || len(m) != 1 {
			t.Fatalf("GET %s: part %q: %v", path, p.Body, err)
		}
		out = append(out, m)
	}
	return out
}

// streamItems concatenates the keys (or results) of streamed parts and returns the
// continuation, checking that it is the last part.
func streamItems(t testing.TB, parts []map[string]json.RawMessage) (items []string, cont string) {
	t.Helper()
	for i, p := range parts {
		switch {
		case p["keys"] != nil:
			var ks []string
			if err := json.Unmarshal(p["keys"], &ks); err != nil || len(ks) == 0 {
				t.Fatalf("keys part %s: %v (empty parts are not sent)", p["keys"], err)
			}
			items = append(items, ks...)
		case p["results"] != nil:
			var b idxBody
			if err := json.Unmarshal(p["results"], &b.Results); err != nil || len(b.Results) == 0 {
				t.Fatalf("results part %s: %v", p["results"], err)
			}
			items = append(items, idxPairs(t, b)...)
		case p["continuation"] != nil:
			if i != len(parts)-1 {
				t.Fatal("continuation part is not the last")
			}
			if err := json.Unmarshal(p["continuation"], &cont); err != nil || cont == "" {
				t.Fatalf("continuation part %s", p["continuation"])
			}
		default:
			t.Fatalf("unexpected part %v", p)
		}
	}
	return items, cont
}

func TestIndexQueries(t *testing.T) {
	t.Parallel()
	forEachDialect(t, nil, func(t *testing.T, s *child, d dialect) {
		o := d.other()
		put := func(path string, h ...string) { s.mustPut(t, path, "v", h...) }
		// Both dialects' index headers are accepted by either server.
		put("/buckets/people/keys/alice", d.hdr+"Index-Age_int", "30, -5", o.hdr+"Index-Email_bin", "alice@example.com",
			d.hdr+"Index-Tag_bin", "x y, blue")
		put("/buckets/people/keys/bob", o.hdr+"Index-age_int", "25, 123456789012345678901234567890", d.hdr+"Index-email_bin", "bob@example.com")
		put("/buckets/people/keys/carol", d.hdr+"Index-AGE_INT", "30", d.hdr+"Index-tag_bin", "blue")
		put("/buckets/people/keys/dave%2Fjr", d.hdr+"Index-age_int", "-123456789012345678901234567890")
		put("/buckets/other/keys/zed", d.hdr+"Index-age_int", "30", d.hdr+"Index-tag_bin", "blue")

		t.Run("exact", func(t *testing.T) {
			idxKeys(t, s, "/buckets/people/index/email_bin/alice%40example.com", "alice")
			idxKeys(t, s, "/buckets/people/index/Email_BIN/bob@example.com", "bob")
			idxKeys(t, s, "/buckets/people/index/tag_bin/x+y", "alice")
			idxKeys(t, s, "/buckets/people/index/tag_bin/x%20y", "alice")
			idxKeys(t, s, "/buckets/people/index/tag_bin/blue", "alice", "carol")
			idxKeys(t, s, "/buckets/people/index/age_int/30", "alice", "carol")
			idxKeys(t, s, "/buckets/people/index/age_int/%2B030", "alice", "carol")
			idxKeys(t, s, "/buckets/people/index/age_int/-5", "alice")
			idxKeys(t, s, "/buckets/people/index/age_int/123456789012345678901234567890", "bob")
			idxKeys(t, s, "/buckets/people/index/age_int/31")
			idxKeys(t, s, "/buckets/people/index/nothing_bin/x")
			idxKeys(t, s, "/buckets/nobody/index/age_int/30")
			// return_terms does not apply to exact queries.
			idxKeys(t, s, "/buckets/people/index/age_int/30?return_terms=true", "alice", "carol")
		})

		t.Run("range", func(t *testing.T) {
			// _int compares numerically (negative and big integers); one result per entry.
			idxKeys(t, s, "/buckets/people/index/age_int/-1000000000000000000000000000000/1000000000000000000000000000000",
				"dave/jr", "alice", "bob", "alice", "carol", "bob")
			idxKeys(t, s, "/buckets/people/index/age_int/-5/30", "alice", "bob", "alice", "carol")
			idxKeys(t, s, "/buckets/people/index/age_int/26/29")
			idxKeys(t, s, "/buckets/people/index/age_int/30/-5")
			idxResults(t, s, "/buckets/people/index/age_int/-10/100?return_terms=true", "-5=alice", "25=bob", "30=alice", "30=carol")
			idxResults(t, s, "/buckets/people/index/age_int/-10/100?return_terms=TRUE&pagination_sort=true", "-5=alice", "25=bob", "30=alice", "30=carol")
			idxKeys(t, s, "/buckets/people/index/age_int/-10/100?return_terms=false", "alice", "bob", "alice", "carol")
			// _bin compares bytewise, inclusive at both ends.
			idxKeys(t, s, "/buckets/people/index/email_bin/a/bob@example.com", "alice", "bob")
			idxResults(t, s, "/buckets/people/index/tag_bin/a/z?return_terms=true", "blue=alice", "blue=carol", "x y=alice")
			idxResults(t, s, "/buckets/people/index/tag_bin/blue/blue?return_terms=true", "blue=alice", "blue=carol")
		})

		t.Run("bucket and key", func(t *testing.T) {
			idxKeys(t, s, "/buckets/people/index/$bucket/_", "alice", "bob", "carol", "dave/jr")
			idxKeys(t, s, "/buckets/people/index/%24bucket", "alice", "bob", "carol", "dave/jr")
			idxKeys(t, s, "/buckets/people/index/$bucket/a/b/c?return_terms=true", "alice", "bob", "carol", "dave/jr")
			idxKeys(t, s, "/buckets/people/index/$key/bob", "bob")
			idxKeys(t, s, "/buckets/people/index/$key/dave%2Fjr", "dave/jr")
			idxKeys(t, s, "/buckets/people/index/$key/nobody")
			idxKeys(t, s, "/buckets/people/index/$key/b/d", "bob", "carol")
			idxKeys(t, s, "/buckets/people/index/$key/b/d?return_terms=true", "bob", "carol")
			idxKeys(t, s, "/buckets/people/index/$KEY/a/zzz", "alice", "bob", "carol", "dave/jr")
		})

		t.Run("term_regex", func(t *testing.T) {
			idxKeys(t, s, "/buckets/people/index/email_bin/a/z?term_regex=%5Eb", "bob")
			idxResults(t, s, "/buckets/people/index/tag_bin/a/z?term_regex=%5Cs&return_terms=true", "x y=alice")
			idxKeys(t, s, "/buckets/people/index/$key/a/z?term_regex=o", "bob", "carol")
			idxKeys(t, s, "/buckets/people/index/$bucket?term_regex=o", "alice", "bob", "carol", "dave/jr")
		})

		t.Run("head and negotiation", func(t *testing.T) {
			r := s.do(t, "HEAD", "/buckets/people/index/age_int/30", nil, "")
			expect(t, r, 200, ptr(""))
			expectHeader(t, r, "Content-Type", "application/json")
			expectHeader(t, r, "Content-Length", itoa(len(`{"keys":["alice","carol"]}`)))
			r = s.get(t, "/buckets/people/index/age_int/30", "Accept", "text/plain")
			expectPage(t, r, http.StatusNotAcceptable)
			r = s.do(t, "PUT", "/buckets/people/index/age_int/30", nil, "")
			expect(t, r, http.StatusMethodNotAllowed, nil)
			expectHeader(t, r, "Allow", "HEAD, GET")
			h := s.stream(t, "HEAD", "/buckets/people/index/age_int/30?stream=true", nil)
			if h.StatusCode != 200 || !strings.HasPrefix(h.Header.Get("Content-Type"), "multipart/mixed;boundary=") {
				t.Errorf("HEAD stream=true: %d %v", h.StatusCode, h.Header)
			}
		})

		t.Run("errors", func(t *testing.T) {
			for _, c := range []struct{ path, body string }{
				{"/buckets/people/index/foo/1", "Invalid query: {unknown_field_type,<<\"foo\">>}\n"},
				{"/buckets/people/index/age_int/abc", "Invalid query: {field_parsing_failed,{<<\"age_int\">>,<<\"abc\">>}}\n"},
				{"/buckets/people/index/age_int/1/2/3", "Invalid query: {too_many_arguments,[<<\"1\">>,<<\"2\">>,<<\"3\">>]}\n"},
				{"/buckets/people/index/age_int/1/2?continuation=nonsense!", "Invalid query: {invalid_continuation,<<\"nonsense!\">>}\n"},
				{"/buckets/people/index/age_int/1/2?return_terms=x", `Invalid "return_terms". "x" is not a boolean`},
				{"/buckets/people/index/age_int/1/2?max_results=x", `Invalid "max_results". "x" is not a positive integer`},
				{"/buckets/people/index/age_int/1/2?max_results=0", `Invalid "max_results". 0 is not a positive integer`},
				{"/buckets/people/index/age_int/1/2?pagination_sort=x", `Invalid "pagination_sort". "x" is not a boolean`},
				{"/buckets/people/index/age_int/1/2?term_regex=1", "Can not use term regular expressions on integer queries"},
				{"/buckets/people/index/tag_bin/a/b?term_regex=(", "Invalid term regular expression \"(\" : \"missing closing ): `(`\""},
				{"/buckets/people/index/age_int/1/2?timeout=x", "Bad timeout value \"x\". Must be a non-negative integer\n"},
				{"/buckets/people/index/age_int/1/2?timeout=-1", "Bad timeout value -1. Must be a non-negative integer\n"},
				{"/types/nosuchtype/buckets/people/index/foo/1", "Invalid query: {unknown_field_type,<<\"foo\">>}\n"},
			} {
				expectText(t, s.get(t, c.path), http.StatusBadRequest, c.body)
			}
			expectPage(t, s.get(t, "/types/nosuchtype/buckets/people/index/age_int/1"), http.StatusNotFound)
			expectPage(t, s.get(t, "/types/nosuchtype/buckets/people/index/age_int/1?stream=true"), http.StatusNotFound)
			// A query with a timeout that it meets answers normally; 0 means none.
			idxKeys(t, s, "/buckets/people/index/age_int/30?timeout=60000", "alice", "carol")
			idxKeys(t, s, "/buckets/people/index/age_int/30?timeout=0", "alice", "carol")
		})

		t.Run("pagination", func(t *testing.T) {
			for i := 0; i < 23; i++ {
				k := "p" + itoa(100+i)
				put("/buckets/paged/keys/"+k, d.hdr+"Index-n_int", itoa(i%5)+", "+itoa(i%7-3), d.hdr+"Index-s_bin", string(rune('a'+i%4)))
			}
			for _, q := range []string{
				"/buckets/paged/index/n_int/-3/4",
				"/buckets/paged/index/n_int/-3/4?return_terms=true",
				"/buckets/paged/index/n_int/2",
				"/buckets/paged/index/s_bin/b/c?return_terms=true",
				"/buckets/paged/index/$bucket",
				"/buckets/paged/index/$key/p105/p119",
			} {
				all := idxGet(t, s, q)
				want := all.Keys
				if all.Results != nil {
					want = idxPairs(t, all)
				}
				if len(want) == 0 {
					t.Fatalf("%s: no results to page through", q)
				}
				for _, n := range []int{1, 4, len(want), 1000} {
					if got := idxWalk(t, s, q, n); !slices.Equal(got, want) {
						t.Errorf("%s in pages of %d:\n got %q\nwant %q", q, n, got, want)
					}
				}
			}
			// pagination_sort alone changes nothing: results are always sorted.
			a := idxGet(t, s, "/buckets/paged/index/n_int/-3/4?pagination_sort=true")
			b := idxGet(t, s, "/buckets/paged/index/n_int/-3/4")
			if !slices.Equal(a.Keys, b.Keys) || a.Continuation != "" {
				t.Errorf("pagination_sort=true: %q, without: %q", a.Keys, b.Keys)
			}
			// A continuation of one query kind is refused by another.
			c := idxGet(t, s, "/buckets/paged/index/$bucket?max_results=1").Continuation
			expect(t, s.get(t, "/buckets/paged/index/n_int/-3/4?continuation="+c), http.StatusBadRequest, nil)
		})

		t.Run("stream", func(t *testing.T) {
			items, cont := streamItems(t, idxStream(t, s, "/buckets/people/index/age_int/-10/100?stream=true"))
			if want := []string{"alice", "bob", "alice", "carol"}; !slices.Equal(items, want) || cont != "" {
				t.Errorf("stream: %q %q, want %q", items, cont, want)
			}
			items, cont = streamItems(t, idxStream(t, s, "/buckets/people/index/age_int/-10/100?stream=true&return_terms=true"))
			if want := []string{"-5=alice", "25=bob", "30=alice", "30=carol"}; !slices.Equal(items, want) || cont != "" {
				t.Errorf("stream with terms: %q %q, want %q", items, cont, want)
			}
			// No results: just the closing delimiter.
			if parts := idxStream(t, s, "/buckets/people/index/age_int/1000/2000?stream=true"); len(parts) != 0 {
				t.Errorf("empty stream has parts %v", parts)
			}
			// A full page ends with a continuation part, and the next page goes on.
			items, cont = streamItems(t, idxStream(t, s, "/buckets/people/index/$bucket?stream=true&max_results=3"))
			if want := []string{"alice", "bob", "carol"}; !slices.Equal(items, want) || cont == "" {
				t.Fatalf("stream page: %q %q", items, cont)
			}
			items, cont = streamItems(t, idxStream(t, s, "/buckets/people/index/$bucket?stream=true&max_results=3&continuation="+cont))
			if want := []string{"dave/jr"}; !slices.Equal(items, want) || cont != "" {
				t.Errorf("stream next page: %q %q", items, cont)
			}
			// Many results come in several parts, each its own chunk.
			vals := make([]string, 2500)
			for i := range vals {
				vals[i] = itoa(i)
			}
			put("/buckets/many/keys/k", d.hdr+"Index-n_int", strings.Join(vals, ", "))
			parts := idxStream(t, s, "/buckets/many/index/n_int/0/100000?stream=true&return_terms=true")
			items, _ = streamItems(t, parts)
			if len(parts) < 3 || len(items) != 2500 || items[0] != "0=k" || items[2499] != "2499=k" {
				t.Errorf("large stream: %d parts, %d items", len(parts), len(items))
			}
			b := idxGet(t, s, "/buckets/many/index/n_int/0/100000")
			if len(b.Keys) != 2500 {
				t.Errorf("large body: %d keys", len(b.Keys))
			}
		})

		t.Run("typed", func(t *testing.T) {
			put("/types/"+e2eType+"/buckets/people/keys/typed", d.hdr+"Index-age_int", "30")
			idxKeys(t, s, "/types/"+e2eType+"/buckets/people/index/age_int/30", "typed")
			idxKeys(t, s, "/buckets/people/index/age_int/30", "alice", "carol")
			idxKeys(t, s, "/types/"+e2eType+"/buckets/people/index/$bucket", "typed")
			idxKeys(t, s, "/types/default/buckets/people/index/age_int/30", "alice", "carol")
		})

		t.Run("updates, deletes and siblings", func(t *testing.T) {
			put("/buckets/life/keys/k", d.hdr+"Index-c_bin", "red", d.hdr+"Index-n_int", "1")
			idxKeys(t, s, "/buckets/life/index/c_bin/red", "k")
			// An update that changes the entries.
			put("/buckets/life/keys/k", d.hdr+"Index-c_bin", "green")
			idxKeys(t, s, "/buckets/life/index/c_bin/red")
			idxKeys(t, s, "/buckets/life/index/n_int/1")
			idxKeys(t, s, "/buckets/life/index/c_bin/green", "k")
			// A delete removes them.
			expect(t, s.do(t, "DELETE", "/buckets/life/keys/k", nil, ""), http.StatusNoContent, nil)
			idxKeys(t, s, "/buckets/life/index/c_bin/green")
			idxKeys(t, s, "/buckets/life/index/c_bin/a/z")

			// Siblings: both siblings' entries are queryable; after resolving, only the
			// survivor's.
			s.setProps(t, "sib", `{"allow_mult":true}`)
			put("/buckets/sib/keys/k", d.hdr+"Index-c_bin", "red")
			put("/buckets/sib/keys/k", o.hdr+"Index-c_bin", "blue")
			idxResults(t, s, "/buckets/sib/index/c_bin/a/z?return_terms=true", "blue=k", "red=k")
			idxKeys(t, s, "/buckets/sib/index/c_bin/red", "k")
			r := s.get(t, "/buckets/sib/keys/k")
			expect(t, r, http.StatusMultipleChoices, nil)
			put("/buckets/sib/keys/k", d.hdr+"Vclock", r.Header.Get(d.hdr+"Vclock"), d.hdr+"Index-c_bin", "blue")
			idxResults(t, s, "/buckets/sib/index/c_bin/a/z?return_terms=true", "blue=k")
			idxKeys(t, s, "/buckets/sib/index/c_bin/red")
		})

		s.Stop()
		if out, err := exec.Command(cairnBin, "check", "--data-dir", s.DataDir).CombinedOutput(); err != nil {
			t.Fatalf("cairn check: %v\n%s", err, out)
		}
	})
}

// TestIndexJSONEncoding checks keys and terms that need escaping come back as the JSON
// encoding of their bytes.
func TestIndexJSONEncoding(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	keys := []string{"quote\"back\\slash", "tab\there", "<html>&", "é日本", "bad\xffutf8", "ctl\x01"}
	term := func(k string) string { return "term " + strings.ReplaceAll(k, "\x01", "") } // headers cannot carry it
	for _, k := range keys {
		s.mustPut(t, "/buckets/enc/keys/"+wire.QuotePlus(k), "v", "X-Store-Index-t_bin", term(k))
	}
	r := s.get(t, "/buckets/enc/index/t_bin/a/z?return_terms=true")
	expect(t, r, http.StatusOK, nil)
	var b idxBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("%v: %q", err, r.Body)
	}
	for _, k := range keys {
		enc, _ := json.Marshal(map[string]string{term(k): k})
		if !strings.Contains(string(r.Body), string(enc)) {
			t.Errorf("body %q lacks %s", r.Body, enc)
		}
	}
	if len(b.Results) != len(keys) {
		t.Errorf("%d results, want %d", len(b.Results), len(keys))
	}
}

// TestIndexTimeout runs queries that cannot finish within their timeout: 100 000 entries
// scanned with a regular expression that keeps none of them, in 1 ms.
func TestIndexTimeout(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--max-object-header-bytes", "2MiB") // 100 000 index entries on one object
	vals := make([]string, 100_000)
	for i := range vals {
		vals[i] = "v" + itoa(100_000+i)
	}
	s.mustPut(t, "/buckets/slow/keys/k", "v", "X-Store-Index-t_bin", strings.Join(vals, ", "))
	const q = "/buckets/slow/index/t_bin/a/z?term_regex=nomatch"
	idxKeys(t, s, q) // without a timeout it completes, empty
	// A body over the server's 1 MiB buffer is produced twice; both passes agree.
	b := idxGet(t, s, "/buckets/slow/index/t_bin/a/z?return_terms=true&timeout=60000")
	if len(b.Results) != len(vals) || b.Results[0]["v100000"] != "k" || b.Results[len(vals)-1]["v199999"] != "k" {
		t.Errorf("large body: %d results", len(b.Results))
	}
	expectText(t, s.get(t, q+"&timeout=1"), http.StatusServiceUnavailable, "request timed out\n")
	parts := idxStream(t, s, q+"&timeout=1&stream=true")
	if len(parts) != 1 || string(parts[0]["error"]) != `"timeout"` {
		t.Errorf("streamed timeout: %v", parts)
	}
	s.Stop()
	if out, err := exec.Command(cairnBin, "check", "--data-dir", s.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("cairn check: %v\n%s", err, out)
	}
}
