package main

// End-to-end tests of S3 bucket lifecycle through boto3 (testdata/boto3/lifecycle.py),
// the AWS CLI and minio-go, with the worker running second-scale rules on the real binary
// (--lifecycle-day=1s).

import (
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/lifecycle"
)

// TestS3LifecycleBoto3 runs testdata/boto3/lifecycle.py (configuration round trip and
// errors, Expiration on PUT and HEAD, and the worker: an object under a rule's prefix
// or with its tag disappears, others stay, an incomplete upload under an abort rule is
// aborted) against the real binary with a one-second lifecycle day.
func TestS3LifecycleBoto3(t *testing.T) {
	t.Parallel()
	py := boto3Python(t) // skips without boto3, before a server is started
	s := startServerOpts(t, serverOpts{process: true, args: []string{"--lifecycle-day", "1s", "--lifecycle-interval", "250ms"}})
	u := s3CreateUser(t, s, "boto3-lifecycle@example.com", "Boto3 Lifecycle")
	runBoto3Script(t, py, s, u, "lifecycle.py", "boto3-lifecycle", "PASS lifecycle")
	if st := statsOf(t, s); st["s3_lifecycle_objects_expired_total"] != float64(2) || st["s3_lifecycle_uploads_aborted_total"] != float64(1) {
		t.Errorf("/stats: %v expired, %v aborted; want 2 and 1", st["s3_lifecycle_objects_expired_total"], st["s3_lifecycle_uploads_aborted_total"])
	}
}

// awscliLifecycle is what `aws s3api get-bucket-lifecycle-configuration` prints that
// this test reads.
type awscliLifecycle struct {
	Rules []struct {
		ID         string
		Status     string
		Filter     struct{ Prefix string }
		Expiration struct{ Days int }
	}
}

// TestS3LifecycleAwscli: the AWS CLI's put-, get- and delete-bucket-lifecycle(-configuration).
func TestS3LifecycleAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-lifecycle@example.com", "Awscli Lifecycle")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-lifecycle"
	r.run(t, "s3api", "create-bucket", "--bucket", b)
	if _, errOut, err := r.try("s3api", "get-bucket-lifecycle-configuration", "--bucket", b); err == nil || !strings.Contains(errOut, "NoSuchLifecycleConfiguration") {
		t.Errorf("get without a configuration: %v\n%s", err, errOut)
	}
	r.run(t, "s3api", "put-bucket-lifecycle-configuration", "--bucket", b, "--lifecycle-configuration",
		`{"Rules":[{"ID":"cli","Filter":{"Prefix":"tmp/"},"Status":"Enabled","Expiration":{"Days":7}}]}`)
	var lc awscliLifecycle
	r.runJSON(t, &lc, "s3api", "get-bucket-lifecycle-configuration", "--bucket", b)
	if len(lc.Rules) != 1 || lc.Rules[0].ID != "cli" || lc.Rules[0].Status != "Enabled" || lc.Rules[0].Filter.Prefix != "tmp/" || lc.Rules[0].Expiration.Days != 7 {
		t.Errorf("get-bucket-lifecycle-configuration: %+v", lc)
	}
	if _, errOut, err := r.try("s3api", "put-bucket-lifecycle-configuration", "--bucket", b, "--lifecycle-configuration",
		`{"Rules":[{"ID":"bad","Filter":{"Prefix":""},"Status":"Enabled","Expiration":{"Days":0}}]}`); err == nil || !strings.Contains(errOut, "InvalidArgument") {
		t.Errorf("zero days: %v\n%s", err, errOut)
	}
	r.run(t, "s3api", "delete-bucket-lifecycle", "--bucket", b)
	if _, errOut, err := r.try("s3api", "get-bucket-lifecycle-configuration", "--bucket", b); err == nil || !strings.Contains(errOut, "NoSuchLifecycleConfiguration") {
		t.Errorf("get after delete: %v\n%s", err, errOut)
	}
}

