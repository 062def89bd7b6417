package main

// End-to-end tests of the object-storage (S3) interface: a real client library
// (minio-go) in the four signature × addressing combinations, raw requests for what a
// client hides (paging, conditional requests, dialects, Expect: 100-continue,
// Content-MD5, framing, absolute-form targets), the user administration API, and the
// separation of the S3 and KV namespaces.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// s3TestObject is an object the minio-go test stores and reads back.
type s3TestObject struct {
	key  string
	data []byte
	ct   string            // content type given ("" lets minio-go choose)
	meta map[string]string // user metadata given
}

// minioObjects returns the objects of the minio-go test: small, empty, 3 MiB and some
// (several chunks), user metadata, and keys with characters that need encoding.
func minioObjects(t testing.TB) []s3TestObject {
	big := make([]byte, 3<<20+4321)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	objs := []s3TestObject{
		{key: "small.txt", data: []byte("hello, object world\n"), ct: "text/plain", meta: map[string]string{"Color": "blue", "Owner-Name": "Ann Example"}},
		{key: "empty", data: nil, ct: "application/x-empty"},
		{key: "big/three-mib.bin", data: big, ct: "application/x-test", meta: map[string]string{"Size-Class": "big"}},
	}
	for _, k := range []string{"with space.txt", "plus+sign", "per%cent", "ünïcödé/ключ.txt", "a/b/c/d.txt", "a/b/e.txt",
		"a/f.txt", "odd?&=#;chars", "tilde~star*paren(1)", "dir//double"} {
		objs = append(objs, s3TestObject{key: k, data: []byte("data of " + k)})
	}
	return objs
}

// s3ExpectedListing is what a listing of keys with prefix and delimiter holds: keys and
// common prefixes, sorted.
func s3ExpectedListing(keys []string, prefix, delim string) []string {
	set := map[string]bool{}
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if delim != "" {
			if i := strings.Index(rest, delim); i >= 0 {
				set[prefix+rest[:i+len(delim)]] = true
				continue
			}
		}
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func minioList(t testing.TB, c *minio.Client, bucket string, opts minio.ListObjectsOptions) []string {
	t.Helper()
	var out []string
	for o := range c.ListObjects(context.Background(), bucket, opts) {
		if o.Err != nil {
			t.Fatalf("ListObjects %s %+v: %v", bucket, opts, o.Err)
		}
		out = append(out, o.Key)
	}
	sort.Strings(out)
	return out
}

func TestS3MinioClient(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "minio@example.com", "Minio User")
	objs := minioObjects(t)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.key)
	}
	for _, combo := range minioCombos {
		t.Run(combo.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newMinio(t, s, u.cred(), combo)
			b := "mc-" + combo.name

			// Buckets.
			if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
				t.Fatalf("MakeBucket: %v", err)
			}
			if err := c.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
				t.Errorf("MakeBucket again by the owner: %v (want success: us-east-1 answers 200)", err)
			}
			if ok, err := c.BucketExists(ctx, b); err != nil || !ok {
				t.Errorf("BucketExists(%s) = %v, %v; want true", b, ok, err)
			}
			if ok, err := c.BucketExists(ctx, b+"-absent"); err != nil || ok {
				t.Errorf("BucketExists(absent) = %v, %v; want false, nil", ok, err)
			}
			bs, err := c.ListBuckets(ctx)
			if err != nil {
				t.Fatalf("ListBuckets: %v", err)
			}
			found := false
			for _, bi := range bs {
				if bi.Name == b {
					found = true
					if bi.CreationDate.IsZero() || time.Since(bi.CreationDate) > time.Hour {
						t.Errorf("bucket %s: creation date %v", b, bi.CreationDate)
					}
				}
			}
			if !found {
				t.Errorf("ListBuckets %v lacks %s", bs, b)
			}

			// Objects: store, read back, stat.
			for _, o := range objs {
				info, err := c.PutObject(ctx, b, o.key, bytes.NewReader(o.data), int64(len(o.data)),
					minio.PutObjectOptions{ContentType: o.ct, UserMetadata: o.meta})
				if err != nil {
					t.Fatalf("PutObject %q: %v", o.key, err)
				}
				if info.ETag != s3MD5Hex(o.data) {
					t.Errorf("PutObject %q: ETag %q, want %q", o.key, info.ETag, s3MD5Hex(o.data))
				}
			}
			for _, o := range objs {
				r, err := c.GetObject(ctx, b, o.key, minio.GetObjectOptions{})
				if err != nil {
					t.Fatalf("GetObject %q: %v", o.key, err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil {
					t.Fatalf("GetObject %q: reading: %v", o.key, err)
				}
				if !bytes.Equal(got, o.data) {
					t.Errorf("GetObject %q: %d bytes differ from the %d stored", o.key, len(got), len(o.data))
				}
				st, err := c.StatObject(ctx, b, o.key, minio.StatObjectOptions{})
				if err != nil {
					t.Fatalf("StatObject %q: %v", o.key, err)
				}
				wantCT := o.ct
				if wantCT == "" {
					wantCT = "application/octet-stream" // minio-go's default
				}
				if st.Size != int64(len(o.data)) || st.ETag != s3MD5Hex(o.data) || st.ContentType != wantCT {
					t.Errorf("StatObject %q: size %d etag %q type %q; want %d %q %q", o.key, st.Size, st.ETag, st.ContentType,
						len(o.data), s3MD5Hex(o.data), wantCT)
				}
				for k, v := range o.meta {
					if st.UserMetadata[k] != v {
						t.Errorf("StatObject %q: metadata %s = %q, want %q (all: %v)", o.key, k, st.UserMetadata[k], v, st.UserMetadata)
					}
				}
				if len(st.UserMetadata) != len(o.meta) {
					t.Errorf("StatObject %q: metadata %v, want %v", o.key, st.UserMetadata, o.meta)
				}
				// aws-chunked (minio-go's V4 uploads) is a transfer detail, not stored.
				if ce := st.Metadata.Get("Content-Encoding"); ce != "" {
					t.Errorf("StatObject %q: Content-Encoding %q stored", o.key, ce)
				}
			}

			// Ranges, including across the chunk boundary of the big object.
			big := objs[2]
			for _, rg := range []struct {
				key        string
				start, end int64
				want       []byte
			}{
				{"small.txt", 7, 12, objs[0].data[7:13]},
				{"small.txt", 0, -4, objs[0].data[len(objs[0].data)-4:]},
				{"small.txt", 15, 0, objs[0].data[15:]},
				{big.key, 1<<20 - 3, 1<<20 + 3, big.data[1<<20-3 : 1<<20+4]},
				{big.key, 2<<20 - 1, 3 << 20, big.data[2<<20-1 : 3<<20+1]},
				{big.key, 0, -100, big.data[len(big.data)-100:]},
			} {
				var opts minio.GetObjectOptions
				if err := opts.SetRange(rg.start, rg.end); err != nil {
					t.Fatal(err)
				}
				r, err := c.GetObject(ctx, b, rg.key, opts)
				if err != nil {
					t.Fatalf("GetObject %q range %d,%d: %v", rg.key, rg.start, rg.end, err)
				}
				got, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(got, rg.want) {
					t.Errorf("GetObject %q range %d,%d: %d bytes (%v), want %d", rg.key, rg.start, rg.end, len(got), err, len(rg.want))
				}
			}

			// Listings: V1 and V2, recursive or delimited, with a prefix, paged.
			for _, v1 := range []bool{true, false} {
				for _, lc := range []struct {
					prefix    string
					recursive bool
					maxKeys   int
				}{
					{"", true, 0}, {"", false, 0}, {"a/", false, 0}, {"a/", true, 0}, {"a/b/", false, 0},
					{"ü", false, 0}, {"", true, 2}, {"", false, 3}, {"nothing-here/", true, 0},
				} {
					got := minioList(t, c, b, minio.ListObjectsOptions{UseV1: v1, Prefix: lc.prefix, Recursive: lc.recursive, MaxKeys: lc.maxKeys})
					delim := "/"
					if lc.recursive {
						delim = ""
					}
					if want := s3ExpectedListing(keys, lc.prefix, delim); !s3SameStrings(got, want) {
						t.Errorf("ListObjects v1=%v %+v:\n got %q\nwant %q", v1, lc, got, want)
					}
				}
			}

			// Presigned GET (V2 or V4 as the credentials are).
			pu, err := c.PresignedGetObject(ctx, b, "with space.txt", 10*time.Minute, nil)
			if err != nil {
				t.Fatalf("PresignedGetObject: %v", err)
			}
			hc := &http.Client{Transport: s3Transport(s), Timeout: 30 * time.Second}
			pr, err := hc.Get(pu.String())
			if err != nil {
				t.Fatalf("GET presigned %s: %v", pu, err)
			}
			pb, _ := io.ReadAll(pr.Body)
			pr.Body.Close()
			if pr.StatusCode != http.StatusOK || string(pb) != "data of with space.txt" {
				t.Errorf("GET presigned %s: %d %q", pu, pr.StatusCode, pb)
			}

			// Deletion: a bucket with objects cannot go; objects can, then the bucket.
			err = c.RemoveBucket(ctx, b)
			if er := minio.ToErrorResponse(err); er.Code != "BucketNotEmpty" || er.StatusCode != http.StatusConflict {
				t.Errorf("RemoveBucket of a full bucket: %v (code %q, status %d), want 409 BucketNotEmpty", err, er.Code, er.StatusCode)
			}
			for _, o := range objs {
				if err := c.RemoveObject(ctx, b, o.key, minio.RemoveObjectOptions{}); err != nil {
					t.Errorf("RemoveObject %q: %v", o.key, err)
				}
			}
			if err := c.RemoveObject(ctx, b, "never-was", minio.RemoveObjectOptions{}); err != nil {
				t.Errorf("RemoveObject of an absent key: %v (want success)", err)
			}
			_, err = c.StatObject(ctx, b, "small.txt", minio.StatObjectOptions{})
			if minioCode(err) != "NoSuchKey" {
				t.Errorf("StatObject after RemoveObject: %v, want NoSuchKey", err)
			}
			if got := minioList(t, c, b, minio.ListObjectsOptions{Recursive: true}); len(got) != 0 {
				t.Errorf("listing after removing every object: %q", got)
			}
			if err := c.RemoveBucket(ctx, b); err != nil {
				t.Fatalf("RemoveBucket of an empty bucket: %v", err)
			}
			if ok, err := c.BucketExists(ctx, b); err != nil || ok {
				t.Errorf("BucketExists after RemoveBucket = %v, %v", ok, err)
			}
		})
	}
}

