package main

// Bucket versioning end to end: boto3 (testdata/boto3/versioning.py), the AWS CLI and
// minio-go against a server with no flags, and a crash test: versions acknowledged
// before a SIGKILL are listed after the restart, and no delete marker or version is
// ever half-written (`cairn check` verifies the versions tables on the stopped store).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestS3VersioningBoto3 runs testdata/boto3/versioning.py against a server with no
// flags.
func TestS3VersioningBoto3(t *testing.T) {
	t.Parallel()
	runBoto3OnNewServer(t, "versioning.py", "boto3-versions", "PASS boto3 versioning")
}

// runBoto3OnNewServer runs testdata/boto3/script (runBoto3Script) against a new
// server with no flags as a new user, with bucket as CAIRN_S3_BUCKET; its output must
// end with pass.
func runBoto3OnNewServer(t *testing.T, script, bucket, pass string) {
	t.Helper()
	py := boto3Python(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, bucket+"@example.com", "Boto3 "+bucket)
	out := runBoto3Script(t, py, s, u, script, bucket, pass)
	t.Logf("%s %s: %d checks passed", py, script, strings.Count(out, "\nok ")+1)
}

// TestS3VersioningAwscli: the AWS CLI enables versioning, keeps two versions of a key,
// lists them, reads the older one and deletes it by id.
func TestS3VersioningAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-versions@example.com", "Awscli Versions")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-versions"
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r.run(t, "s3api", "create-bucket", "--bucket", b)
	r.run(t, "s3api", "put-bucket-versioning", "--bucket", b, "--versioning-configuration", "Status=Enabled")
	var st struct{ Status string }
	r.runJSON(t, &st, "s3api", "get-bucket-versioning", "--bucket", b)
	if st.Status != "Enabled" {
		t.Fatalf("get-bucket-versioning: %+v", st)
	}
	var p1, p2 struct{ VersionId string }
	r.runJSON(t, &p1, "s3api", "put-object", "--bucket", b, "--key", "k", "--body", file("one", "one"))
	r.runJSON(t, &p2, "s3api", "put-object", "--bucket", b, "--key", "k", "--body", file("two", "two"))
	if p1.VersionId == "" || p2.VersionId == "" || p1.VersionId == p2.VersionId {
		t.Fatalf("put-object version ids %q %q", p1.VersionId, p2.VersionId)
	}
	var l struct {
		Versions []struct {
			Key, VersionId string
			IsLatest       bool
		}
	}
	r.runJSON(t, &l, "s3api", "list-object-versions", "--bucket", b)
	if len(l.Versions) != 2 || l.Versions[0].VersionId != p2.VersionId || !l.Versions[0].IsLatest || l.Versions[1].VersionId != p1.VersionId {
		t.Fatalf("list-object-versions: %+v", l)
	}
	out := filepath.Join(dir, "out")
	r.run(t, "s3api", "get-object", "--bucket", b, "--key", "k", "--version-id", p1.VersionId, out)
	if got, _ := os.ReadFile(out); string(got) != "one" {
		t.Fatalf("get-object of the older version: %q", got)
	}
	r.run(t, "s3api", "delete-object", "--bucket", b, "--key", "k", "--version-id", p2.VersionId)
	r.run(t, "s3api", "get-object", "--bucket", b, "--key", "k", out)
	if got, _ := os.ReadFile(out); string(got) != "one" {
		t.Fatalf("get-object after deleting the newest version: %q", got)
	}
}

