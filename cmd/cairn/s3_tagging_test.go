package main

// End-to-end tests of S3 tagging through minio-go (every signature and addressing
// combination) and the AWS CLI (boto3's are in testdata/boto3/clients.py), and of the
// tag conditions of bucket policies over HTTP.

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// TestS3TaggingMinio: minio-go's PutObject UserTags, StatObject UserTagCount,
// Put/Get/RemoveObjectTagging and Set/Get/RemoveBucketTagging, the eleven-tag refusal,
// under V2 and V4, path and host style.
func TestS3TaggingMinio(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "tagging-minio@example.com", "TaggingMinio")
	raw := s3c{s: s, cred: u.cred(), sign: s3V4}
	ctx := context.Background()
	for _, combo := range minioCombos {
		t.Run(combo.name, func(t *testing.T) {
			mc := newMinio(t, s, u.cred(), combo)
			bkt := "mtag-" + combo.name
			raw.mkBucket(t, bkt)
			first := map[string]string{"project": "cairn", "stage": "e2e test"}
			if _, err := mc.PutObject(ctx, bkt, "obj", strings.NewReader("data"), 4, minio.PutObjectOptions{UserTags: first}); err != nil {
				t.Fatalf("PutObject with UserTags: %v", err)
			}
			if info, err := mc.StatObject(ctx, bkt, "obj", minio.StatObjectOptions{}); err != nil || info.UserTagCount != 2 {
				t.Fatalf("StatObject: %d tags, %v", info.UserTagCount, err)
			}
			if got, err := mc.GetObjectTagging(ctx, bkt, "obj", minio.GetObjectTaggingOptions{}); err != nil || !maps.Equal(got.ToMap(), first) {
				t.Fatalf("GetObjectTagging: %v, %v", got, err)
			}
			second, _ := tags.MapToObjectTags(map[string]string{"a": "1", "b": ""})
			if err := mc.PutObjectTagging(ctx, bkt, "obj", second, minio.PutObjectTaggingOptions{}); err != nil {
				t.Fatalf("PutObjectTagging: %v", err)
			}
			if got, err := mc.GetObjectTagging(ctx, bkt, "obj", minio.GetObjectTaggingOptions{}); err != nil || !maps.Equal(got.ToMap(), second.ToMap()) {
				t.Fatalf("GetObjectTagging after Put: %v, %v", got, err)
			}
			// minio-go refuses eleven object tags itself: send them raw.
			var many strings.Builder
			many.WriteString("<Tagging><TagSet>")
			for _, k := range "abcdefghijk" {
				many.WriteString("<Tag><Key>" + string(k) + "</Key><Value>v</Value></Tag>")
			}
			many.WriteString("</TagSet></Tagging>")
			expectS3Error(t, raw.do(t, http.MethodPut, bkt, "obj", "tagging", nil, many.String()), http.StatusBadRequest, "BadRequest")
			if err := mc.RemoveObjectTagging(ctx, bkt, "obj", minio.RemoveObjectTaggingOptions{}); err != nil {
				t.Fatalf("RemoveObjectTagging: %v", err)
			}
			if got, err := mc.GetObjectTagging(ctx, bkt, "obj", minio.GetObjectTaggingOptions{}); err != nil || len(got.ToMap()) != 0 {
				t.Fatalf("GetObjectTagging after Remove: %v, %v", got, err)
			}
			if _, err := mc.GetBucketTagging(ctx, bkt); minioCode(err) != "NoSuchTagSet" {
				t.Fatalf("GetBucketTagging without tags: %v", err)
			}
			bt, _ := tags.MapToBucketTags(map[string]string{"team": "storage", "cost": "42"})
			if err := mc.SetBucketTagging(ctx, bkt, bt); err != nil {
				t.Fatalf("SetBucketTagging: %v", err)
			}
			if got, err := mc.GetBucketTagging(ctx, bkt); err != nil || !maps.Equal(got.ToMap(), bt.ToMap()) {
				t.Fatalf("GetBucketTagging: %v, %v", got, err)
			}
			if err := mc.RemoveBucketTagging(ctx, bkt); err != nil {
				t.Fatalf("RemoveBucketTagging: %v", err)
			}
			if _, err := mc.GetBucketTagging(ctx, bkt); minioCode(err) != "NoSuchTagSet" {
				t.Fatalf("GetBucketTagging after Remove: %v", err)
			}
		})
	}
}