// TestS3ListPaging pages through listings with raw requests: version 1 with marker and
// NextMarker, version 2 with continuation tokens and start-after, delimiters whose
// common prefixes count towards max-keys, max-keys=0, and encoding-type=url.
func TestS3ListPaging(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "pager@example.com", "Pager")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "pages")
	var keys []string
	for i := range 23 {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	for i := range 5 {
		for j := range 3 {
			keys = append(keys, fmt.Sprintf("p/%d/x%d", i, j))
		}
	}
	keys = append(keys, "q+1/a", "q 2/b", "q%3/c", "r/ü")
	for _, k := range keys {
		c.put(t, "pages", k, k)
	}
	sort.Strings(keys)

	// pageV1 lists everything with prefix and delimiter, max keys per page, following
	// NextMarker (or the last key when the server gives none).
	pageV1 := func(t *testing.T, prefix, delim string, max int, enc bool) (entries []string, pages int) {
		marker := ""
		for {
			q := url.Values{"max-keys": {strconv.Itoa(max)}}
			if prefix != "" {
				q.Set("prefix", prefix)
			}
			if delim != "" {
				q.Set("delimiter", delim)
			}
			if marker != "" {
				q.Set("marker", marker)
			}
			if enc {
				q.Set("encoding-type", "url")
			}
			l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", q.Encode(), nil, ""))
			pages++
			dec := func(s string) string {
				if !enc {
					return s
				}
				d, err := url.QueryUnescape(s)
				if err != nil {
					t.Fatalf("encoding-type=url: %q does not decode: %v", s, err)
				}
				return d
			}
			if l.MaxKeys != max || l.Name != "pages" || l.Prefix != prefix || dec(l.Marker) != marker || dec(l.Delimiter) != delim {
				t.Errorf("page %d echoes Name %q Prefix %q Marker %q MaxKeys %d Delimiter %q", pages, l.Name, l.Prefix, l.Marker, l.MaxKeys, l.Delimiter)
			}
			if enc && l.EncodingType != "url" {
				t.Errorf("encoding-type=url not echoed: %q", l.EncodingType)
			}
			n := len(l.Contents) + len(l.CommonPrefixes)
			if n > max {
				t.Errorf("page %d has %d entries, max-keys %d", pages, n, max)
			}
			last := ""
			for _, k := range l.keys() {
				entries = append(entries, dec(k))
				last = s3MaxString(last, dec(k))
			}
			for _, p := range l.prefixes() {
				entries = append(entries, dec(p))
				last = s3MaxString(last, dec(p))
			}
			if !l.IsTruncated {
				if l.NextMarker != "" {
					t.Errorf("last page with NextMarker %q", l.NextMarker)
				}
				break
			}
			if n == 0 {
				t.Fatalf("truncated page %d without entries", pages)
			}
			if delim != "" && l.NextMarker == "" {
				t.Errorf("truncated delimited page %d without NextMarker", pages)
			}
			marker = last
			if l.NextMarker != "" {
				marker = dec(l.NextMarker)
				if marker != last {
					t.Errorf("NextMarker %q, want the page's last entry %q", marker, last)
				}
			}
			if pages > 100 {
				t.Fatal("listing does not end")
			}
		}
		sort.Strings(entries)
		return entries, pages
	}
	pageV2 := func(t *testing.T, prefix, delim, startAfter string, max int) (entries []string, pages int) {
		token := ""
		for {
			q := url.Values{"list-type": {"2"}, "max-keys": {strconv.Itoa(max)}, "encoding-type": {"url"}}
			if prefix != "" {
				q.Set("prefix", prefix)
			}
			if delim != "" {
				q.Set("delimiter", delim)
			}
			if token != "" {
				q.Set("continuation-token", token)
			}
			if startAfter != "" {
				q.Set("start-after", startAfter)
			}
			l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", q.Encode(), nil, ""))
			pages++
			n := len(l.Contents) + len(l.CommonPrefixes)
			if l.KeyCount != n {
				t.Errorf("KeyCount %d for %d entries", l.KeyCount, n)
			}
			if l.ContinuationToken != token {
				t.Errorf("ContinuationToken %q echoed, sent %q", l.ContinuationToken, token)
			}
			for _, k := range append(l.keys(), l.prefixes()...) {
				d, err := url.QueryUnescape(k)
				if err != nil {
					t.Fatalf("%q: %v", k, err)
				}
				entries = append(entries, d)
			}
			if !l.IsTruncated {
				break
			}
			if l.NextContinuationToken == "" {
				t.Fatalf("truncated V2 page without NextContinuationToken:\n%s", l.Name)
			}
			token = l.NextContinuationToken
			if pages > 100 {
				t.Fatal("listing does not end")
			}
		}
		sort.Strings(entries)
		return entries, pages
	}
	for _, tc := range []struct {
		prefix, delim string
		max           int
	}{
		{"", "", 7}, {"", "", 1000}, {"", "/", 4}, {"p/", "/", 2}, {"p/", "", 5}, {"k1", "", 3}, {"q", "/", 1}, {"", "/", 1},
		{"zzz", "", 5}, {"", "x", 3}, {"p/", "/x", 2}, {"k", "1", 4},
	} {
		name := fmt.Sprintf("prefix=%q,delim=%q,max=%d", tc.prefix, tc.delim, tc.max)
		want := s3ExpectedListing(keys, tc.prefix, tc.delim)
		t.Run("v1/"+name, func(t *testing.T) {
			for _, enc := range []bool{false, true} {
				got, pages := pageV1(t, tc.prefix, tc.delim, tc.max, enc)
				if !s3SameStrings(got, want) {
					t.Errorf("enc=%v: got %q\nwant %q", enc, got, want)
				}
				if wantPages := max(1, (len(want)+tc.max-1)/tc.max); pages != wantPages {
					t.Errorf("enc=%v: %d pages, want %d", enc, pages, wantPages)
				}
			}
		})
		t.Run("v2/"+name, func(t *testing.T) {
			got, _ := pageV2(t, tc.prefix, tc.delim, "", tc.max)
			if !s3SameStrings(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
	t.Run("v2/start-after", func(t *testing.T) {
		got, _ := pageV2(t, "", "", "k20", 4)
		var want []string
		for _, k := range keys {
			if k > "k20" {
				want = append(want, k)
			}
		}
		if !s3SameStrings(got, want) {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
	t.Run("max-keys=0", func(t *testing.T) {
		for _, q := range []string{"max-keys=0", "list-type=2&max-keys=0"} {
			l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", q, nil, ""))
			if l.IsTruncated || len(l.Contents) != 0 || len(l.CommonPrefixes) != 0 || l.MaxKeys != 0 {
				t.Errorf("%s: truncated %v, %d contents, %d prefixes, MaxKeys %d", q, l.IsTruncated, len(l.Contents), len(l.CommonPrefixes), l.MaxKeys)
			}
		}
	})
	t.Run("max-keys capped", func(t *testing.T) {
		l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", "max-keys=5000", nil, ""))
		if l.MaxKeys != 1000 || len(l.Contents) != len(keys) {
			t.Errorf("max-keys=5000: MaxKeys %d, %d contents", l.MaxKeys, len(l.Contents))
		}
	})
	t.Run("encoded keys", func(t *testing.T) {
		l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", "prefix=q&encoding-type=url", nil, ""))
		want := []string{"q%202/b", "q%253/c", "q%2B1/a"}
		if got := l.keys(); !s3SameStrings(got, want) {
			t.Errorf("encoding-type=url keys %q, want %q", got, want)
		}
		l = s3ParseList(t, c.do(t, http.MethodGet, "pages", "", "prefix=q", nil, ""))
		if got := l.keys(); !s3SameStrings(got, []string{"q 2/b", "q%3/c", "q+1/a"}) {
			t.Errorf("plain keys %q", got)
		}
	})
	t.Run("entries", func(t *testing.T) {
		l := s3ParseList(t, c.do(t, http.MethodGet, "pages", "", "prefix=k00", nil, ""))
		if len(l.Contents) != 1 || l.Contents[0].ETag != `"`+s3MD5Hex([]byte("k00"))+`"` || l.Contents[0].Size != 3 {
			t.Errorf("k00 entry: %+v", l.Contents)
		}
		raw := c.must(t, http.StatusOK, http.MethodGet, "pages", "", "prefix=k00", nil, "").Body
		if !bytes.Contains(raw, []byte("<Owner><ID>"+u.ID+"</ID><DisplayName>"+u.DisplayName+"</DisplayName></Owner>")) {
			t.Errorf("V1 entries lack their Owner")
		}
	})
}

func s3MaxString(a, b string) string {
	if a > b {
		return a
	}
	return b
}

// TestS3KeyNames stores and reads keys that need encoding with raw requests in every
// signature and addressing combination: the server must decode the path the same way
// each signer encoded it.
func TestS3KeyNames(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "keys@example.com", "Keys")
	owner := s3c{s: s, cred: u.cred(), sign: s3V2}
	owner.mkBucket(t, "names")
	keyNames := []string{"with space", "plus+sign", "per%cent", "per%25cent-literal", "ünïcödé", "ключ/значение", "a/b/c",
		"trailing/", "q?mark", "amp&eq=", "hash#frag", "semi;colon", "tilde~", "star*", "quote'\"", "emoji-😀", "back\\slash",
		"brackets[]{}", "lt<gt>", "caret^pipe|", "comma,", "at@dollar$", "colon:", "dot.", "..", "./x", "x/../y"}
	var i int
	for _, sign := range []s3SigVer{s3V2, s3V4} {
		for _, host := range []bool{false, true} {
			c := s3c{s: s, cred: u.cred(), sign: sign, host: host}
			name := sign.String() + map[bool]string{false: "-path", true: "-host"}[host]
			t.Run(name, func(t *testing.T) {
				for _, k := range keyNames {
					i++
					key := name + "/" + k
					body := fmt.Sprintf("body %d of %q", i, k)
					c.put(t, "names", key, body, "Content-Type", "text/plain")
					r := c.must(t, http.StatusOK, http.MethodGet, "names", key, "", nil, "")
					if string(r.Body) != body {
						t.Errorf("GET %q: %q, want %q", key, r.Body, body)
					}
					c.must(t, http.StatusOK, http.MethodHead, "names", key, "", nil, "")
					l := s3ParseList(t, c.do(t, http.MethodGet, "names", "", "prefix="+url.QueryEscape(key), nil, ""))
					if got := l.keys(); len(got) == 0 || got[0] != key {
						t.Errorf("listing with prefix %q: %q", key, got)
					}
				}
				for _, k := range keyNames {
					c.must(t, http.StatusNoContent, http.MethodDelete, "names", name+"/"+k, "", nil, "")
					expectS3Error(t, c.do(t, http.MethodGet, "names", name+"/"+k, "", nil, ""), http.StatusNotFound, "NoSuchKey")
				}
			})
		}
	}
	// Keys that start with a slash, in both styles.
	for _, host := range []bool{false, true} {
		c := owner.withHost(host)
		c.put(t, "names", "/leading", fmt.Sprint("leading ", host))
		if r := c.must(t, http.StatusOK, http.MethodGet, "names", "/leading", "", nil, ""); string(r.Body) != fmt.Sprint("leading ", host) {
			t.Errorf("GET /leading (host=%v): %q", host, r.Body)
		}
		l := s3ParseList(t, c.do(t, http.MethodGet, "names", "", "prefix=%2F", nil, ""))
		if got := l.keys(); !s3SameStrings(got, []string{"/leading"}) {
			t.Errorf("keys under /: %q", got)
		}
	}
	// A key stored under one encoding is the same key under another: %41 is A.
	owner.put(t, "names", "Aname", "A")
	r := s3Do(t, s, s3Req{method: http.MethodGet, bucket: "names", rawPath: "/names/%41name", sign: s3V2, cred: u.cred()})
	if r.StatusCode != http.StatusOK || string(r.Body) != "A" {
		t.Errorf("GET /names/%%41name: want the object Aname, got\n%s", r)
	}
}

// TestS3Ranges checks Range requests with raw requests: single ranges answer 206 with
// Content-Range, several ranges or a malformed header the whole object.
func TestS3Ranges(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "ranges@example.com", "Ranges")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "rng")
	data := "0123456789abcdefghij"
	c.put(t, "rng", "obj", data)
	for _, tc := range []struct {
		rng, body, contentRange string
		status                  int
	}{
		{"bytes=0-0", "0", "bytes 0-0/20", 206},
		{"bytes=5-9", "56789", "bytes 5-9/20", 206},
		{"bytes=15-", "fghij", "bytes 15-19/20", 206},
		{"bytes=-3", "hij", "bytes 17-19/20", 206},
		{"bytes=-50", data, "bytes 0-19/20", 206},
		{"bytes=10-100", "abcdefghij", "bytes 10-19/20", 206},
		{"bytes=0-1,5-6", data, "", 200},
		{"bytes=abc", data, "", 200},
		{"items=0-5", data, "", 200},
		{"bytes=9-3", data, "", 200},
	} {
		r := c.do(t, http.MethodGet, "rng", "obj", "", hdr{"Range", tc.rng}, "")
		if r.StatusCode != tc.status || string(r.Body) != tc.body || r.Header.Get("Content-Range") != tc.contentRange {
			t.Errorf("Range %s: want %d %q Content-Range %q, got\n%s", tc.rng, tc.status, tc.body, tc.contentRange, r)
		}
		if r.Header.Get("Content-Length") != strconv.Itoa(len(tc.body)) {
			t.Errorf("Range %s: Content-Length %q", tc.rng, r.Header.Get("Content-Length"))
		}
		if r.Header.Get("Accept-Ranges") != "bytes" || r.Header.Get("ETag") != `"`+s3MD5Hex([]byte(data))+`"` {
			t.Errorf("Range %s: Accept-Ranges %q ETag %q", tc.rng, r.Header.Get("Accept-Ranges"), r.Header.Get("ETag"))
		}
	}
	r := c.do(t, http.MethodHead, "rng", "obj", "", hdr{"Range", "bytes=2-4"}, "")
	if r.StatusCode != 206 || r.Header.Get("Content-Length") != "3" || r.Header.Get("Content-Range") != "bytes 2-4/20" {
		t.Errorf("HEAD with Range: %s", r)
	}
}

// TestS3ConditionalGet checks If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since on GET and HEAD.
func TestS3ConditionalGet(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "cond@example.com", "Cond")
	c := s3c{s: s, cred: u.cred(), sign: s3V4, host: true}
	c.mkBucket(t, "cond")
	etag := c.put(t, "cond", "obj", "conditional body").Header.Get("ETag")
	if etag != `"`+s3MD5Hex([]byte("conditional body"))+`"` {
		t.Fatalf("ETag %q", etag)
	}
	head := c.must(t, http.StatusOK, http.MethodHead, "cond", "obj", "", nil, "")
	lm, err := http.ParseTime(head.Header.Get("Last-Modified"))
	if err != nil {
		t.Fatalf("Last-Modified %q: %v", head.Header.Get("Last-Modified"), err)
	}
	past := lm.Add(-time.Hour).Format(http.TimeFormat)
	future := lm.Add(time.Hour).Format(http.TimeFormat)
	same := lm.Format(http.TimeFormat)
	for _, tc := range []struct {
		name   string
		h      hdr
		status int
	}{
		{"If-Match same", hdr{"If-Match", etag}, 200},
		{"If-Match unquoted", hdr{"If-Match", strings.Trim(etag, `"`)}, 200},
		{"If-Match list", hdr{"If-Match", `"nope", ` + etag}, 200},
		{"If-Match *", hdr{"If-Match", "*"}, 200},
		{"If-Match other", hdr{"If-Match", `"0123456789abcdef0123456789abcdef"`}, 412},
		{"If-None-Match same", hdr{"If-None-Match", etag}, 304},
		{"If-None-Match *", hdr{"If-None-Match", "*"}, 304},
		{"If-None-Match other", hdr{"If-None-Match", `"0123456789abcdef0123456789abcdef"`}, 200},
		{"If-Modified-Since past", hdr{"If-Modified-Since", past}, 200},
		{"If-Modified-Since same", hdr{"If-Modified-Since", same}, 304},
		{"If-Modified-Since future", hdr{"If-Modified-Since", future}, 304},
		{"If-Unmodified-Since past", hdr{"If-Unmodified-Since", past}, 412},
		{"If-Unmodified-Since future", hdr{"If-Unmodified-Since", future}, 200},
		{"If-Match true and If-Unmodified-Since false", hdr{"If-Match", etag, "If-Unmodified-Since", past}, 200},
		{"If-None-Match false and If-Modified-Since true", hdr{"If-None-Match", `"x"`, "If-Modified-Since", future}, 200},
		{"If-Match false wins over If-None-Match", hdr{"If-Match", `"x"`, "If-None-Match", etag}, 412},
	} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			r := c.do(t, m, "cond", "obj", "", tc.h, "")
			switch tc.status {
			case 412:
				expectS3Error(t, r, 412, "PreconditionFailed")
			case 304:
				if r.StatusCode != 304 || len(r.Body) != 0 {
					t.Errorf("%s %s: want bare 304, got\n%s", m, tc.name, r)
				} else if r.Header.Get("ETag") != etag {
					t.Errorf("%s %s: 304 with ETag %q", m, tc.name, r.Header.Get("ETag"))
				}
			default:
				if r.StatusCode != tc.status {
					t.Errorf("%s %s: want %d, got\n%s", m, tc.name, tc.status, r)
				} else if m == http.MethodGet && string(r.Body) != "conditional body" {
					t.Errorf("%s %s: body %q", m, tc.name, r.Body)
				}
			}
		}
	}
}

// TestS3Dialects checks the header names each dialect writes for requests with no hint
// (anonymous, no vendor header: x-obj-* by default, x-amz-* with --dialect riak), that a
// request signed with signature V2 is answered in x-amz-* names whatever the dialect, and
// that both accept either name set on input.
func TestS3Dialects(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name        string
		args        []string
		out, absent string // prefix written, prefix never written
	}{
		{"store", nil, "X-Obj-", "X-Amz-"},
		{"riak", []string{"--dialect", "riak"}, "X-Amz-", "X-Obj-"},
	} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, d.args...)
			u := s3CreateUser(t, s, "dialect@example.com", "Dialect")
			c := s3c{s: s, cred: u.cred(), sign: s3V2, host: true}
			c.mkBucket(t, "dia")
			// Input in both name sets: metadata and canned ACLs.
			c.put(t, "dia", "obj-store", "s", "x-obj-meta-color", "red", "x-obj-acl", "public-read")
			c.put(t, "dia", "obj-amz", "a", "x-amz-meta-shape", "round", "x-amz-acl", "public-read")
			c.put(t, "dia", "obj-grant", "g", "x-obj-grant-read", `uri="`+s3AllUsers+`"`)
			for _, tc := range []struct{ key, meta, value string }{
				{"obj-store", "Color", "red"}, {"obj-amz", "Shape", "round"}, {"obj-grant", "", ""},
			} {
				for _, m := range []string{http.MethodGet, http.MethodHead} {
					r := c.anon().do(t, m, "dia", tc.key, "", nil, "")
					if r.StatusCode != http.StatusOK {
						t.Errorf("anonymous %s %s (public through the %s headers): want 200, got\n%s", m, tc.key, tc.key, r)
						continue
					}
					if tc.meta != "" {
						if got := r.Header.Get(d.out + "Meta-" + tc.meta); got != tc.value {
							t.Errorf("%s %s: %sMeta-%s = %q, want %q\n%s", m, tc.key, d.out, tc.meta, got, tc.value, r)
						}
					}
					for name := range r.Header {
						if strings.HasPrefix(name, d.absent) {
							t.Errorf("%s %s: header %s in the %s dialect", m, tc.key, name, d.name)
						}
					}
					if r.Header.Get(d.out+"Request-Id") == "" {
						t.Errorf("%s %s: no %sRequest-Id", m, tc.key, d.out)
					}
				}
			}
			// The request id of an error body is the header's; a V2-signed request (an AWS
			// scheme) is answered in x-amz-* names.
			r := c.do(t, http.MethodGet, "dia", "missing", "", nil, "")
			e := expectS3Error(t, r, http.StatusNotFound, "NoSuchKey")
			if e.RequestID != r.Header.Get("X-Amz-Request-Id") || e.RequestID == "" || r.Header.Get("X-Obj-Request-Id") != "" {
				t.Errorf("RequestId %q, header X-Amz-Request-Id %q\n%s", e.RequestID, r.Header.Get("X-Amz-Request-Id"), r)
			}
			if e.Resource != "/dia/missing" {
				t.Errorf("Resource %q, want /dia/missing", e.Resource)
			}
			// Request ids differ between requests.
			r2 := c.do(t, http.MethodGet, "dia", "missing", "", nil, "")
			if s3RequestID(r2) == s3RequestID(r) {
				t.Errorf("two requests share the request id %q", s3RequestID(r))
			}
		})
	}
}