// TestS3VersioningMinio: minio-go's versioning calls (V4, host style, and V2, path
// style).
func TestS3VersioningMinio(t *testing.T) {
	t.Parallel()
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "minio-versions@example.com", "Minio Versions")
	ctx := context.Background()
	for _, combo := range []minioCombo{{"v2-path", false, false}, {"v4-host", true, true}} {
		t.Run(combo.name, func(t *testing.T) {
			mc := newMinio(t, s, u.cred(), combo)
			b := "minio-versions-" + combo.name
			if err := mc.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := mc.EnableVersioning(ctx, b); err != nil {
				t.Fatal(err)
			}
			if cfg, err := mc.GetBucketVersioning(ctx, b); err != nil || !cfg.Enabled() {
				t.Fatalf("versioning: %+v %v", cfg, err)
			}
			var ids []string
			for _, body := range []string{"one", "two"} {
				info, err := mc.PutObject(ctx, b, "k", strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
				if err != nil || info.VersionID == "" {
					t.Fatalf("put: %+v %v", info, err)
				}
				ids = append(ids, info.VersionID)
			}
			if err := mc.RemoveObject(ctx, b, "k", minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err := mc.StatObject(ctx, b, "k", minio.StatObjectOptions{})
			if er := minio.ToErrorResponse(err); er.StatusCode != 404 {
				t.Fatalf("stat behind a marker: %v", err)
			}
			var got []string
			for oi := range mc.ListObjects(ctx, b, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
				if oi.Err != nil {
					t.Fatal(oi.Err)
				}
				got = append(got, fmt.Sprintf("%s latest=%v marker=%v", oi.VersionID, oi.IsLatest, oi.IsDeleteMarker))
			}
			if len(got) != 3 || !strings.HasSuffix(got[0], "latest=true marker=true") || got[1] != ids[1]+" latest=false marker=false" ||
				got[2] != ids[0]+" latest=false marker=false" {
				t.Fatalf("versions: %v", got)
			}
			o, err := mc.GetObject(ctx, b, "k", minio.GetObjectOptions{VersionID: ids[0]})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(o); err != nil || buf.String() != "one" {
				t.Fatalf("get the first version: %q %v", buf.String(), err)
			}
			o.Close()
			for _, id := range ids {
				if err := mc.RemoveObject(ctx, b, "k", minio.RemoveObjectOptions{VersionID: id}); err != nil {
					t.Fatal(err)
				}
			}
			if err := mc.RemoveBucket(ctx, b); err == nil || minio.ToErrorResponse(err).Code != "BucketNotEmpty" {
				t.Fatalf("remove a bucket with a marker left: %v", err)
			}
		})
	}
}

// TestS3VersioningCrash: writers PUT and DELETE keys of a versioned bucket while the
// server is killed (SIGKILL) at several delays. After each restart every version whose
// PUT was acknowledged is listed and reads back whole, and `cairn check` on the
// stopped store finds the versions tables consistent: no half-written delete marker,
// the current record always the newest version that is not a marker, no data lost or
// leaked.
func TestS3VersioningCrash(t *testing.T) {
	t.Parallel()
	s := startS3Process(t)
	u := s3CreateUser(t, s, "versions-crash@example.com", "Versions Crash")
	c := s3c{s: s, cred: u.cred(), sign: s3V2}
	const b = "versions-crash"
	c.mkBucket(t, b)
	c.must(t, 200, "PUT", b, "", "versioning", nil, `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)
	acked := map[string]string{} // version id → body
	for round, delay := range []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		mc := newMinio(t, s, u.cred(), minioCombo{"v4-path", true, false})
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex // guards acked
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					key := fmt.Sprintf("k%d", i%3)
					if i%4 == 3 {
						_ = mc.RemoveObject(ctx, b, key, minio.RemoveObjectOptions{})
						continue
					}
					body := fmt.Sprintf("round %d writer %d put %d %s", round, w, i, strings.Repeat("x", (i%5)*300000))
					info, err := mc.PutObject(ctx, b, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
					if err != nil {
						return // killed
					}
					mu.Lock()
					acked[info.VersionID] = body
					mu.Unlock()
				}
			}()
		}
		time.Sleep(delay)
		s.Kill()
		cancel()
		wg.Wait()
		s.Restart()
		mc = newMinio(t, s, u.cred(), minioCombo{"v4-path", true, false})
		listed := map[string]string{} // version id → key
		for oi := range mc.ListObjects(context.Background(), b, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
			if oi.Err != nil {
				t.Fatal(oi.Err)
			}
			listed[oi.VersionID] = oi.Key
		}
		for id, body := range acked {
			key, ok := listed[id]
			if !ok {
				t.Fatalf("round %d (kill after %v): acknowledged version %s is not listed", round, delay, id)
			}
			o, err := mc.GetObject(context.Background(), b, key, minio.GetObjectOptions{VersionID: id})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(o)
			o.Close()
			if err != nil || buf.String() != body {
				t.Fatalf("round %d: version %s of %s reads %d bytes (%v), want %d", round, id, key, buf.Len(), err, len(body))
			}
		}
		t.Logf("round %d (kill after %v): %d versions listed, %d acknowledged", round, delay, len(listed), len(acked))
	}
	waitS3Clean(t, s) // cairn check: the versions tables are consistent
}
