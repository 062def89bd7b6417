package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/sig"
)

// The s3 phase's versioning part (issue 20 §1):
//
//   - PUT and GET of small objects (--s3-small) in a versioned bucket against the same
//     in the phase's unversioned bucket, on the same Cairn, in alternating slices
//     (target: versioned ≥ 0.8× unversioned);
//   - the rate of listing every version of a bucket holding --s3-versions versions
//     (10 per key, written in-process beforehand) through GET ?versions, 1000 entries a
//     page, each page's XML read whole by the client (target: ≥ 100 000 versions/s).

// The versioning part's buckets: one whose PUTs and GETs are measured, one whose
// versions are listed.
const (
	s3VersionedBucket = "bench-s3-versioned"
	s3ListBucket      = "bench-s3-versions"
)

// s3VersionsPerKey is how many versions each key of the listed bucket has.
const s3VersionsPerKey = 10

// s3VersionedResult is the versioning part's section of the report.
type s3VersionedResult struct {
	Cases []s3VersionedCase `json:"cases"`
	// Versions is how many versions were listed (the listed bucket's), in Pages pages
	// of Seconds; Rate is Versions/Seconds. PopulateS is how long writing them took.
	Versions  int     `json:"versions"`
	Pages     int     `json:"pages"`
	Seconds   float64 `json:"seconds"`
	Rate      float64 `json:"versions_per_s"`
	PopulateS float64 `json:"populate_s"`
}

// s3VersionedCase is one operation in the versioned bucket against the unversioned one.
type s3VersionedCase struct {
	Op             string  `json:"op"`
	Size           int64   `json:"size"`
	Conns          int     `json:"conns"`
	VersionedOps   float64 `json:"versioned_ops"`
	UnversionedOps float64 `json:"unversioned_ops"`
	Ratio          float64 `json:"ratio"` // versioned / unversioned
}

// s3Versioned runs the versioning part; the unversioned side's key set (prefix, in
// s3Bucket) was populated by the small-object comparison.
func (b *bench) s3Versioned(ctx context.Context, s *s3Servers, date *httpDate) error {
	r := &s3VersionedResult{}
	b.s3.Versioned = r
	svc := s.srv.S3()
	u, err := svc.UserByKey(ctx, s.cred.keyID)
	if err != nil {
		return fmt.Errorf("s3 versioning: %w", err)
	}
	who := s3.Requester{ID: u.ID, DisplayName: u.DisplayName}
	acl, err := s3.CannedACL("", u.Owner(), u.Owner())
	if err != nil {
		return err
	}
	for _, name := range []string{s3VersionedBucket, s3ListBucket} {
		if _, err := svc.CreateBucket(ctx, who, name, acl); err != nil {
			return fmt.Errorf("s3 versioning: create %s: %w", name, err)
		}
		if err := svc.SetBucketVersioning(ctx, who, name, s3.VersioningEnabled); err != nil {
			return fmt.Errorf("s3 versioning: %w", err)
		}
	}
	size := int(b.o.S3Small)
	w := s3Workload{prefix: "o" + fmtSize(int64(size)) + "-", keys: s3SmallKeys, size: size,
		pool: makeValue(size + min(size, 64<<10)), cred: s.cred, date: date}
	vw := w
	vw.bucket = s3VersionedBucket
	vw.method, vw.sequential = http.MethodPut, true
	if _, err := runToEnd(ctx, Builtin{Addr: s.cairnAddr, Conns: 8, Build: vw.raw(s.cairnAddr), Total: int64(vw.keys), Seed: 1}); err != nil {
		return err
	}
	vw.sequential = false
	for _, method := range []string{http.MethodPut, http.MethodGet} {
		if err := b.s3Settle(ctx, s); err != nil {
			return err
		}
		w.method, vw.method = method, method
		name := "s3-versioned-" + strings.ToLower(method) + "-" + fmtSize(int64(size))
		plain, versioned, err := b.s3Pair(ctx,
			side{name: name + "-off", server: "cairn", addr: s.cairnAddr, build: w.raw(s.cairnAddr), conns: b.o.S3SmallConns},
			side{name: name + "-on", server: "cairn", addr: s.cairnAddr, build: vw.raw(s.cairnAddr), conns: b.o.S3SmallConns})
		if err != nil {
			return err
		}
		c := s3VersionedCase{Op: method, Size: int64(size), Conns: b.o.S3SmallConns, VersionedOps: versioned.RPS, UnversionedOps: plain.RPS}
		if plain.RPS > 0 {
			c.Ratio = versioned.RPS / plain.RPS
		}
		r.Cases = append(r.Cases, c)
	}
	if b.o.S3Versions <= 0 {
		return nil
	}
	start := time.Now()
	if err := s3PopulateVersions(ctx, svc, who, b.o.S3Versions); err != nil {
		return err
	}
	r.PopulateS = time.Since(start).Seconds()
	b.logf("s3: %d versions written in-process in %.1fs", b.o.S3Versions, r.PopulateS)
	if err := b.s3Settle(ctx, s); err != nil {
		return err
	}
	start = time.Now()
	if r.Versions, r.Pages, err = s3ListAllVersions(ctx, s.cairnAddr, s.cred, date); err != nil {
		return err
	}
	r.Seconds = time.Since(start).Seconds()
	if r.Seconds > 0 {
		r.Rate = float64(r.Versions) / r.Seconds
	}
	if r.Versions != b.o.S3Versions {
		return fmt.Errorf("s3 versioning: listed %d versions, %d written", r.Versions, b.o.S3Versions)
	}
	return nil
}