// TestS3ExpectContinue sends only the headers of uploads with "Expect: 100-continue":
// a refused upload is answered at once, without "100 Continue" and without the body;
// an accepted one gets "100 Continue", then the body is sent and stored.
func TestS3ExpectContinue(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "alice@example.com", "Alice")
	bob := s3CreateUser(t, s, "bob@example.com", "Bob")
	s3c{s: s, cred: alice.cred(), sign: s3V2}.mkBucket(t, "expect")
	host := s3DataHost + ":" + s3PortOf(s)
	for _, tc := range []struct {
		name   string
		cred   *s3Cred
		path   string
		length string
		extra  hdr
		status int
		code   string
	}{
		{"no WRITE", s3CredPtr(bob.cred()), "/expect/k", "1048576", nil, 403, "AccessDenied"},
		{"anonymous", nil, "/expect/k", "1048576", nil, 403, "AccessDenied"},
		{"no bucket", s3CredPtr(alice.cred()), "/absent-bucket/k", "1048576", nil, 404, "NoSuchBucket"},
		{"garbage Content-MD5", s3CredPtr(alice.cred()), "/expect/k", "1048576", hdr{"Content-MD5", "garbage!"}, 400, "InvalidDigest"},
		{"too large", s3CredPtr(alice.cred()), "/expect/k", "6000000000", nil, 400, "EntityTooLarge"},
		{"bad signature", &s3Cred{alice.KeyID, "wrong-secret"}, "/expect/k", "1048576", nil, 403, "SignatureDoesNotMatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := s3Dial(t, s)
			h := append(hdr{"Host", host, "Content-Length", tc.length, "Content-Type", "application/octet-stream",
				"Expect", "100-continue", "Connection", "close"}, tc.extra...)
			if _, err := io.WriteString(conn, s3RawRequest(http.MethodPut, tc.path, tc.cred, tc.path, h)); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			r, body := conn.readResponse(t, http.MethodPut) //nolint:bodyclose // readResponse has read and closed the body
			if r.StatusCode == http.StatusContinue {
				t.Fatalf("the server asked for the body of a refused upload (100 Continue)")
			}
			rr := &resp{Response: r, Body: body}
			r.Request = &http.Request{Method: http.MethodPut, URL: &url.URL{Path: tc.path}}
			expectS3Error(t, rr, tc.status, tc.code)
		})
	}
	t.Run("accepted", func(t *testing.T) {
		conn := s3Dial(t, s)
		data := strings.Repeat("x", 100000)
		h := hdr{"Host", host, "Content-Length", strconv.Itoa(len(data)), "Content-Type", "text/plain",
			"Expect", "100-continue", "Connection", "close"}
		c := alice.cred()
		if _, err := io.WriteString(conn, s3RawRequest(http.MethodPut, "/expect/ok", &c, "/expect/ok", h)); err != nil {
			t.Fatal(err)
		}
		r, _ := conn.readResponse(t, http.MethodPut) //nolint:bodyclose // readResponse has read and closed the body
		if r.StatusCode != http.StatusContinue {
			t.Fatalf("want 100 Continue before the body, got %s", r.Status)
		}
		if _, err := io.WriteString(conn, data); err != nil {
			t.Fatal(err)
		}
		r, body := conn.readResponse(t, http.MethodPut) //nolint:bodyclose // readResponse has read and closed the body
		if r.StatusCode != http.StatusOK || r.Header.Get("ETag") != `"`+s3MD5Hex([]byte(data))+`"` {
			t.Fatalf("after the body: %s %v %q", r.Status, r.Header, body)
		}
		got := s3c{s: s, cred: alice.cred(), sign: s3V2}.must(t, 200, http.MethodGet, "expect", "ok", "", nil, "")
		if string(got.Body) != data {
			t.Errorf("stored %d bytes, want %d", len(got.Body), len(data))
		}
	})
	// Nothing was stored by the refused uploads.
	expectS3Error(t, s3c{s: s, cred: alice.cred(), sign: s3V2}.do(t, http.MethodGet, "expect", "k", "", nil, ""), 404, "NoSuchKey")
}

