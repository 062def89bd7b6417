package main

// End-to-end tests of the object-storage interface with minio-go and raw requests:
// presigned URLs (V2 and V4, GET and PUT, expired and tampered), multi-object delete,
// range reads across chunk and part boundaries, response-* overrides on signed GETs,
// and the 501 NotImplemented answers of the S3 features the server does not offer.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
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

// psClient is a plain net/http client for presigned URLs: it dials the server whatever
// the host name in the URL, so host-style URLs need no DNS.
func psClient(t testing.TB, s *child) *http.Client {
	tr := s3Transport(s)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// psDo sends method to rawURL as it is, with body (nil for none), and reads the
// response.
func psDo(t testing.TB, c *http.Client, method, rawURL string, body []byte) *resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	hr, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, rawURL, err)
	}
	return &resp{Response: hr, Body: b}
}

// psTamper returns u with the query parameter name set to value.
func psTamper(u *url.URL, name, value string) string {
	v := *u
	q := v.Query()
	q.Set(name, value)
	v.RawQuery = q.Encode()
	return v.String()
}

// psFlip changes the first character of a signature into another valid one.
func psFlip(sig string) string {
	if sig == "" {
		return "x"
	}
	c := "0"
	if sig[0] == '0' {
		c = "1"
	}
	return c + sig[1:]
}

// TestS3Presign checks presigned GET and PUT URLs made by minio-go with V2 and V4
// credentials in both addressing styles, used by a plain HTTP client.
func TestS3Presign(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "presign@example.com", "Presign")
	for _, combo := range minioCombos {
		t.Run(combo.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			mc := newMinio(t, s, u.cred(), combo)
			hc := psClient(t, s)
			b := "ps-" + combo.name
			if err := mc.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
				t.Fatalf("MakeBucket: %v", err)
			}
			const key = "dir/presigned ü+x.txt"
			data := []byte("presigned data of " + combo.name)
			if _, err := mc.PutObject(ctx, b, key, bytes.NewReader(data), int64(len(data)),
				minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			sigParam, expParam := "Signature", "Expires"
			if combo.v4 {
				sigParam, expParam = "X-Amz-Signature", "X-Amz-Expires"
			}

			// An expiring URL is made first, so the wait overlaps the other checks.
			expiring, err := mc.PresignedGetObject(ctx, b, key, time.Second, nil)
			if err != nil {
				t.Fatalf("PresignedGetObject (1 s): %v", err)
			}
			made := time.Now()

			// GET.
			gu, err := mc.PresignedGetObject(ctx, b, key, 10*time.Minute, nil)
			if err != nil {
				t.Fatalf("PresignedGetObject: %v", err)
			}
			if combo.v4 != gu.Query().Has("X-Amz-Signature") || !gu.Query().Has(sigParam) {
				t.Fatalf("presigned URL %s is not of the expected version", gu)
			}
			r := psDo(t, hc, http.MethodGet, gu.String(), nil)
			if r.StatusCode != http.StatusOK || !bytes.Equal(r.Body, data) || r.Header.Get("ETag") != `"`+s3MD5Hex(data)+`"` ||
				r.Header.Get("Content-Type") != "text/plain" {
				t.Fatalf("GET of a presigned URL:\n%s", r)
			}

			// GET with response-* overrides (signed into the URL).
			ov := url.Values{}
			ov.Set("response-content-type", "application/x-override")
			ov.Set("response-content-disposition", `attachment; filename="over ride.txt"`)
			ov.Set("response-cache-control", "no-store")
			ou, err := mc.PresignedGetObject(ctx, b, key, 10*time.Minute, ov)
			if err != nil {
				t.Fatalf("PresignedGetObject with overrides: %v", err)
			}
			r = psDo(t, hc, http.MethodGet, ou.String(), nil)
			if r.StatusCode != http.StatusOK || !bytes.Equal(r.Body, data) || r.Header.Get("Content-Type") != "application/x-override" ||
				r.Header.Get("Content-Disposition") != `attachment; filename="over ride.txt"` || r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("GET of a presigned URL with response overrides:\n%s", r)
			}

			// PUT.
			pu, err := mc.PresignedPutObject(ctx, b, "uploaded/through a url", 10*time.Minute)
			if err != nil {
				t.Fatalf("PresignedPutObject: %v", err)
			}
			up := randomBytes(2*mpMiB + 11)
			r = psDo(t, hc, http.MethodPut, pu.String(), up)
			if r.StatusCode != http.StatusOK || r.Header.Get("ETag") != `"`+s3MD5Hex(up)+`"` {
				t.Fatalf("PUT to a presigned URL:\n%s", r)
			}
			if got := cpRead(t, mc, b, "uploaded/through a url"); !bytes.Equal(got, up) {
				t.Errorf("the object PUT through a presigned URL reads %d bytes, want %d", len(got), len(up))
			}

			// Tampered URLs: another key, another expiry, a changed signature, another
			// method.
			other := *gu
			other.Path = strings.Replace(other.Path, "presigned", "Presigned", 1)
			other.RawPath = ""
			later := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
			if combo.v4 {
				later = "3600"
			}
			for _, tc := range []struct {
				name, method, url string
			}{
				{"other key", http.MethodGet, other.String()},
				{"longer expiry", http.MethodGet, psTamper(gu, expParam, later)},
				{"changed signature", http.MethodGet, psTamper(gu, sigParam, psFlip(gu.Query().Get(sigParam)))},
				{"GET URL used to PUT", http.MethodPut, gu.String()},
				{"override added", http.MethodGet, psTamper(gu, "response-content-type", "text/evil")},
			} {
				var body []byte
				if tc.method == http.MethodPut {
					body = []byte("overwrite")
				}
				r := psDo(t, hc, tc.method, tc.url, body)
				t.Run(tc.name, func(t *testing.T) { expectS3Error(t, r, http.StatusForbidden, "SignatureDoesNotMatch") })
			}
			if got := cpRead(t, mc, b, key); !bytes.Equal(got, data) {
				t.Errorf("after the tampered requests the object reads %q", got)
			}

			// Expired.
			time.Sleep(time.Until(made.Add(2100 * time.Millisecond)))
			r = psDo(t, hc, http.MethodGet, expiring.String(), nil)
			expectS3Error(t, r, http.StatusForbidden, "AccessDenied")
		})
	}
}