// s3PopulateVersions writes n empty versions into s3ListBucket, s3VersionsPerKey per
// key, from 32 goroutines.
func s3PopulateVersions(ctx context.Context, svc *s3.Service, who s3.Requester, n int) error {
	return parallelDo(ctx, 32, n, func(i int) error {
		key := s3Key("v-", i/s3VersionsPerKey)
		if _, err := svc.PutObject(ctx, who, s3ListBucket, key, s3.PutInput{Body: bytes.NewReader(nil)}); err != nil {
			return fmt.Errorf("s3 versioning: populate %s: %w", key, err)
		}
		return nil
	})
}

// s3ListAllVersions lists every version of s3ListBucket through GET ?versions (V2
// signed, max-keys 1000), reading each page whole, and returns how many Version
// entries it saw and how many pages.
func s3ListAllVersions(ctx context.Context, addr string, cred s3Cred, date *httpDate) (versions, pages int, err error) {
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	keyMarker, idMarker := "", ""
	for {
		q := "versions&max-keys=1000"
		if keyMarker != "" {
			q += "&key-marker=" + url.QueryEscape(keyMarker) + "&version-id-marker=" + url.QueryEscape(idMarker)
		}
		path := "/" + s3ListBucket
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path+"?"+q, nil)
		if err != nil {
			return versions, pages, err
		}
		d := date.now()
		req.Header.Set("Date", d)
		resource := sig.CanonicalResourceV2(&sig.Request{RawPath: path, RawQuery: q})
		req.Header.Set("Authorization", cred.signV2(http.MethodGet, resource, d))
		resp, err := client.Do(req)
		if err != nil {
			return versions, pages, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return versions, pages, err
		}
		if resp.StatusCode != http.StatusOK {
			return versions, pages, fmt.Errorf("s3 versioning: GET ?versions: %s: %s", resp.Status, body)
		}
		pages++
		versions += bytes.Count(body, []byte("<Version>"))
		if !bytes.Contains(body, []byte("<IsTruncated>true</IsTruncated>")) {
			return versions, pages, nil
		}
		keyMarker, idMarker = xmlText(body, "NextKeyMarker"), xmlText(body, "NextVersionIdMarker")
		if keyMarker == "" {
			return versions, pages, fmt.Errorf("s3 versioning: a truncated page without NextKeyMarker")
		}
	}
}

// xmlText returns the text of the first <name> element of doc (not unescaped: the
// benchmark's keys and ids need none).
func xmlText(doc []byte, name string) string {
	_, rest, ok := bytes.Cut(doc, []byte("<"+name+">"))
	if !ok {
		return ""
	}
	text, _, _ := bytes.Cut(rest, []byte("</"+name+">"))
	return string(text)
}

// reportS3Versioned prints the versioning part.
func reportS3Versioned(w io.Writer, r *s3VersionedResult) error {
	if r == nil {
		return nil
	}
	fmt.Fprintf(w, "    versioning: the same load in a versioned bucket (on) and in the unversioned one (off), same Cairn, alternating slices:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\tconns\ton ops/s\toff ops/s\ton/off\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.0f\t%.2f\t\n", c.Op, fmtSize(c.Size), c.Conns, c.VersionedOps, c.UnversionedOps, c.Ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Versions > 0 {
		fmt.Fprintf(w, "    GET ?versions: %d versions (%d per key, written in %.1fs) listed in %d pages of 1000 in %.2fs: %.0f versions/s\n",
			r.Versions, s3VersionsPerKey, r.PopulateS, r.Pages, r.Seconds, r.Rate)
	}
	return nil
}