func s3CredPtr(c s3Cred) *s3Cred { return &c }

// TestS3ContentMD5 checks Content-MD5: a matching digest stores, a mismatch is
// BadDigest and leaves the previous version, a malformed one is InvalidDigest.
func TestS3ContentMD5(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "md5@example.com", "MD5")
	big := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/32+7) // 2.5 MiB and a bit: several chunks
	for _, sign := range []s3SigVer{s3V2, s3V4} {
		t.Run(sign.String(), func(t *testing.T) {
			c := s3c{s: s, cred: u.cred(), sign: sign}
			b := "md5-" + sign.String()
			c.mkBucket(t, b)
			for _, body := range []string{"md5 body", string(big)} {
				key := fmt.Sprintf("obj-%d", len(body))
				c.put(t, b, key, "previous version")
				r := c.put(t, b, key, body, "Content-MD5", s3MD5B64([]byte(body)))
				if r.Header.Get("ETag") != `"`+s3MD5Hex([]byte(body))+`"` {
					t.Errorf("good digest: ETag %q", r.Header.Get("ETag"))
				}
				c.put(t, b, key, "previous version")
				for _, tc := range []struct {
					name, md5, code string
				}{
					{"mismatch", s3MD5B64([]byte("something else")), "BadDigest"},
					{"garbage", "not base64 at all!", "InvalidDigest"},
					{"short", "AAECAwQFBgcICQoLDA0O", "InvalidDigest"}, // 15 bytes
					{"long", s3MD5B64([]byte("x")) + "AAAA", "InvalidDigest"},
					{"hex instead of base64", s3MD5Hex([]byte(body)), "InvalidDigest"},
					{"empty", "", "InvalidDigest"},
				} {
					r := c.do(t, http.MethodPut, b, key, "", hdr{"Content-MD5", tc.md5}, body)
					expectS3Error(t, r, http.StatusBadRequest, tc.code)
					got := c.must(t, http.StatusOK, http.MethodGet, b, key, "", nil, "")
					if string(got.Body) != "previous version" {
						t.Errorf("%s digest (%d bytes): the object is now %d bytes, want the previous version", tc.name, len(body), len(got.Body))
					}
				}
				// A mismatch on a new key stores nothing.
				expectS3Error(t, c.do(t, http.MethodPut, b, key+"-new", "", hdr{"Content-MD5", s3MD5B64([]byte("nope"))}, body), 400, "BadDigest")
				expectS3Error(t, c.do(t, http.MethodGet, b, key+"-new", "", nil, ""), 404, "NoSuchKey")
			}
		})
	}
}

