package main

// minio-go's CORS calls and PresignedPostPolicy against Cairn, under V2 and V4, path
// and host style.

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/cors"
)

// TestS3BrowserMinio: SetBucketCors/GetBucketCors round-trip the rules and a
// preflight is answered from them; PresignedPostPolicy's form (key, content type,
// metadata, size range, success status), posted with Go's mime/multipart, stores the
// object, and the same form over its size range is EntityTooLarge and stores nothing.
func TestS3BrowserMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "browser-minio@example.com", "Browser Minio")
	raw := s3c{s: s, cred: u.cred(), sign: s3V4}
	ctx := context.Background()
	hc := &http.Client{Transport: s3Transport(s), Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(hc.CloseIdleConnections)
	for _, combo := range minioCombos {
		t.Run(combo.name, func(t *testing.T) {
			mc := newMinio(t, s, u.cred(), combo)
			bkt := "mpost-" + combo.name
			raw.mkBucket(t, bkt)
			rules := cors.NewConfig([]cors.Rule{{ID: "app", AllowedOrigin: []string{"https://app.example"},
				AllowedMethod: []string{"GET", "PUT"}, AllowedHeader: []string{"*"}, ExposeHeader: []string{"ETag"}, MaxAgeSeconds: 60}})
			if err := mc.SetBucketCors(ctx, bkt, rules); err != nil {
				t.Fatalf("SetBucketCors: %v", err)
			}
			got, err := mc.GetBucketCors(ctx, bkt)
			if err != nil || got == nil || !reflect.DeepEqual(got.CORSRules, rules.CORSRules) {
				t.Fatalf("GetBucketCors: %+v, %v", got, err)
			}
			pre := raw.anon().must(t, http.StatusOK, http.MethodOptions, bkt, "k", "",
				hdr{"Origin", "https://app.example", "Access-Control-Request-Method", "PUT"}, "")
			if pre.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || pre.Header.Get("Access-Control-Max-Age") != "60" {
				t.Errorf("preflight:\n%s", pre)
			}

			p := minio.NewPostPolicy()
			for _, err := range []error{p.SetBucket(bkt), p.SetKey("posted.txt"), p.SetExpires(time.Now().Add(10 * time.Minute)),
				p.SetContentType("text/plain"), p.SetContentLengthRange(1, 64), p.SetUserMetadata("color", "teal"),
				p.SetSuccessStatusAction("201")} {
				if err != nil {
					t.Fatal(err)
				}
			}
			u, form, err := mc.PresignedPostPolicy(ctx, p)
			if err != nil {
				t.Fatalf("PresignedPostPolicy: %v", err)
			}
			post := func(data string) *http.Response {
				t.Helper()
				var b bytes.Buffer
				w := multipart.NewWriter(&b)
				for k, v := range form {
					_ = w.WriteField(k, v)
				}
				f, _ := w.CreateFormFile("file", "posted.txt")
				_, _ = io.WriteString(f, data)
				_ = w.Close()
				r, err := hc.Post(u.String(), w.FormDataContentType(), &b)
				if err != nil {
					t.Fatalf("POST %s: %v", u, err)
				}
				return r
			}
			r := post("posted by minio-go's form")
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusCreated || !strings.Contains(string(body), "<Key>posted.txt</Key>") {
				t.Fatalf("POST: %d\n%s", r.StatusCode, body)
			}
			info, err := mc.StatObject(ctx, bkt, "posted.txt", minio.StatObjectOptions{})
			if err != nil || info.Size != int64(len("posted by minio-go's form")) || info.ContentType != "text/plain" ||
				info.UserMetadata["Color"] != "teal" {
				t.Fatalf("StatObject: %+v, %v", info, err)
			}
			r = post(strings.Repeat("x", 65))
			body, _ = io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "EntityTooLarge") {
				t.Fatalf("POST over the range: %d\n%s", r.StatusCode, body)
			}
			if err := mc.RemoveObject(ctx, bkt, "posted.txt", minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			r = post(strings.Repeat("x", 65))
			r.Body.Close()
			if _, err := mc.StatObject(ctx, bkt, "posted.txt", minio.StatObjectOptions{}); err == nil {
				t.Fatal("a refused POST stored the object")
			}
		})
	}
}
