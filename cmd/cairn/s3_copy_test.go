package main

// End-to-end tests of server-side copy (PUT with x-amz-copy-source) on the object-storage
// interface: minio-go's CopyObject in the four signature × addressing combinations
// (metadata directives COPY and REPLACE, across buckets, conditional copies, copying an
// object onto itself, absent sources, permissions), the raw CopyObjectResult document and
// the forms of the copy-source header, and copies of multi-chunk and multipart objects.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// cpRead reads a whole object through minio-go.
func cpRead(t testing.TB, c *minio.Client, bucket, key string) []byte {
	t.Helper()
	o, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("GetObject %s/%s: reading: %v", bucket, key, err)
	}
	return b
}

// cpStat stats an object through minio-go.
func cpStat(t testing.TB, c *minio.Client, bucket, key string) minio.ObjectInfo {
	t.Helper()
	st, err := c.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("StatObject %s/%s: %v", bucket, key, err)
	}
	return st
}

// cpSameMeta compares user metadata as minio-go reports it.
func cpSameMeta(got minio.StringMap, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestS3CopyMinio copies objects with minio-go's CopyObject.
func TestS3CopyMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	alice := s3CreateUser(t, s, "cp-alice@example.com", "Copy Alice")
	bob := s3CreateUser(t, s, "cp-bob@example.com", "Copy Bob")
	t.Run("group", func(t *testing.T) {
		for _, combo := range minioCombos {
			t.Run(combo.name, func(t *testing.T) {
				t.Parallel()
				cpMinio(t, s, alice, bob, combo)
			})
		}
	})
	waitS3Clean(t, s)
}