// TestS3MissingContentLength sends a chunked PUT (no Content-Length) on a raw socket:
// 411 MissingContentLength.
func TestS3MissingContentLength(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "chunked@example.com", "Chunked")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "chunked")
	cred := u.cred()
	for _, tc := range []struct {
		name, target, resource, host string
	}{
		{"path style", "/chunked/obj", "/chunked/obj", s3DataHost + ":" + s3PortOf(s)},
		{"host style", "/obj", "/chunked/obj", "chunked." + s3DataHost + ":" + s3PortOf(s)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := s3Dial(t, s)
			req := s3RawRequest(http.MethodPut, tc.target, &cred, tc.resource,
				hdr{"Host", tc.host, "Content-Type", "text/plain", "Transfer-Encoding", "chunked", "Connection", "close"})
			if _, err := io.WriteString(conn, req+"5\r\nhello\r\n0\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			r, body := conn.readResponse(t, http.MethodPut) //nolint:bodyclose // readResponse has read and closed the body
			r.Request = &http.Request{Method: http.MethodPut, URL: &url.URL{Path: tc.target}}
			expectS3Error(t, &resp{Response: r, Body: body}, http.StatusLengthRequired, "MissingContentLength")
		})
	}
	// The same through Go's client (a body of unknown length is sent chunked), V4 too.
	for _, sign := range []s3SigVer{s3V2, s3V4} {
		r := s3Do(t, s, s3Req{method: http.MethodPut, bucket: "chunked", key: "obj2", sign: sign, cred: u.cred(),
			bodyReader: io.MultiReader(strings.NewReader("hello"))})
		expectS3Error(t, r, http.StatusLengthRequired, "MissingContentLength")
	}
	expectS3Error(t, c.do(t, http.MethodGet, "chunked", "obj", "", nil, ""), 404, "NoSuchKey")
	expectS3Error(t, c.do(t, http.MethodGet, "chunked", "obj2", "", nil, ""), 404, "NoSuchKey")
}