// mdResult is a DeleteResult document.
type mdResult struct {
	XMLName xml.Name `xml:"DeleteResult"`
	Deleted []struct {
		Key string `xml:"Key"`
	} `xml:"Deleted"`
	Errors []struct {
		Key     string `xml:"Key"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
}

func (d *mdResult) deleted() []string {
	var ks []string
	for _, x := range d.Deleted {
		ks = append(ks, x.Key)
	}
	sort.Strings(ks)
	return ks
}

// mdBody renders a Delete document for keys.
func mdBody(quiet bool, keys ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="` + s3NS + `">`)
	if quiet {
		b.WriteString("<Quiet>true</Quiet>")
	}
	for _, k := range keys {
		b.WriteString("<Object><Key>" + xmlEscape(k) + "</Key></Object>")
	}
	b.WriteString("</Delete>")
	return b.String()
}

// mdPost sends POST ?delete with body and the headers h (add Content-MD5 yourself).
func mdPost(t testing.TB, c s3c, bucket, body string, h ...string) *resp {
	t.Helper()
	return c.do(t, http.MethodPost, bucket, "", "delete", h, body)
}

// mdMD5 is the Content-MD5 header of body.
func mdMD5(body string) []string { return []string{"Content-MD5", s3MD5B64([]byte(body))} }

// mdKeys lists a bucket's keys.
func mdKeys(t testing.TB, c s3c, bucket string) []string {
	t.Helper()
	return s3ParseList(t, c.do(t, http.MethodGet, bucket, "", "", nil, "")).keys()
}