func cpMinio(t *testing.T, s *child, alice, bob s3User, combo minioCombo) {
	ctx := context.Background()
	a := newMinio(t, s, alice.cred(), combo)
	bb := newMinio(t, s, bob.cred(), combo)
	src, dst, bobs := "cps-"+combo.name, "cpd-"+combo.name, "cpb-"+combo.name
	for _, mk := range []struct {
		c *minio.Client
		b string
	}{{a, src}, {a, dst}, {bb, bobs}} {
		if err := mk.c.MakeBucket(ctx, mk.b, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
			t.Fatalf("MakeBucket %s: %v", mk.b, err)
		}
	}
	data := []byte("the source object of " + combo.name)
	meta := map[string]string{"Color": "red", "Owner-Note": "from alice"}
	const key = "dir/source object.txt"
	if _, err := a.PutObject(ctx, src, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "text/x-source", UserMetadata: meta}); err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	srcInfo := cpStat(t, a, src, key)
	srcETag := s3MD5Hex(data)
	cp := func(c *minio.Client, dst minio.CopyDestOptions, src minio.CopySrcOptions) (minio.UploadInfo, error) {
		return c.CopyObject(ctx, dst, src)
	}
	srcOpts := minio.CopySrcOptions{Bucket: src, Object: key}

	t.Run("COPY across buckets", func(t *testing.T) {
		info, err := cp(a, minio.CopyDestOptions{Bucket: dst, Object: "copied/ü one.txt"}, srcOpts)
		if err != nil {
			t.Fatalf("CopyObject: %v", err)
		}
		if info.ETag != srcETag || info.LastModified.IsZero() || time.Since(info.LastModified) > time.Minute {
			t.Errorf("CopyObject: ETag %q LastModified %v, want %q and now", info.ETag, info.LastModified, srcETag)
		}
		if got := cpRead(t, a, dst, "copied/ü one.txt"); !bytes.Equal(got, data) {
			t.Errorf("copy reads %q, want %q", got, data)
		}
		st := cpStat(t, a, dst, "copied/ü one.txt")
		if st.ContentType != "text/x-source" || !cpSameMeta(st.UserMetadata, meta) || st.ETag != srcETag {
			t.Errorf("copy: type %q meta %v ETag %q; want the source's %q %v %q", st.ContentType, st.UserMetadata, st.ETag,
				"text/x-source", meta, srcETag)
		}
	})

	t.Run("REPLACE", func(t *testing.T) {
		newMeta := map[string]string{"Shape": "round"}
		if _, err := cp(a, minio.CopyDestOptions{Bucket: dst, Object: "replaced", ReplaceMetadata: true,
			UserMetadata: newMeta, ContentType: "text/x-replaced"}, srcOpts); err != nil {
			t.Fatalf("CopyObject REPLACE: %v", err)
		}
		st := cpStat(t, a, dst, "replaced")
		if st.ContentType != "text/x-replaced" || !cpSameMeta(st.UserMetadata, newMeta) || st.ETag != srcETag {
			t.Errorf("REPLACE copy: type %q meta %v ETag %q", st.ContentType, st.UserMetadata, st.ETag)
		}
		if got := cpRead(t, a, dst, "replaced"); !bytes.Equal(got, data) {
			t.Errorf("REPLACE copy reads %q", got)
		}
	})

	t.Run("onto itself", func(t *testing.T) {
		self := minio.CopyDestOptions{Bucket: src, Object: key}
		if _, err := cp(a, self, srcOpts); minioCode(err) != "InvalidRequest" {
			t.Errorf("self-copy without REPLACE: error %v (code %q), want InvalidRequest", err, minioCode(err))
		}
		// Nothing changed.
		if st := cpStat(t, a, src, key); !cpSameMeta(st.UserMetadata, meta) || !st.LastModified.Equal(srcInfo.LastModified) {
			t.Errorf("after a refused self-copy: meta %v LastModified %v", st.UserMetadata, st.LastModified)
		}
		// With REPLACE it updates the metadata in place.
		self.ReplaceMetadata, self.UserMetadata, self.ContentType = true, map[string]string{"Color": "green"}, "text/x-source"
		if _, err := cp(a, self, srcOpts); err != nil {
			t.Fatalf("self-copy with REPLACE: %v", err)
		}
		if st := cpStat(t, a, src, key); st.UserMetadata["Color"] != "green" || st.ETag != srcETag {
			t.Errorf("after a self-copy with REPLACE: meta %v ETag %q", st.UserMetadata, st.ETag)
		}
		if got := cpRead(t, a, src, key); !bytes.Equal(got, data) {
			t.Errorf("after a self-copy with REPLACE: %q", got)
		}
	})

	t.Run("conditions", func(t *testing.T) {
		lm := cpStat(t, a, src, key).LastModified
		past, future := lm.Add(-time.Hour), lm.Add(time.Hour)
		for _, tc := range []struct {
			name string
			src  minio.CopySrcOptions
			ok   bool
		}{
			{"if-match same", minio.CopySrcOptions{MatchETag: srcETag}, true},
			{"if-match other", minio.CopySrcOptions{MatchETag: "0123456789abcdef0123456789abcdef"}, false},
			{"if-none-match same", minio.CopySrcOptions{NoMatchETag: srcETag}, false},
			{"if-none-match other", minio.CopySrcOptions{NoMatchETag: "0123456789abcdef0123456789abcdef"}, true},
			{"if-modified-since past", minio.CopySrcOptions{MatchModifiedSince: past}, true},
			{"if-modified-since future", minio.CopySrcOptions{MatchModifiedSince: future}, false},
			{"if-unmodified-since past", minio.CopySrcOptions{MatchUnmodifiedSince: past}, false},
			{"if-unmodified-since future", minio.CopySrcOptions{MatchUnmodifiedSince: future}, true},
		} {
			tc.src.Bucket, tc.src.Object = src, key
			dkey := "cond/" + strings.ReplaceAll(tc.name, " ", "-")
			_, err := cp(a, minio.CopyDestOptions{Bucket: dst, Object: dkey}, tc.src)
			switch {
			case tc.ok && err != nil:
				t.Errorf("%s: %v", tc.name, err)
			case !tc.ok && minioCode(err) != "PreconditionFailed":
				t.Errorf("%s: error %v (code %q), want PreconditionFailed", tc.name, err, minioCode(err))
			case !tc.ok:
				if r := minio.ToErrorResponse(err); r.StatusCode != http.StatusPreconditionFailed {
					t.Errorf("%s: status %d, want 412", tc.name, r.StatusCode)
				}
				if _, err := a.StatObject(ctx, dst, dkey, minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
					t.Errorf("%s: the refused copy exists (%v)", tc.name, err)
				}
			}
		}
	})

	t.Run("absent source", func(t *testing.T) {
		_, err := cp(a, minio.CopyDestOptions{Bucket: dst, Object: "x"}, minio.CopySrcOptions{Bucket: src, Object: "absent"})
		if minioCode(err) != "NoSuchKey" {
			t.Errorf("absent source key: %v (code %q), want NoSuchKey", err, minioCode(err))
		}
		_, err = cp(a, minio.CopyDestOptions{Bucket: dst, Object: "x"}, minio.CopySrcOptions{Bucket: "cp-absent-bucket", Object: key})
		if minioCode(err) != "NoSuchBucket" {
			t.Errorf("absent source bucket: %v (code %q), want NoSuchBucket", err, minioCode(err))
		}
		_, err = cp(a, minio.CopyDestOptions{Bucket: "cp-absent-bucket", Object: "x"}, srcOpts)
		if minioCode(err) != "NoSuchBucket" {
			t.Errorf("absent destination bucket: %v (code %q), want NoSuchBucket", err, minioCode(err))
		}
	})

	t.Run("permissions", func(t *testing.T) {
		// Bob may write his bucket but may not read Alice's private object.
		_, err := cp(bb, minio.CopyDestOptions{Bucket: bobs, Object: "stolen"}, srcOpts)
		if minioCode(err) != "AccessDenied" {
			t.Errorf("copy without READ on the source: %v (code %q), want AccessDenied", err, minioCode(err))
		}
		if _, err := bb.StatObject(ctx, bobs, "stolen", minio.StatObjectOptions{}); minioCode(err) != "NoSuchKey" {
			t.Errorf("the refused copy exists (%v)", err)
		}
		// Bob may read his own object but may not write into Alice's bucket.
		if _, err := bb.PutObject(ctx, bobs, "mine", strings.NewReader("bob's"), 5, minio.PutObjectOptions{}); err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		_, err = cp(bb, minio.CopyDestOptions{Bucket: dst, Object: "from-bob"}, minio.CopySrcOptions{Bucket: bobs, Object: "mine"})
		if minioCode(err) != "AccessDenied" {
			t.Errorf("copy without WRITE on the destination: %v (code %q), want AccessDenied", err, minioCode(err))
		}
	})
}