// TestS3AbsoluteForm writes absolute-form request targets (what clients send through
// an HTTP proxy) on a raw connection.
func TestS3AbsoluteForm(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "proxy@example.com", "Proxy")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "bkt")
	c.put(t, "bkt", "key", "absolute body")
	c.put(t, "bkt", "dir/k y", "spaced body")
	cred := u.cred()
	port := s3PortOf(s)
	for _, tc := range []struct {
		name, method, target, host, resource, body, want string
	}{
		{"host style", "GET", "http://bkt.s3.localhost/key", "bkt.s3.localhost", "/bkt/key", "", "absolute body"},
		{"host style with port", "GET", "http://bkt.s3.localhost:" + port + "/key", "bkt.s3.localhost:" + port, "/bkt/key", "", "absolute body"},
		{"path style", "GET", "http://s3.localhost:" + port + "/bkt/key", "s3.localhost:" + port, "/bkt/key", "", "absolute body"},
		{"escaped key", "GET", "http://bkt.s3.localhost/dir/k%20y", "bkt.s3.localhost", "/bkt/dir/k%20y", "", "spaced body"},
		{"bucket listing", "GET", "http://bkt.s3.localhost/?prefix=dir/", "bkt.s3.localhost", "/bkt/", "", "<Key>dir/k y</Key>"},
		{"put", "PUT", "http://bkt.s3.localhost/new", "bkt.s3.localhost", "/bkt/new", "new body", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := s3Dial(t, s)
			h := hdr{"Host", tc.host, "Connection", "close"}
			if tc.method == "PUT" {
				h = append(h, "Content-Length", strconv.Itoa(len(tc.body)))
			}
			if _, err := io.WriteString(conn, s3RawRequest(tc.method, tc.target, &cred, tc.resource, h)+tc.body); err != nil {
				t.Fatal(err)
			}
			r, body := conn.readResponse(t, tc.method) //nolint:bodyclose // readResponse has read and closed the body
			if r.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
				t.Errorf("%s %s: %s %q", tc.method, tc.target, r.Status, body)
			}
		})
	}
	if r := c.must(t, http.StatusOK, http.MethodGet, "bkt", "new", "", nil, ""); string(r.Body) != "new body" {
		t.Errorf("object stored through the absolute form: %q", r.Body)
	}
}