// TestS3TagPolicyConditions: a bucket policy granting anonymous reads of the objects
// tagged class=public (s3:ExistingObjectTag/class) opens exactly those, following the
// tags as they change; one refusing uploads whose x-amz-tagging lacks owner=... (a
// Deny on s3:RequestObjectTag/owner) refuses them, even to the owner; a condition on a
// tag key with no tag key is 400 MalformedPolicy.
func TestS3TagPolicyConditions(t *testing.T) {
	t.Parallel()
	s := startS3Server(t)
	u := s3CreateUser(t, s, "tag-policy@example.com", "TagPolicy")
	c := s3c{s: s, cred: u.cred(), sign: s3V4}
	const bkt = "tag-policy"
	c.mkBucket(t, bkt)
	c.put(t, bkt, "public", "for everyone", "x-amz-tagging", "class=public")
	c.put(t, bkt, "private", "for me", "x-amz-tagging", "class=private")
	doc := `{"Version":"2012-10-17","Statement":[
	 {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + bkt + `/*",
	  "Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"public"}}},
	 {"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::` + bkt + `/*",
	  "Condition":{"Null":{"s3:RequestObjectTag/owner":"true"}}}]}`
	c.must(t, http.StatusNoContent, http.MethodPut, bkt, "", "policy", nil, doc)
	if r := c.anon().must(t, http.StatusOK, http.MethodGet, bkt, "public", "", nil, ""); string(r.Body) != "for everyone" {
		t.Fatalf("anonymous GET of the public object: %q", r.Body)
	}
	expectS3Error(t, c.anon().do(t, http.MethodGet, bkt, "private", "", nil, ""), http.StatusForbidden, "AccessDenied")
	// Retagging moves the grant.
	c.must(t, http.StatusOK, http.MethodPut, bkt, "private", "tagging", nil, `<Tagging><TagSet><Tag><Key>class</Key><Value>public</Value></Tag></TagSet></Tagging>`)
	c.anon().must(t, http.StatusOK, http.MethodGet, bkt, "private", "", nil, "")
	c.must(t, http.StatusNoContent, http.MethodDelete, bkt, "public", "tagging", nil, "")
	expectS3Error(t, c.anon().do(t, http.MethodGet, bkt, "public", "", nil, ""), http.StatusForbidden, "AccessDenied")
	// Uploads must say their owner.
	expectS3Error(t, c.do(t, http.MethodPut, bkt, "untagged", "", nil, "x"), http.StatusForbidden, "AccessDenied")
	c.must(t, http.StatusOK, http.MethodPut, bkt, "owned", "", hdr{"x-amz-tagging", "owner=me"}, "x")
	bad := strings.Replace(doc, "s3:RequestObjectTag/owner", "s3:RequestObjectTag/", 1)
	expectS3Error(t, c.do(t, http.MethodPut, bkt, "", "policy", nil, bad), http.StatusBadRequest, "MalformedPolicy")
}

// awscliTagSet is what `aws s3api get-object-tagging` and `get-bucket-tagging` print.
type awscliTagSet struct {
	TagSet []struct{ Key, Value string } `json:"TagSet"`
}

// tagMap returns the tag set as a map.
func (ts awscliTagSet) tagMap() map[string]string {
	m := map[string]string{}
	for _, tg := range ts.TagSet {
		m[tg.Key] = tg.Value
	}
	return m
}

// TestS3TaggingAwscli: the AWS CLI's put-object --tagging, get/put/delete-object-tagging
// and put/get/delete-bucket-tagging (a missing bucket tag set is NoSuchTagSet).
func TestS3TaggingAwscli(t *testing.T) {
	t.Parallel()
	bin := awscliBinary(t)
	s := startDefaultS3Server(t)
	u := s3CreateUser(t, s, "awscli-tags@example.com", "Awscli Tags")
	r := newAwscliRunner(t, bin, s, u.cred())
	const b = "awscli-tags"
	r.run(t, "s3api", "create-bucket", "--bucket", b)
	r.run(t, "s3api", "put-object", "--bucket", b, "--key", "obj", "--tagging", "project=cairn&stage=cli%20test")
	var ts awscliTagSet
	r.runJSON(t, &ts, "s3api", "get-object-tagging", "--bucket", b, "--key", "obj")
	if got := ts.tagMap(); !maps.Equal(got, map[string]string{"project": "cairn", "stage": "cli test"}) {
		t.Errorf("put-object --tagging: %v", got)
	}
	r.run(t, "s3api", "put-object-tagging", "--bucket", b, "--key", "obj", "--tagging", `{"TagSet":[{"Key":"k","Value":"v"}]}`)
	ts = awscliTagSet{}
	r.runJSON(t, &ts, "s3api", "get-object-tagging", "--bucket", b, "--key", "obj")
	if got := ts.tagMap(); !maps.Equal(got, map[string]string{"k": "v"}) {
		t.Errorf("put-object-tagging: %v", got)
	}
	r.run(t, "s3api", "delete-object-tagging", "--bucket", b, "--key", "obj")
	ts = awscliTagSet{}
	r.runJSON(t, &ts, "s3api", "get-object-tagging", "--bucket", b, "--key", "obj")
	if len(ts.TagSet) != 0 {
		t.Errorf("delete-object-tagging: %v", ts.TagSet)
	}
	if _, errOut, err := r.try("s3api", "get-bucket-tagging", "--bucket", b); err == nil || !strings.Contains(errOut, "NoSuchTagSet") {
		t.Errorf("get-bucket-tagging without tags: %v\n%s", err, errOut)
	}
	r.run(t, "s3api", "put-bucket-tagging", "--bucket", b, "--tagging", `{"TagSet":[{"Key":"team","Value":"storage"}]}`)
	ts = awscliTagSet{}
	r.runJSON(t, &ts, "s3api", "get-bucket-tagging", "--bucket", b)
	if got := ts.tagMap(); !maps.Equal(got, map[string]string{"team": "storage"}) {
		t.Errorf("put-bucket-tagging: %v", got)
	}
	r.run(t, "s3api", "delete-bucket-tagging", "--bucket", b)
	if _, errOut, err := r.try("s3api", "get-bucket-tagging", "--bucket", b); err == nil || !strings.Contains(errOut, "NoSuchTagSet") {
		t.Errorf("get-bucket-tagging after delete: %v\n%s", err, errOut)
	}
}