// TestS3CopyRaw checks the CopyObjectResult document, the forms of x-amz-copy-source,
// the copy's ACL, metadata directives and copies of large and multipart objects with raw
// signed requests.
func TestS3CopyRaw(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "cp-raw@example.com", "Copy Raw")
	t.Run("group", func(t *testing.T) {
		for _, sign := range []s3SigVer{s3V2, s3V4} {
			for _, host := range []bool{false, true} {
				name := sign.String() + "-path"
				if host {
					name = sign.String() + "-host"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					cpRaw(t, s3c{s: s, cred: u.cred(), sign: sign, host: host}, "cpr-"+name)
				})
			}
		}
		t.Run("large", func(t *testing.T) {
			t.Parallel()
			cpLarge(t, s3c{s: s, cred: u.cred(), sign: s3V4})
		})
	})
	waitS3Clean(t, s)
}

// cpResult requires a 200 CopyObjectResult with the quoted MD5 etag and a current
// LastModified, and returns it.
func cpResult(t testing.TB, r *resp, etag string) mpCopyResult {
	t.Helper()
	var res mpCopyResult
	mpXML(t, r, "CopyObjectResult", &res)
	if res.ETag != etag {
		t.Errorf("CopyObjectResult ETag %s, want %s", res.ETag, etag)
	}
	mpTime(t, "CopyObjectResult LastModified", res.LastModified)
	return res
}