// TestS3AdminAPI drives the user administration API: create, duplicates, rights,
// own record, disable and re-enable, secret rotation, listing.
func TestS3AdminAPI(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V2}
	u := s3CreateUser(t, s, "carol@example.com", "Carol Example")
	if u.Email != "carol@example.com" || u.Name != "Carol Example" || u.DisplayName != "carol" || u.Status != "enabled" ||
		len(u.KeyID) != 20 || len(u.KeySecret) != 40 || len(u.ID) != 64 {
		t.Errorf("new user record %+v", u)
	}
	if strings.ToUpper(u.KeyID) != u.KeyID {
		t.Errorf("key id %q is not upper case", u.KeyID)
	}
	carol := s3c{s: s, cred: u.cred(), sign: s3V2}
	carol.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")

	userJSON := `{"email":"dave@example.com","name":"Dave"}`
	ct := hdr{"Content-Type", "application/json"}
	t.Run("create errors", func(t *testing.T) {
		for _, email := range []string{"carol@example.com", "CAROL@example.com"} {
			r := admin.do(t, http.MethodPost, "riak-cs", "user", "", ct, `{"email":"`+email+`","name":"Again"}`)
			expectS3Error(t, r, http.StatusConflict, "UserAlreadyExists")
		}
		expectS3Error(t, carol.do(t, http.MethodPost, "riak-cs", "user", "", ct, userJSON), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, carol.anon().do(t, http.MethodPost, "riak-cs", "user", "", ct, userJSON), http.StatusForbidden, "AccessDenied")
		for _, body := range []string{`{"email":"no-at-sign","name":"X"}`, `{"name":"X"}`, `{"email":"x@example.com"}`, `not json`} {
			r := admin.do(t, http.MethodPost, "riak-cs", "user", "", ct, body)
			if r.StatusCode != http.StatusBadRequest {
				t.Errorf("create with %s: want 400, got\n%s", body, r)
			}
		}
		// Riak CS's XML form.
		r := admin.do(t, http.MethodPost, "riak-cs", "user", "", hdr{"Content-Type", "application/xml"},
			`<User><Email>xml@example.com</Email><Name>Xml User</Name></User>`)
		if r.StatusCode != http.StatusCreated || !strings.Contains(string(r.Body), `"email":"xml@example.com"`) {
			t.Errorf("create from XML: %s", r)
		}
	})
	t.Run("records", func(t *testing.T) {
		var got s3User
		r := carol.must(t, http.StatusOK, http.MethodGet, "riak-cs", "user", "", nil, "")
		if err := json.Unmarshal(r.Body, &got); err != nil || got != u {
			t.Errorf("GET own record: %+v (%v), want %+v", got, err, u)
		}
		r = admin.must(t, http.StatusOK, http.MethodGet, "riak-cs", "user/"+u.KeyID, "", nil, "")
		if err := json.Unmarshal(r.Body, &got); err != nil || got != u {
			t.Errorf("admin GET record: %+v (%v)", got, err)
		}
		other := s3CreateUser(t, s, "erin@example.com", "Erin")
		expectS3Error(t, carol.do(t, http.MethodGet, "riak-cs", "user/"+other.KeyID, "", nil, ""), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, carol.do(t, http.MethodGet, "riak-cs", "users", "", nil, ""), http.StatusForbidden, "AccessDenied")
		expectS3Error(t, carol.anon().do(t, http.MethodGet, "riak-cs", "user", "", nil, ""), http.StatusForbidden, "AccessDenied")
		r = admin.must(t, http.StatusNotFound, http.MethodGet, "riak-cs", "user/NOSUCHKEYID000000000", "", nil, "")
		_ = r
		r = admin.must(t, http.StatusOK, http.MethodGet, "riak-cs", "users", "", nil, "")
		var all []s3User
		if err := json.Unmarshal(r.Body, &all); err != nil {
			t.Fatalf("users: %v %q", err, r.Body)
		}
		emails := map[string]bool{}
		for _, x := range all {
			emails[x.Email] = true
		}
		for _, e := range []string{"carol@example.com", "erin@example.com"} {
			if !emails[e] {
				t.Errorf("GET /riak-cs/users lacks %s: %q", e, r.Body)
			}
		}
		if r := s3Do(t, s, s3Req{method: http.MethodGet, bucket: "riak-cs", key: "ping"}); r.StatusCode != 200 || string(r.Body) != "OK" {
			t.Errorf("ping: %s", r)
		}
	})
	t.Run("disable", func(t *testing.T) {
		f := s3CreateUser(t, s, "frank@example.com", "Frank")
		frank := s3c{s: s, cred: f.cred(), sign: s3V4}
		frank.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
		r := admin.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user/"+f.KeyID, "", ct, `{"status":"disabled"}`)
		if !strings.Contains(string(r.Body), `"status":"disabled"`) {
			t.Errorf("disable answer %q", r.Body)
		}
		for _, sign := range []s3SigVer{s3V2, s3V4} {
			expectS3Error(t, frank.as(f.cred()).withSign(sign).do(t, http.MethodGet, "", "", "", nil, ""), http.StatusForbidden, "InvalidAccessKeyId")
		}
		r = admin.must(t, http.StatusOK, http.MethodGet, "riak-cs", "users", "status=disabled", nil, "")
		if !strings.Contains(string(r.Body), f.KeyID) || strings.Contains(string(r.Body), u.KeyID) {
			t.Errorf("users?status=disabled: %q", r.Body)
		}
		r = admin.must(t, http.StatusOK, http.MethodGet, "riak-cs", "users", "status=enabled", nil, "")
		if strings.Contains(string(r.Body), f.KeyID) || !strings.Contains(string(r.Body), u.KeyID) {
			t.Errorf("users?status=enabled: %q", r.Body)
		}
		admin.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user/"+f.KeyID, "", ct, `{"status":"enabled"}`)
		frank.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
		// A user may disable itself, not re-enable itself (its key no longer works).
		frank.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user", "", ct, `{"status":"disabled"}`)
		expectS3Error(t, frank.do(t, http.MethodPut, "riak-cs", "user", "", ct, `{"status":"enabled"}`), http.StatusForbidden, "InvalidAccessKeyId")
	})
	t.Run("new secret", func(t *testing.T) {
		g := s3CreateUser(t, s, "grace@example.com", "Grace")
		old := s3c{s: s, cred: g.cred(), sign: s3V2}
		r := old.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user", "", ct, `{"new_key_secret":true}`)
		var ng s3User
		if err := json.Unmarshal(r.Body, &ng); err != nil || ng.KeyID != g.KeyID || ng.KeySecret == g.KeySecret || len(ng.KeySecret) != 40 {
			t.Fatalf("rotation answer %q (%v)", r.Body, err)
		}
		for _, sign := range []s3SigVer{s3V2, s3V4} {
			expectS3Error(t, old.withSign(sign).do(t, http.MethodGet, "", "", "", nil, ""), http.StatusForbidden, "SignatureDoesNotMatch")
			old.as(ng.cred()).withSign(sign).must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
		}
		// The admin rotates another user's secret.
		r = admin.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user/"+g.KeyID, "", ct, `{"new_key_secret":true}`)
		var ng2 s3User
		_ = json.Unmarshal(r.Body, &ng2)
		expectS3Error(t, old.as(ng.cred()).do(t, http.MethodGet, "", "", "", nil, ""), http.StatusForbidden, "SignatureDoesNotMatch")
		old.as(ng2.cred()).must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
	})
	t.Run("rename", func(t *testing.T) {
		h := s3CreateUser(t, s, "heidi@example.com", "Heidi")
		r := s3c{s: s, cred: h.cred(), sign: s3V2}.must(t, http.StatusOK, http.MethodPut, "riak-cs", "user", "", ct,
			`{"name":"Heidi Renamed","email":"heidi2@example.com"}`)
		var nh s3User
		if err := json.Unmarshal(r.Body, &nh); err != nil || nh.Name != "Heidi Renamed" || nh.Email != "heidi2@example.com" ||
			nh.DisplayName != "heidi2" || nh.ID != h.ID || nh.KeyID != h.KeyID {
			t.Errorf("rename answer %q (%v)", r.Body, err)
		}
		r = s3c{s: s, cred: h.cred(), sign: s3V2}.do(t, http.MethodPut, "riak-cs", "user", "", ct, `{"email":"carol@example.com"}`)
		expectS3Error(t, r, http.StatusConflict, "UserAlreadyExists")
	})
}

// withSign returns c with another signature version.
func (c s3c) withSign(v s3SigVer) s3c { c.sign = v; return c }

// TestS3SeparateFromKV checks that S3 buckets and KV buckets of the same name are
// different things: neither listing shows the other's objects.
func TestS3SeparateFromKV(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "kv@example.com", "KV")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	c.mkBucket(t, "shared")
	c.put(t, "shared", "s3key", "from s3")

	kvKeys := func() []string {
		r := s.get(t, "/buckets/shared/keys?keys=true")
		expect(t, r, http.StatusOK, nil)
		var v struct {
			Keys []string `json:"keys"`
		}
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatalf("KV key listing %q: %v", r.Body, err)
		}
		sort.Strings(v.Keys)
		return v.Keys
	}
	if ks := kvKeys(); len(ks) != 0 {
		t.Errorf("the KV listing of bucket shared shows %q (S3 objects)", ks)
	}
	expect(t, s.get(t, "/buckets/shared/keys/s3key"), http.StatusNotFound, nil)
	r := s.get(t, "/buckets?buckets=true")
	expect(t, r, http.StatusOK, nil)
	if strings.Contains(string(r.Body), `"shared"`) {
		t.Errorf("the KV bucket list shows the S3 bucket: %s", r.Body)
	}

	s.mustPut(t, "/buckets/shared/keys/kvkey", "from kv")
	s.mustPut(t, "/buckets/kvonly/keys/k", "kv only")
	if ks := kvKeys(); !slices.Equal(ks, []string{"kvkey"}) {
		t.Errorf("KV listing %q, want [kvkey]", ks)
	}
	l := s3ParseList(t, c.do(t, http.MethodGet, "shared", "", "", nil, ""))
	if got := l.keys(); !slices.Equal(got, []string{"s3key"}) {
		t.Errorf("S3 listing %q, want [s3key]", got)
	}
	expectS3Error(t, c.do(t, http.MethodGet, "shared", "kvkey", "", nil, ""), http.StatusNotFound, "NoSuchKey")
	if r := c.must(t, http.StatusOK, http.MethodGet, "shared", "s3key", "", nil, ""); string(r.Body) != "from s3" {
		t.Errorf("S3 object: %q", r.Body)
	}
	if r := s.get(t, "/buckets/shared/keys/kvkey"); r.StatusCode != 200 || string(r.Body) != "from kv" {
		t.Errorf("KV object: %s", r)
	}
	expectS3Error(t, c.do(t, http.MethodGet, "kvonly", "k", "", nil, ""), http.StatusNotFound, "NoSuchBucket")
	expectS3Error(t, c.do(t, http.MethodPut, "kvonly", "k2", "", nil, "x"), http.StatusNotFound, "NoSuchBucket")
	// The S3 bucket list holds only S3 buckets.
	lb := c.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
	if strings.Contains(string(lb.Body), "kvonly") || !strings.Contains(string(lb.Body), "<Name>shared</Name>") {
		t.Errorf("S3 bucket list: %s", lb.Body)
	}
	// Deleting the S3 objects and bucket leaves the KV side alone.
	c.must(t, http.StatusNoContent, http.MethodDelete, "shared", "s3key", "", nil, "")
	c.must(t, http.StatusNoContent, http.MethodDelete, "shared", "", "", nil, "")
	if ks := kvKeys(); !slices.Equal(ks, []string{"kvkey"}) {
		t.Errorf("KV listing after the S3 bucket went: %q", ks)
	}
}

