package main

import "testing"

// TestS3ObjectLockBoto3: S3 Object Lock through unmodified boto3
// (testdata/boto3/objectlock.py): lock buckets, default and explicit retention, legal
// holds, the governance bypass, and the deletes each refuses.
func TestS3ObjectLockBoto3(t *testing.T) {
	t.Parallel()
	runBoto3OnNewServer(t, "objectlock.py", "boto3-lock", "PASS boto3 object lock")
}
