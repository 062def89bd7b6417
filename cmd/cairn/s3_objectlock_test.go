package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestS3ObjectLockBoto3: S3 Object Lock through unmodified boto3
// (testdata/boto3/objectlock.py): lock buckets, default and explicit retention, legal
// holds, the governance bypass, and the deletes each refuses.
func TestS3ObjectLockBoto3(t *testing.T) {
	t.Parallel()
	runBoto3OnNewServer(t, "objectlock.py", "boto3-lock", "PASS boto3 object lock")
}

// TestS3ObjectLockMinio: Object Lock through unmodified minio-go (V2 path style and V4
// host style): a bucket made with ObjectLocking, the default rule, a GOVERNANCE
// retention and a legal hold set on a put, read back by version, a removal refused
// then allowed with GovernanceBypass once the hold is lifted.
func TestS3ObjectLockMinio(t *testing.T) {
	t.Parallel()
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "minio-lock@example.com", "Minio Lock")
	ctx := context.Background()
	for _, combo := range []minioCombo{{"v2-path", false, false}, {"v4-host", true, true}} {
		t.Run(combo.name, func(t *testing.T) {
			mc := newMinio(t, s, u.cred(), combo)
			b := "minio-lock-" + combo.name
			if err := mc.MakeBucket(ctx, b, minio.MakeBucketOptions{ObjectLocking: true}); err != nil {
				t.Fatal(err)
			}
			mode, days, unit := minio.Compliance, uint(2), minio.Days
			if err := mc.SetObjectLockConfig(ctx, b, &mode, &days, &unit); err != nil {
				t.Fatal(err)
			}
			enabled, gotMode, gotDays, gotUnit, err := mc.GetObjectLockConfig(ctx, b)
			if err != nil || enabled != "Enabled" || gotMode == nil || *gotMode != minio.Compliance || *gotDays != 2 || *gotUnit != minio.Days {
				t.Fatalf("lock config: %q %v %v %v %v", enabled, gotMode, gotDays, gotUnit, err)
			}
			if err := mc.SetObjectLockConfig(ctx, b, nil, nil, nil); err != nil {
				t.Fatalf("clearing the default rule: %v", err)
			}
			until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			info, err := mc.PutObject(ctx, b, "k", strings.NewReader("locked"), 6, minio.PutObjectOptions{
				Mode: minio.Governance, RetainUntilDate: until, LegalHold: minio.LegalHoldEnabled})
			if err != nil || info.VersionID == "" {
				t.Fatalf("put: %+v %v", info, err)
			}
			m, ru, err := mc.GetObjectRetention(ctx, b, "k", info.VersionID)
			if err != nil || m == nil || *m != minio.Governance || !ru.Equal(until) {
				t.Fatalf("retention: %v %v %v", m, ru, err)
			}
			hold, err := mc.GetObjectLegalHold(ctx, b, "k", minio.GetObjectLegalHoldOptions{VersionID: info.VersionID})
			if err != nil || hold == nil || *hold != minio.LegalHoldEnabled {
				t.Fatalf("legal hold: %v %v", hold, err)
			}
			rm := minio.RemoveObjectOptions{VersionID: info.VersionID, GovernanceBypass: true}
			if er := minio.ToErrorResponse(mc.RemoveObject(ctx, b, "k", rm)); er.Code != "AccessDenied" {
				t.Fatalf("removing a held version: %+v", er)
			}
			off := minio.LegalHoldDisabled
			if err := mc.PutObjectLegalHold(ctx, b, "k", minio.PutObjectLegalHoldOptions{VersionID: info.VersionID, Status: &off}); err != nil {
				t.Fatal(err)
			}
			if er := minio.ToErrorResponse(mc.RemoveObject(ctx, b, "k", minio.RemoveObjectOptions{VersionID: info.VersionID})); er.Code != "AccessDenied" {
				t.Fatalf("removing a governance version without the bypass: %+v", er)
			}
			if err := mc.RemoveObject(ctx, b, "k", rm); err != nil {
				t.Fatalf("removing with the governance bypass: %v", err)
			}
		})
	}
}

// TestS3ObjectLockAwscli: Object Lock through the AWS CLI: a bucket created with
// --object-lock-enabled-for-bucket, a default rule, a put under a legal hold, the hold
// read back, a permanent delete refused (AccessDenied) until the hold is lifted.
func TestS3ObjectLockAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-lock@example.com", "Awscli Lock")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-lock"
	body := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(body, []byte("ledger"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.run(t, "s3api", "create-bucket", "--bucket", b, "--object-lock-enabled-for-bucket")
	r.run(t, "s3api", "put-object-lock-configuration", "--bucket", b, "--object-lock-configuration",
		`{"ObjectLockEnabled":"Enabled","Rule":{"DefaultRetention":{"Mode":"GOVERNANCE","Days":1}}}`)
	var cfg struct {
		ObjectLockConfiguration struct {
			ObjectLockEnabled string
			Rule              struct{ DefaultRetention struct{ Mode string } }
		}
	}
	r.runJSON(t, &cfg, "s3api", "get-object-lock-configuration", "--bucket", b)
	if c := cfg.ObjectLockConfiguration; c.ObjectLockEnabled != "Enabled" || c.Rule.DefaultRetention.Mode != "GOVERNANCE" {
		t.Fatalf("get-object-lock-configuration: %+v", cfg)
	}
	var put struct{ VersionId string }
	r.runJSON(t, &put, "s3api", "put-object", "--bucket", b, "--key", "ledger", "--body", body, "--object-lock-legal-hold-status", "ON")
	var hold struct{ LegalHold struct{ Status string } }
	r.runJSON(t, &hold, "s3api", "get-object-legal-hold", "--bucket", b, "--key", "ledger", "--version-id", put.VersionId)
	if hold.LegalHold.Status != "ON" {
		t.Fatalf("get-object-legal-hold: %+v", hold)
	}
	var ret struct{ Retention struct{ Mode string } }
	r.runJSON(t, &ret, "s3api", "get-object-retention", "--bucket", b, "--key", "ledger", "--version-id", put.VersionId)
	if ret.Retention.Mode != "GOVERNANCE" {
		t.Fatalf("get-object-retention (the default rule): %+v", ret)
	}
	del := []string{"s3api", "delete-object", "--bucket", b, "--key", "ledger", "--version-id", put.VersionId, "--bypass-governance-retention"}
	if _, stderr, err := r.try(del...); err == nil || !strings.Contains(stderr, "AccessDenied") {
		t.Fatalf("delete of a held version: %v %s", err, stderr)
	}
	r.run(t, "s3api", "put-object-legal-hold", "--bucket", b, "--key", "ledger", "--version-id", put.VersionId, "--legal-hold", "Status=OFF")
	r.run(t, del...)
}