// TestS3StoredHeaders checks what GET and HEAD answer besides the data: the standard
// headers stored with the object, Content-Length, Last-Modified, the default type, and
// the bucket sub-resources ?location and ?versioning.
func TestS3StoredHeaders(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "headers@example.com", "Headers")
	c := s3c{s: s, cred: u.cred(), sign: s3V4, host: true}
	c.mkBucket(t, "hdrs")
	stored := hdr{"Content-Type", "text/html; charset=utf-8", "Cache-Control", "max-age=60", "Content-Disposition", `inline; filename="x.html"`,
		"Content-Encoding", "gzip", "Content-Language", "de", "Expires", "Thu, 01 Dec 2030 16:00:00 GMT"}
	before := time.Now().Add(-2 * time.Second)
	c.put(t, "hdrs", "page", "<p>hi</p>", stored...)
	c.put(t, "hdrs", "untyped", "raw bytes")
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r := c.must(t, http.StatusOK, m, "hdrs", "page", "", nil, "")
		for i := 0; i+1 < len(stored); i += 2 {
			if got := r.Header.Get(stored[i]); got != stored[i+1] {
				t.Errorf("%s: %s = %q, want %q", m, stored[i], got, stored[i+1])
			}
		}
		if r.Header.Get("Content-Length") != "9" {
			t.Errorf("%s: Content-Length %q, want 9", m, r.Header.Get("Content-Length"))
		}
		lm, err := time.Parse(http.TimeFormat, r.Header.Get("Last-Modified"))
		if err != nil || lm.Before(before.Truncate(time.Second)) || lm.After(time.Now().Add(2*time.Second)) {
			t.Errorf("%s: Last-Modified %q (%v)", m, r.Header.Get("Last-Modified"), err)
		}
		if m == http.MethodHead && len(r.Body) != 0 {
			t.Errorf("HEAD with a body %q", r.Body)
		}
		r = c.must(t, http.StatusOK, m, "hdrs", "untyped", "", nil, "")
		if ct := r.Header.Get("Content-Type"); ct != "application/octet-stream" && ct != "binary/octet-stream" {
			t.Errorf("%s: default Content-Type %q", m, ct)
		}
		if r.Header.Get("Cache-Control") != "" || r.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: headers that were never stored: %v", m, r.Header)
		}
	}
	// A repeated metadata header is one value, joined by commas (as V2 signs it).
	c.withSign(s3V2).put(t, "hdrs", "multi", "m", "x-amz-meta-multi", "a", "x-amz-meta-multi", "b")
	if r := c.must(t, http.StatusOK, http.MethodHead, "hdrs", "multi", "", nil, ""); r.Header.Get("X-Amz-Meta-Multi") != "a,b" {
		t.Errorf("repeated metadata header: %q", r.Header.Values("X-Amz-Meta-Multi"))
	}
	// Overwriting replaces the stored headers too.
	c.put(t, "hdrs", "page", "plain now", "Content-Type", "text/plain")
	r := c.must(t, http.StatusOK, http.MethodGet, "hdrs", "page", "", nil, "")
	if string(r.Body) != "plain now" || r.Header.Get("Content-Type") != "text/plain" || r.Header.Get("Cache-Control") != "" {
		t.Errorf("after overwrite:\n%s", r)
	}
	// Bucket sub-resources.
	r = c.must(t, http.StatusOK, http.MethodGet, "hdrs", "", "location", nil, "")
	if got := s3CompactXML(string(r.Body)); !strings.Contains(got, `<LocationConstraint xmlns="`+s3NS+`"`) {
		t.Errorf("?location: %s", r.Body)
	}
	r = c.must(t, http.StatusOK, http.MethodGet, "hdrs", "", "versioning", nil, "")
	if !strings.Contains(string(r.Body), "VersioningConfiguration") || strings.Contains(string(r.Body), "Enabled") {
		t.Errorf("?versioning: %s", r.Body)
	}
	expectS3Error(t, c.anon().do(t, http.MethodGet, "hdrs", "", "location", nil, ""), http.StatusForbidden, "AccessDenied")
	// The bucket list of a user shows its own buckets only.
	other := s3CreateUser(t, s, "other-headers@example.com", "Other")
	r = c.as(other.cred()).must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
	if strings.Contains(string(r.Body), "hdrs") || !strings.Contains(string(r.Body), "<ID>"+other.ID+"</ID>") {
		t.Errorf("another user's bucket list:\n%s", r.Body)
	}
}

// TestS3BucketLifecycle: a deleted bucket's name is free for anyone; the new bucket is
// the new owner's, empty, and private to it.
func TestS3BucketLifecycle(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "alice@example.com", "Alice")
	bob := s3CreateUser(t, s, "bob@example.com", "Bob")
	a := s3c{s: s, cred: alice.cred(), sign: s3V2, host: true}
	b := a.as(bob.cred()).withSign(s3V4)
	a.mkBucket(t, "handoff", "x-amz-acl", "public-read")
	a.put(t, "handoff", "old", "alice's", "x-amz-acl", "public-read")
	a.must(t, http.StatusNoContent, http.MethodDelete, "handoff", "old", "", nil, "")
	a.must(t, http.StatusNoContent, http.MethodDelete, "handoff", "", "", nil, "")
	expectS3Error(t, a.do(t, http.MethodDelete, "handoff", "", "", nil, ""), http.StatusNotFound, "NoSuchBucket")
	expectS3Error(t, a.anon().do(t, http.MethodGet, "handoff", "old", "", nil, ""), http.StatusNotFound, "NoSuchBucket")
	b.mkBucket(t, "handoff")
	l := s3ParseList(t, b.do(t, http.MethodGet, "handoff", "", "", nil, ""))
	if len(l.Contents) != 0 {
		t.Errorf("the new bucket lists %q", l.keys())
	}
	expectS3Error(t, a.do(t, http.MethodGet, "handoff", "", "", nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, a.anon().do(t, http.MethodGet, "handoff", "", "", nil, ""), http.StatusForbidden, "AccessDenied")
	expectS3Error(t, a.do(t, http.MethodPut, "handoff", "", "", nil, ""), http.StatusConflict, "BucketAlreadyExists")
	if d := s3ParseACL(t, b.must(t, http.StatusOK, http.MethodGet, "handoff", "", "acl", nil, "")); d.Owner.ID != bob.ID {
		t.Errorf("owner of the new bucket: %+v", d.Owner)
	}
	la := a.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
	lb := b.must(t, http.StatusOK, http.MethodGet, "", "", "", nil, "")
	if strings.Contains(string(la.Body), "handoff") || !strings.Contains(string(lb.Body), "<Name>handoff</Name>") {
		t.Errorf("bucket lists:\nalice %s\nbob %s", la.Body, lb.Body)
	}
	// The data survives a restart.
	b.put(t, "handoff", "k", "durable")
	s.Stop()
	s.Restart()
	b.s = s
	if r := b.must(t, http.StatusOK, http.MethodGet, "handoff", "k", "", nil, ""); string(r.Body) != "durable" {
		t.Errorf("after restart: %q", r.Body)
	}
}
