package wire

import (
	"bytes"
	"github.com/cairnkv/cairn/core"
	"slices"
	"strings"
	"testing"
)

func FuzzParseLinks(f *testing.F) {
	f.Add(`</riak/b/k2>; riaktag="tag1", </riak/b>; rel="up"`, uint8(0), "default", "b")
	f.Add(`</store/b/k>;storetag="x",</store/b>; rel="up"`, uint8(0), "default", "b")
	f.Add(`</buckets/b/keys/k2>; riaktag="tag1", </buckets/b>; rel="up"`, uint8(1), "default", "b")
	f.Add(`</types/T/buckets/b/keys/k2>; riaktag="t%2C1", </types/T/buckets/b>; rel="up"`, uint8(2), "T", "b")
	f.Add(`junk</riak/x</riak/b/k>; riaktag="t">; riaktag="u"`, uint8(0), "", "b")
	f.Add(`</riak/my+b/a%40b>; riaktag="_"`, uint8(0), "", "my b")
	f.Fuzz(func(t *testing.T, header string, apiSel uint8, typ, bucket string) {
		api := API(apiSel%3 + 1)
		links, err := ParseLinks(header, api, typ, bucket)
		ref, ok := refParseLinks(header, api, typ, bucket)
		if ok != (err == nil) || !slices.Equal(links, ref) {
			t.Fatalf("scanner %q, %v; regexp reference %q, %v", links, err, ref, ok)
		}
		if err != nil || bucket == "" || api == APITyped && typ == "" {
			return
		}
		for _, d := range []Dialect{DialectStore, DialectRiak} {
			for _, s := range []string{FormatLinks(links, api, d, typ, bucket), FormatPartLinks(links, api, d, typ, bucket)} {
				back, err := ParseLinks(s, api, typ, bucket)
				if err != nil || !slices.Equal(back, links) {
					t.Fatalf("%q parsed as %q, formatted as %q, parsed back as %q, %v", header, links, s, back, err)
				}
			}
		}
	})
}

func FuzzParseIndexHeaders(f *testing.F) {
	f.Add("X-Riak-Index-Email_bin", "a, b,c", "x-store-index-age_int", "+007, -3")
	f.Add("X-Riak-Index-Foo", "1", "X-Riak-Index-A_int", "abc")
	f.Add("X-Riak-Index-F_bin", ",\t, ", "Content-Type", "text/plain")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		var split []string
		for more, rest := true, v1; more; {
			var s string
			s, rest, more = cutIndexValue(rest)
			split = append(split, s)
		}
		if want := refSplitIndex(v1); !slices.Equal(split, want) {
			t.Fatalf("split %q = %q, regexp gives %q", v1, split, want)
		}
		headers := map[string][]string{n1: {v1}}
		headers[n2] = append(headers[n2], v2, v1)
		entries, err := ParseIndexHeaders(headers, DialectRiak)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if !slices.IsSortedFunc(entries, core.CompareIndexEntries) {
			t.Fatalf("not sorted: %q", entries)
		}
		for _, d := range []Dialect{DialectStore, DialectRiak} {
			again := map[string][]string{}
			for _, kv := range FormatIndexHeaders(entries, d) {
				again[kv[0]] = append(again[kv[0]], kv[1])
			}
			back, err := ParseIndexHeaders(again, d)
			if err != nil || !slices.Equal(back, entries) {
				t.Fatalf("%q re-parsed as %q, %v", entries, back, err)
			}
		}
	})
}

func FuzzNegotiate(f *testing.F) {
	f.Add("multipart/mixed,application/json;q=0.7, */*;q=0.5", "text/plain", "multipart/mixed")
	f.Add("*/*;q=0.5", "application/json", "text/plain")
	f.Add("text/*;q=0, text/plain;q=0.001", "text/html", "text/plain")
	f.Add("", "a/b", "c/d")
	f.Fuzz(func(t *testing.T, accept, o1, o2 string) {
		offers := []string{o1, o2}
		got, ok := Negotiate(accept, offers)
		if ok && !slices.Contains(offers, got) {
			t.Fatalf("Negotiate(%q, %q) = %q, not an offer", accept, offers, got)
		}
		if !ok && got != "" {
			t.Fatalf("no match but %q returned", got)
		}
		if strings.TrimSpace(accept) == "" && (!ok || got != o1) {
			t.Fatalf("empty Accept must give the first offer, got %q, %v", got, ok)
		}
		if got2, ok2 := Negotiate(accept, offers); got2 != got || ok2 != ok {
			t.Fatal("not deterministic")
		}
	})
}

func FuzzParseMultipart(f *testing.F) {
	f.Add([]byte("\r\n--B\r\nContent-Type: text/plain\r\nEtag: x\r\n\r\nhello\r\n--B\r\n\r\n\r\n--B--\r\n"), "B")
	f.Add([]byte("pre\r\n--B \t\r\nA:1\r\n\r\n\r\n--Bx\r\n--B--"), "B")
	f.Add([]byte("--xyz\r\n\r\n--xyz--"), "xyz")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		parts, err := ParseMultipart(body, boundary)
		if err != nil || boundary == "" || len(boundary) > 70 || strings.ContainsAny(boundary, "\r\n") {
			return
		}
		var buf bytes.Buffer
		WriteMultipart(&buf, boundary, parts)
		back, err := ParseMultipart(buf.Bytes(), boundary)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", buf.Bytes(), err)
		}
		if len(back) != len(parts) {
			t.Fatalf("%d parts became %d", len(parts), len(back))
		}
		for i := range parts {
			if !slices.Equal(parts[i].Headers, back[i].Headers) || !bytes.Equal(parts[i].Body, back[i].Body) {
				t.Fatalf("part %d: %q %q became %q %q", i, parts[i].Headers, parts[i].Body, back[i].Headers, back[i].Body)
			}
		}
	})
}