// TestS3DeleteObjects checks multi-object delete (POST ?delete) with minio-go's
// RemoveObjects and raw requests.
func TestS3DeleteObjects(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "multidelete@example.com", "Multi Delete")
	other := s3CreateUser(t, s, "multidelete-other@example.com", "Multi Delete Other")
	keys := []string{"a", "b c", "d&e<f>'\"", "ü/ключ", "deep/1/2/3", "plus+sign", "big"}
	t.Run("group", func(t *testing.T) {
		for _, combo := range minioCombos {
			t.Run("minio/"+combo.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				mc := newMinio(t, s, u.cred(), combo)
				b := "md-" + combo.name
				if err := mc.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
					t.Fatalf("MakeBucket: %v", err)
				}
				put := func() {
					for _, k := range keys {
						data := []byte("data of " + k)
						if k == "big" {
							data = randomBytes(2*mpMiB + 1)
						}
						if _, err := mc.PutObject(ctx, b, k, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
							t.Fatalf("PutObject %q: %v", k, err)
						}
					}
				}
				send := func() <-chan minio.ObjectInfo {
					ch := make(chan minio.ObjectInfo, len(keys)+1)
					for _, k := range append(slices.Clone(keys), "never stored") {
						ch <- minio.ObjectInfo{Key: k}
					}
					close(ch)
					return ch
				}
				put()
				for e := range mc.RemoveObjects(ctx, b, send(), minio.RemoveObjectsOptions{}) {
					t.Errorf("RemoveObjects: %q: %v", e.ObjectName, e.Err)
				}
				if left := minioList(t, mc, b, minio.ListObjectsOptions{Recursive: true, UseV1: true}); len(left) != 0 {
					t.Errorf("after RemoveObjects: %q left", left)
				}
				// Again, looking at every result: absent keys are reported deleted too.
				put()
				var done []string
				for r := range mc.RemoveObjectsWithResult(ctx, b, send(), minio.RemoveObjectsOptions{}) {
					if r.Err != nil {
						t.Errorf("RemoveObjectsWithResult: %q: %v", r.ObjectName, r.Err)
					}
					done = append(done, r.ObjectName)
				}
				want := append(slices.Clone(keys), "never stored")
				sort.Strings(want)
				sort.Strings(done)
				if !slices.Equal(done, want) {
					t.Errorf("RemoveObjectsWithResult reported\n %q\nwant %q", done, want)
				}
				if left := minioList(t, mc, b, minio.ListObjectsOptions{Recursive: true, UseV1: true}); len(left) != 0 {
					t.Errorf("after RemoveObjectsWithResult: %q left", left)
				}
			})
		}
		for _, c := range []s3c{{s: s, cred: u.cred(), sign: s3V2}, {s: s, cred: u.cred(), sign: s3V4, host: true}} {
			t.Run("raw/"+c.sign.String(), func(t *testing.T) {
				t.Parallel()
				mdRaw(t, c, "mdr-"+c.sign.String(), other)
			})
		}
	})
	waitS3Clean(t, s)
}