func cpRaw(t *testing.T, c s3c, b string) {
	c.mkBucket(t, b)
	data := "raw copy source data"
	etag := `"` + s3MD5Hex([]byte(data)) + `"`
	c.put(t, b, "src key ü+.txt", data, "Content-Type", "text/x-raw", "x-amz-meta-tag", "one", "x-amz-acl", "public-read",
		"Content-Disposition", "inline")
	escaped := "/" + b + "/" + s3Escape("src key ü+.txt", true)

	// The copy-source forms: with and without the leading slash, percent-encoded with
	// upper- or lower-case hex digits.
	for i, source := range []string{escaped, strings.TrimPrefix(escaped, "/"), "/" + b + "/src%20key%20%c3%bc%2b.txt"} {
		key := "copy-" + string(rune('a'+i))
		res := cpResult(t, c.do(t, http.MethodPut, b, key, "", hdr{"x-amz-copy-source", source}, ""), etag)
		h := c.must(t, http.StatusOK, http.MethodHead, b, key, "", nil, "")
		if h.Header.Get("ETag") != etag || h.Header.Get("Content-Type") != "text/x-raw" || h.Header.Get("X-Amz-Meta-Tag") != "one" ||
			h.Header.Get("Content-Disposition") != "inline" {
			t.Errorf("copy from %q: HEAD\n%s", source, h)
		}
		lm, err := http.ParseTime(h.Header.Get("Last-Modified"))
		copied, err2 := time.Parse("2006-01-02T15:04:05.000Z", res.LastModified)
		if err != nil || err2 != nil || !lm.Equal(copied.Truncate(time.Second)) {
			t.Errorf("copy from %q: Last-Modified %q, CopyObjectResult LastModified %q", source, h.Header.Get("Last-Modified"),
				res.LastModified)
		}
		// The ACL is not copied: the copy is private unless the request says otherwise.
		expectS3Error(t, c.anon().do(t, http.MethodGet, b, key, "", nil, ""), http.StatusForbidden, "AccessDenied")
	}
	cpResult(t, c.do(t, http.MethodPut, b, "copy-public", "", hdr{"x-amz-copy-source", escaped, "x-amz-acl", "public-read"}, ""), etag)
	if r := c.anon().do(t, http.MethodGet, b, "copy-public", "", nil, ""); r.StatusCode != http.StatusOK || string(r.Body) != data {
		t.Errorf("anonymous GET of a public-read copy:\n%s", r)
	}

	// Metadata directives.
	cpResult(t, c.do(t, http.MethodPut, b, "copy-replace", "", hdr{"x-amz-copy-source", escaped,
		"x-amz-metadata-directive", "REPLACE", "Content-Type", "text/x-new", "x-amz-meta-other", "two"}, ""), etag)
	h := c.must(t, http.StatusOK, http.MethodHead, b, "copy-replace", "", nil, "")
	if h.Header.Get("Content-Type") != "text/x-new" || h.Header.Get("X-Amz-Meta-Other") != "two" || h.Header.Get("X-Amz-Meta-Tag") != "" ||
		h.Header.Get("Content-Disposition") != "" {
		t.Errorf("REPLACE copy: HEAD\n%s", h)
	}
	cpResult(t, c.do(t, http.MethodPut, b, "copy-copy", "", hdr{"x-amz-copy-source", escaped,
		"x-amz-metadata-directive", "COPY", "Content-Type", "text/x-ignored", "x-amz-meta-other", "ignored"}, ""), etag)
	h = c.must(t, http.StatusOK, http.MethodHead, b, "copy-copy", "", nil, "")
	if h.Header.Get("Content-Type") != "text/x-raw" || h.Header.Get("X-Amz-Meta-Tag") != "one" || h.Header.Get("X-Amz-Meta-Other") != "" {
		t.Errorf("COPY directive with new headers: HEAD\n%s", h)
	}
	r := c.do(t, http.MethodPut, b, "copy-bad", "", hdr{"x-amz-copy-source", escaped, "x-amz-metadata-directive", "MERGE"}, "")
	expectS3Error(t, r, http.StatusBadRequest, "InvalidArgument")

	// Onto itself: InvalidRequest without REPLACE, a metadata update with it.
	r = c.do(t, http.MethodPut, b, "src key ü+.txt", "", hdr{"x-amz-copy-source", escaped}, "")
	expectS3Error(t, r, http.StatusBadRequest, "InvalidRequest")
	cpResult(t, c.do(t, http.MethodPut, b, "src key ü+.txt", "", hdr{"x-amz-copy-source", escaped,
		"x-amz-metadata-directive", "REPLACE", "Content-Type", "text/x-raw", "x-amz-meta-tag", "updated"}, ""), etag)
	if h := c.must(t, http.StatusOK, http.MethodGet, b, "src key ü+.txt", "", nil, ""); h.Header.Get("X-Amz-Meta-Tag") != "updated" ||
		string(h.Body) != data {
		t.Errorf("after a self-copy with REPLACE:\n%s", h)
	}

	// Conditional copies: 412 PreconditionFailed, nothing written.
	for _, tc := range []struct {
		name string
		h    hdr
	}{
		{"if-match", hdr{"x-amz-copy-source-if-match", `"0123456789abcdef0123456789abcdef"`}},
		{"if-none-match", hdr{"x-amz-copy-source-if-none-match", etag}},
		{"if-modified-since", hdr{"x-amz-copy-source-if-modified-since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}},
		{"if-unmodified-since", hdr{"x-amz-copy-source-if-unmodified-since", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}},
	} {
		r := c.do(t, http.MethodPut, b, "cond-"+tc.name, "", append(hdr{"x-amz-copy-source", escaped}, tc.h...), "")
		expectS3Error(t, r, http.StatusPreconditionFailed, "PreconditionFailed")
		expectS3Error(t, c.do(t, http.MethodGet, b, "cond-"+tc.name, "", nil, ""), http.StatusNotFound, "NoSuchKey")
	}
	cpResult(t, c.do(t, http.MethodPut, b, "cond-ok", "", hdr{"x-amz-copy-source", escaped, "x-amz-copy-source-if-match", etag,
		"x-amz-copy-source-if-unmodified-since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, ""), etag)

	// Absent sources.
	expectS3Error(t, c.do(t, http.MethodPut, b, "x", "", hdr{"x-amz-copy-source", "/" + b + "/absent"}, ""), http.StatusNotFound, "NoSuchKey")
	expectS3Error(t, c.do(t, http.MethodPut, b, "x", "", hdr{"x-amz-copy-source", "/cp-no-such-bucket/k"}, ""), http.StatusNotFound, "NoSuchBucket")
}

// cpLarge copies a multi-chunk object and a multipart object, then changes and deletes
// the sources: the copies keep their own data.
func cpLarge(t *testing.T, c s3c) {
	const b = "cpr-large"
	c.mkBucket(t, b)
	big := randomBytes(3*mpMiB + 12345)
	c.put(t, b, "big", string(big), "Content-Type", "application/x-big")
	parts := [][]byte{randomBytes(mpMinPart), randomBytes(mpMiB + 77)}
	mpUpload(t, c, b, "multipart", parts, "Content-Type", "application/x-mp", "x-amz-meta-kind", "multipart")
	whole := slices.Concat(parts...)

	bigETag := `"` + s3MD5Hex(big) + `"`
	cpResult(t, c.do(t, http.MethodPut, b, "big-copy", "", hdr{"x-amz-copy-source", "/" + b + "/big"}, ""), bigETag)
	// A copy of a multipart object is a new single object: the ETag is its data's MD5.
	wholeETag := `"` + s3MD5Hex(whole) + `"`
	cpResult(t, c.do(t, http.MethodPut, b, "multipart-copy", "", hdr{"x-amz-copy-source", "/" + b + "/multipart"}, ""), wholeETag)

	// Overwrite one source and delete the other: the copies are unaffected.
	c.put(t, b, "big", "replaced")
	c.must(t, http.StatusNoContent, http.MethodDelete, b, "multipart", "", nil, "")
	r := mpGetObject(t, c, b, "big-copy", big, bigETag)
	if r.Header.Get("Content-Type") != "application/x-big" {
		t.Errorf("big copy: Content-Type %q", r.Header.Get("Content-Type"))
	}
	r = mpGetObject(t, c, b, "multipart-copy", whole, wholeETag)
	if r.Header.Get("Content-Type") != "application/x-mp" || r.Header.Get("X-Amz-Meta-Kind") != "multipart" {
		t.Errorf("multipart copy: Content-Type %q meta %q", r.Header.Get("Content-Type"), r.Header.Get("X-Amz-Meta-Kind"))
	}
	// A range of the copy crosses the old part boundary.
	r = c.do(t, http.MethodGet, b, "multipart-copy", "", hdr{"Range", "bytes=5242870-5242889"}, "")
	if r.StatusCode != http.StatusPartialContent || !bytes.Equal(r.Body, whole[5242870:5242890]) {
		t.Errorf("range of the multipart copy:\n%s", r)
	}
}