// TestS3LifecycleMinio: minio-go's SetBucketLifecycle (a prefix rule, a tag-and-prefix
// rule) and GetBucketLifecycle round trip under V2 and V4, path and host style; an
// empty configuration deletes it (NoSuchLifecycleConfiguration after).
func TestS3LifecycleMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "lifecycle-minio@example.com", "Lifecycle Minio")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	c.mkBucket(t, "lifecycle-minio")
	ctx := context.Background()
	want := &lifecycle.Configuration{Rules: []lifecycle.Rule{
		{ID: "tmp", Status: "Enabled", RuleFilter: lifecycle.Filter{Prefix: "tmp/"},
			Expiration: lifecycle.Expiration{Days: 3}},
		{ID: "tagged", Status: "Disabled", RuleFilter: lifecycle.Filter{And: lifecycle.And{Prefix: "t/",
			Tags: []lifecycle.Tag{{Key: "k", Value: "v"}}}}, Expiration: lifecycle.Expiration{Days: 1}},
	}}
	for _, combo := range minioCombos {
		mc := newMinio(t, s, u.cred(), combo)
		if _, err := mc.GetBucketLifecycle(ctx, "lifecycle-minio"); minioCode(err) != "NoSuchLifecycleConfiguration" {
			t.Fatalf("%s: GetBucketLifecycle without one: %v", combo.name, err)
		}
		if err := mc.SetBucketLifecycle(ctx, "lifecycle-minio", want); err != nil {
			t.Fatalf("%s: SetBucketLifecycle: %v", combo.name, err)
		}
		got, err := mc.GetBucketLifecycle(ctx, "lifecycle-minio")
		if err != nil || len(got.Rules) != 2 {
			t.Fatalf("%s: GetBucketLifecycle: %+v %v", combo.name, got, err)
		}
		for i, r := range got.Rules {
			w := want.Rules[i]
			if r.ID != w.ID || r.Status != w.Status || r.RuleFilter.Prefix != w.RuleFilter.Prefix ||
				r.RuleFilter.And.Prefix != w.RuleFilter.And.Prefix || len(r.RuleFilter.And.Tags) != len(w.RuleFilter.And.Tags) ||
				r.Expiration.Days != w.Expiration.Days {
				t.Errorf("%s: rule %d is %+v, want %+v", combo.name, i, r, w)
			}
		}
		if err := mc.SetBucketLifecycle(ctx, "lifecycle-minio", &lifecycle.Configuration{}); err != nil {
			t.Fatalf("%s: SetBucketLifecycle(empty): %v", combo.name, err)
		}
	}
}

// TestS3LifecycleVersionsBoto3 runs testdata/boto3/lifecycle_versions.py
// (NoncurrentVersionExpiration with and without NewerNoncurrentVersions, and
// ExpiredObjectDeleteMarker, in an Object Lock bucket: noncurrent versions and a lone
// delete marker disappear while the current version and a legal-held version stay, the
// latter until released) against the real binary with a one-second lifecycle day.
func TestS3LifecycleVersionsBoto3(t *testing.T) {
	t.Parallel()
	py := boto3Python(t)
	s := startServerOpts(t, serverOpts{process: true, args: []string{"--lifecycle-day", "1s", "--lifecycle-interval", "250ms"}})
	u := s3CreateUser(t, s, "boto3-lifecycle-versions@example.com", "Boto3 Lifecycle Versions")
	runBoto3Script(t, py, s, u, "lifecycle_versions.py", "boto3-lifecycle-versions", "PASS lifecycle versions")
	// doc: two, then the held one; gone: its version; kept/k: the oldest.
	if st := statsOf(t, s); st["s3_lifecycle_noncurrent_expired_total"] != float64(5) || st["s3_lifecycle_delete_markers_removed_total"] != float64(1) {
		t.Errorf("/stats: %v noncurrent versions expired, %v markers removed; want 5 and 1",
			st["s3_lifecycle_noncurrent_expired_total"], st["s3_lifecycle_delete_markers_removed_total"])
	}
}