func mdRaw(t *testing.T, c s3c, b string, other s3User) {
	c.mkBucket(t, b)
	stored := []string{"k1", "k 2", "k&3<>", "ü4"}
	putAll := func() {
		for _, k := range stored {
			c.put(t, b, k, "data of "+k)
		}
	}
	ok := func(r *resp) *mdResult {
		t.Helper()
		var res mdResult
		mpXML(t, r, "DeleteResult", &res)
		return &res
	}

	// Not quiet: every key is reported deleted, also the absent ones (S3 semantics).
	putAll()
	body := mdBody(false, append(slices.Clone(stored), "absent", "also/absent")...)
	res := ok(mdPost(t, c, b, body, mdMD5(body)...))
	want := append(slices.Clone(stored), "absent", "also/absent")
	sort.Strings(want)
	if got := res.deleted(); !slices.Equal(got, want) || len(res.Errors) != 0 {
		t.Errorf("delete (not quiet): Deleted %q Errors %+v, want Deleted %q", got, res.Errors, want)
	}
	if left := mdKeys(t, c, b); len(left) != 0 {
		t.Errorf("after the delete: %q left", left)
	}

	// Quiet: no Deleted entries.
	putAll()
	body = mdBody(true, append(slices.Clone(stored), "absent")...)
	res = ok(mdPost(t, c, b, body, mdMD5(body)...))
	if len(res.Deleted) != 0 || len(res.Errors) != 0 {
		t.Errorf("quiet delete: Deleted %q Errors %+v, want neither", res.deleted(), res.Errors)
	}
	if left := mdKeys(t, c, b); len(left) != 0 {
		t.Errorf("after the quiet delete: %q left", left)
	}

	// Refused requests delete nothing.
	putAll()
	body = mdBody(false, stored...)
	refused := func(name string, r *resp, status int, code string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			if code == "" {
				e, _ := s3CheckError(t, r, status)
				t.Logf("%s: %d %s (%s)", name, r.StatusCode, e.Code, e.Message)
			} else {
				expectS3Error(t, r, status, code)
			}
		})
		if left := mdKeys(t, c, b); !s3SameStrings(left, slices.Sorted(slices.Values(stored))) {
			t.Errorf("%s: objects %q left, want %q", name, left, slices.Sorted(slices.Values(stored)))
		}
	}
	// S3 requires Content-MD5 (or an x-amz-checksum-* header) on POST ?delete.
	refused("without Content-MD5", mdPost(t, c, b, body), http.StatusBadRequest, "")
	refused("wrong Content-MD5", mdPost(t, c, b, body, "Content-MD5", s3MD5B64([]byte("something else"))), http.StatusBadRequest, "BadDigest")
	refused("invalid Content-MD5", mdPost(t, c, b, body, "Content-MD5", "not base64!"), http.StatusBadRequest, "InvalidDigest")
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("key-%04d", i)
	}
	many[0] = stored[0]
	big := mdBody(false, many...)
	refused("1001 keys", mdPost(t, c, b, big, mdMD5(big)...), http.StatusBadRequest, "MalformedXML")
	for _, bad := range []string{"not xml at all", "<Delete></Delete>", "<Delete><Object><Key>k1</Key></Object>",
		"<Delete><Object></Object></Delete>"} {
		refused("malformed "+strconv.Quote(bad), mdPost(t, c, b, bad, mdMD5(bad)...), http.StatusBadRequest, "MalformedXML")
	}
	refused("absent bucket", mdPost(t, c, "mdr-no-such-bucket", body, mdMD5(body)...), http.StatusNotFound, "NoSuchBucket")
	// Another user without WRITE: either the whole request is refused (403) or every key
	// is reported with an AccessDenied error (AWS's way); nothing is deleted.
	r := mdPost(t, c.as(other.cred()), b, body, mdMD5(body)...)
	if r.StatusCode == http.StatusOK {
		res := ok(r)
		if len(res.Deleted) != 0 || len(res.Errors) != len(stored) {
			t.Errorf("delete without WRITE: %s", r.Body)
		}
		for _, e := range res.Errors {
			if e.Code != "AccessDenied" {
				t.Errorf("delete without WRITE: error %+v, want AccessDenied", e)
			}
		}
	} else {
		expectS3Error(t, r, http.StatusForbidden, "AccessDenied")
	}
	if left := mdKeys(t, c, b); !s3SameStrings(left, slices.Sorted(slices.Values(stored))) {
		t.Errorf("after a delete without WRITE: %q left", left)
	}

	// 1000 keys is the limit: accepted.
	many = many[:1000]
	big = mdBody(true, many...)
	res = ok(mdPost(t, c, b, big, mdMD5(big)...))
	if len(res.Errors) != 0 {
		t.Errorf("delete of 1000 keys: errors %+v", res.Errors)
	}
	if left := mdKeys(t, c, b); !s3SameStrings(left, slices.Sorted(slices.Values(stored[1:]))) {
		t.Errorf("after deleting 1000 keys: %q left, want %q", left, slices.Sorted(slices.Values(stored[1:])))
	}

	// Current SDKs (botocore ≥ 1.36, the awscli releases on it) send a CRC32 checksum
	// instead of Content-MD5, which S3 accepts.
	body = mdBody(false, stored[1:]...)
	sum := make([]byte, 4)
	binary.BigEndian.PutUint32(sum, crc32.ChecksumIEEE([]byte(body)))
	res = ok(mdPost(t, c, b, body, "x-amz-sdk-checksum-algorithm", "CRC32", "x-amz-checksum-crc32", base64.StdEncoding.EncodeToString(sum)))
	if got := res.deleted(); !slices.Equal(got, slices.Sorted(slices.Values(stored[1:]))) {
		t.Errorf("delete with a CRC32 checksum: Deleted %q", got)
	}
	if left := mdKeys(t, c, b); len(left) != 0 {
		t.Errorf("at the end: %q left", left)
	}
}

// TestS3RangeGet reads ranges of a 3 MiB object and of a multipart object with minio-go
// (across chunk and part boundaries) and with raw requests (several ranges, a range past
// the end), and checks the response-* overrides of signed GETs.
func TestS3RangeGet(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "range-get@example.com", "Range Get")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	const b = "rng-get"
	c.mkBucket(t, b)
	big := randomBytes(3*mpMiB + 4321)
	c.put(t, b, "big", string(big))
	parts := [][]byte{randomBytes(mpMinPart), randomBytes(mpMinPart), randomBytes(mpMiB + 99)}
	mpUpload(t, c, b, "multipart", parts)
	mp := slices.Concat(parts...)
	objs := map[string][]byte{"big": big, "multipart": mp}

	type rng struct{ start, end int64 } // minio-go's SetRange arguments
	cases := []struct {
		key string
		r   rng
	}{
		{"big", rng{mpMiB - 3, mpMiB + 3}},
		{"big", rng{2*mpMiB - 1, 3 * mpMiB}},
		{"big", rng{0, 0}},
		{"big", rng{0, -100}},
		{"big", rng{3 * mpMiB, 0}},
		{"big", rng{0, int64(len(big)) + 100}},
		{"multipart", rng{mpMinPart - 5, mpMinPart + 5}},
		{"multipart", rng{mpMinPart - 1, 2 * mpMinPart}},
		{"multipart", rng{2*mpMinPart + mpMiB - 2, 0}},
		{"multipart", rng{0, -(mpMiB + 200)}},
		{"multipart", rng{1, int64(len(mp)) - 2}},
	}
	want := func(data []byte, r rng) []byte {
		n := int64(len(data))
		switch {
		case r.start == 0 && r.end < 0:
			return data[max(0, n+r.end):]
		case r.start > 0 && r.end == 0:
			return data[r.start:]
		default:
			return data[r.start:min(n, r.end+1)]
		}
	}
	t.Run("group", func(t *testing.T) {
		for _, combo := range minioCombos {
			t.Run("minio/"+combo.name, func(t *testing.T) {
				t.Parallel()
				mc := newMinio(t, s, u.cred(), combo)
				for _, tc := range cases {
					var o minio.GetObjectOptions
					if err := o.SetRange(tc.r.start, tc.r.end); err != nil {
						t.Fatal(err)
					}
					obj, err := mc.GetObject(context.Background(), b, tc.key, o)
					if err != nil {
						t.Fatalf("GetObject %s %s: %v", tc.key, o.Header().Get("Range"), err)
					}
					got, err := io.ReadAll(obj)
					obj.Close()
					if err != nil {
						t.Fatalf("GetObject %s %s: reading: %v", tc.key, o.Header().Get("Range"), err)
					}
					if w := want(objs[tc.key], tc.r); !bytes.Equal(got, w) {
						t.Errorf("GetObject %s %s: %d bytes (MD5 %s), want %d (MD5 %s)", tc.key, o.Header().Get("Range"),
							len(got), s3MD5Hex(got), len(w), s3MD5Hex(w))
					}
				}
			})
		}
		t.Run("raw", func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				key, rng string
				status   int
				off, end int64 // the bytes expected with 206: [off, end]
			}{
				{"big", "bytes=0-1,5-9", 200, 0, 0},
				{"multipart", "bytes=0-0,-1", 200, 0, 0},
				{"big", "bytes=9999999-", 416, 0, 0},
				{"big", fmt.Sprintf("bytes=%d-", len(big)), 416, 0, 0},
				{"multipart", "bytes=9999999-", 206, 9999999, int64(len(mp)) - 1},
				{"multipart", "bytes=5242879-5242880", 206, 5242879, 5242880},
				{"multipart", fmt.Sprintf("bytes=%d-", len(mp)), 416, 0, 0},
			} {
				r := c.do(t, http.MethodGet, b, tc.key, "", hdr{"Range", tc.rng}, "")
				data := objs[tc.key]
				switch tc.status {
				case 416:
					expectS3Error(t, r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange")
				case 200:
					if r.StatusCode != 200 || !bytes.Equal(r.Body, data) || r.Header.Get("Content-Range") != "" {
						t.Errorf("%s Range %s: want the whole object with 200, got %d, %d bytes, Content-Range %q", tc.key, tc.rng,
							r.StatusCode, len(r.Body), r.Header.Get("Content-Range"))
					}
				case 206:
					cr := fmt.Sprintf("bytes %d-%d/%d", tc.off, tc.end, len(data))
					if r.StatusCode != 206 || !bytes.Equal(r.Body, data[tc.off:tc.end+1]) || r.Header.Get("Content-Range") != cr {
						t.Errorf("%s Range %s: want 206 %s, got %d, %d bytes, Content-Range %q", tc.key, tc.rng, cr,
							r.StatusCode, len(r.Body), r.Header.Get("Content-Range"))
					}
				}
			}
		})
		t.Run("overrides", func(t *testing.T) {
			t.Parallel()
			c.put(t, b, "plain.txt", "override me", "Content-Type", "text/plain", "Cache-Control", "max-age=1")
			overrides := map[string]string{
				"response-content-type":        "application/x-overridden",
				"response-content-language":    "fr-CA",
				"response-expires":             "Thu, 01 Dec 2033 16:00:00 GMT",
				"response-cache-control":       "no-cache, no-store",
				"response-content-disposition": `attachment; filename="a b.txt"`,
				"response-content-encoding":    "identity",
			}
			q := url.Values{}
			for k, v := range overrides {
				q.Set(k, v)
			}
			for _, sign := range []s3SigVer{s3V2, s3V4} {
				for _, host := range []bool{false, true} {
					rc := s3c{s: s, cred: u.cred(), sign: sign, host: host}
					for _, method := range []string{http.MethodGet, http.MethodHead} {
						r := rc.must(t, http.StatusOK, method, b, "plain.txt", q.Encode(), nil, "")
						for k, v := range overrides {
							name := http.CanonicalHeaderKey(strings.TrimPrefix(k, "response-"))
							if got := r.Header.Get(name); got != v {
								t.Errorf("%s %s with %s: header %s = %q, want %q", rc.name(), method, k, name, got, v)
							}
						}
						if method == http.MethodGet && string(r.Body) != "override me" {
							t.Errorf("%s GET with overrides: body %q", rc.name(), r.Body)
						}
					}
					// With a range: 206 and the overrides.
					r := rc.do(t, http.MethodGet, b, "plain.txt", "response-content-type=text%2Fx-part", hdr{"Range", "bytes=0-7"}, "")
					if r.StatusCode != http.StatusPartialContent || string(r.Body) != "override" || r.Header.Get("Content-Type") != "text/x-part" {
						t.Errorf("%s ranged GET with an override:\n%s", rc.name(), r)
					}
				}
			}
			// The stored headers are unchanged.
			r := c.must(t, http.StatusOK, http.MethodGet, b, "plain.txt", "", nil, "")
			if r.Header.Get("Content-Type") != "text/plain" || r.Header.Get("Cache-Control") != "max-age=1" || r.Header.Get("Content-Language") != "" {
				t.Errorf("GET without overrides:\n%s", r)
			}
		})
	})
}

// TestS3Unimplemented checks that the S3 features the server does not offer answer 501
// NotImplemented with an S3 error document, whatever the signature, rather than being
// taken for plain object or bucket requests.
func TestS3Unimplemented(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "unimplemented@example.com", "Unimplemented")
	owner := s3c{s: s, cred: u.cred(), sign: s3V4}
	owner.mkBucket(t, "unimpl")
	owner.put(t, "unimpl", "obj", "an object")
	type req struct {
		method, key, query, body string
	}
	cases := []req{
		{http.MethodGet, "", "website", ""},
		{http.MethodPut, "", "website", `<WebsiteConfiguration><IndexDocument><Suffix>index.html</Suffix></IndexDocument></WebsiteConfiguration>`},
		{http.MethodDelete, "", "website", ""},
		{http.MethodPut, "", "versioning", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`},
		{http.MethodGet, "obj", "torrent", ""},
	}
	for _, sign := range []s3SigVer{s3V2, s3V4} {
		for _, host := range []bool{false, true} {
			c := s3c{s: s, cred: u.cred(), sign: sign, host: host}
			for _, q := range cases {
				r := c.do(t, q.method, "unimpl", q.key, q.query, nil, q.body)
				t.Run(fmt.Sprintf("%s-%s %s /unimpl/%s?%s", sign, map[bool]string{false: "path", true: "host"}[host], q.method, q.key, q.query), func(t *testing.T) {
					expectS3Error(t, r, http.StatusNotImplemented, "NotImplemented")
				})
			}
		}
	}
	// The object and bucket are as they were.
	if r := owner.must(t, http.StatusOK, http.MethodGet, "unimpl", "obj", "", nil, ""); string(r.Body) != "an object" {
		t.Errorf("object after the refused requests: %q", r.Body)
	}
}
