package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestCheckTags: the limits AWS sets on a tag set, each with its code.
func TestCheckTags(t *testing.T) {
	n := func(count int) []Tag {
		out := make([]Tag, count)
		for i := range out {
			out[i] = Tag{Key: fmt.Sprint("k", i), Value: "v"}
		}
		return out
	}
	for _, c := range []struct {
		name         string
		tags         []Tag
		object, bckt Code // "" = accepted
	}{
		{"none", nil, "", ""},
		{"ten", n(10), "", ""},
		{"eleven", n(11), BadRequest, ""},
		{"fifty", n(50), BadRequest, ""},
		{"fifty-one", n(51), BadRequest, InvalidTag},
		{"empty value", []Tag{{Key: "k"}}, "", ""},
		{"empty key", []Tag{{Value: "v"}}, InvalidTag, InvalidTag},
		{"key of 128 characters", []Tag{{Key: strings.Repeat("é", 128)}}, "", ""},
		{"key of 129 characters", []Tag{{Key: strings.Repeat("k", 129)}}, InvalidTag, InvalidTag},
		{"value of 256 characters", []Tag{{Key: "k", Value: strings.Repeat("値", 256)}}, "", ""},
		{"value of 257 characters", []Tag{{Key: "k", Value: strings.Repeat("v", 257)}}, InvalidTag, InvalidTag},
		{"aws: prefix", []Tag{{Key: "aws:x"}}, InvalidTag, InvalidTag},
		{"AWS: prefix", []Tag{{Key: "AWS:x"}}, InvalidTag, InvalidTag},
		{"aws without colon", []Tag{{Key: "awsx"}}, "", ""},
		{"same key twice", []Tag{{Key: "k", Value: "1"}, {Key: "k", Value: "2"}}, InvalidTag, InvalidTag},
		{"keys differing in case", []Tag{{Key: "k"}, {Key: "K"}}, "", ""},
		{"invalid UTF-8", []Tag{{Key: "k", Value: "\xff"}}, InvalidTag, InvalidTag},
		{"control character", []Tag{{Key: "k\x00"}}, InvalidTag, InvalidTag},
		{"U+FFFF", []Tag{{Key: "k", Value: "\uffff"}}, InvalidTag, InvalidTag},
		{"tab and newline", []Tag{{Key: "k", Value: "a\tb\nc"}}, "", ""},
	} {
		for _, k := range []struct {
			what  string
			check func([]Tag) error
			want  Code
		}{{"object", CheckObjectTags, c.object}, {"bucket", CheckBucketTags, c.bckt}} {
			err := k.check(c.tags)
			if k.want == "" && err != nil || k.want != "" && !IsCode(err, k.want) {
				t.Errorf("%s, %s: %v, want %q", c.name, k.what, err, k.want)
			}
		}
	}
}

// TestObjectTagging: tags given on PUT, set and removed by ?tagging, kept by a copy
// with the COPY directive and replaced with REPLACE, given at multipart initiation and
// the object's at completion; a refused tag set changes nothing; replacing an object
// replaces its tags.
func TestObjectTagging(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	alice := mustUser(t, s, "alice")
	bob := mustUser(t, s, "bob")
	mustBucket(t, s, alice, "tagged", "")
	putTags := func(key string, tags []Tag) error {
		_, err := s.PutObject(ctx, alice, "tagged", key, PutInput{Body: strings.NewReader("data"), Size: 4, Tags: tags, HasTags: true})
		return err
	}
	tagsOfKey := func(key string) []Tag {
		t.Helper()
		tags, err := s.ObjectTagging(ctx, alice, "tagged", key)
		if err != nil {
			t.Fatalf("tags of %s: %v", key, err)
		}
		return tags
	}
	one := []Tag{{Key: "project", Value: "cairn"}}
	if err := putTags("a", one); err != nil {
		t.Fatal(err)
	}
	if got := tagsOfKey("a"); !reflect.DeepEqual(got, one) {
		t.Fatalf("PUT tags: %v", got)
	}
	wantCode(t, putTags("b", make([]Tag, 11)), BadRequest)
	if _, err := s.StatObject(ctx, alice, "tagged", "b"); !IsCode(err, NoSuchKey) {
		t.Fatalf("a PUT with refused tags stored the object: %v", err)
	}
	// ?tagging replaces and removes; a refused set changes nothing; others may not.
	two := []Tag{{Key: "a", Value: "1"}, {Key: "b", Value: ""}}
	if err := s.SetObjectTagging(ctx, alice, "tagged", "a", two); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SetObjectTagging(ctx, alice, "tagged", "a", []Tag{{Key: "aws:x"}}), InvalidTag)
	wantCode(t, s.SetObjectTagging(ctx, bob, "tagged", "a", one), AccessDenied)
	wantCode(t, s.DeleteObjectTagging(ctx, bob, "tagged", "a"), AccessDenied)
	_, err := s.ObjectTagging(ctx, bob, "tagged", "a")
	wantCode(t, err, AccessDenied)
	// WRITE on the bucket does not let a grantee retag another's object: tags can be
	// what a policy grants reads by (s3:ExistingObjectTag).
	mustBucket(t, s, alice, "shared", "public-read-write")
	if _, err := s.PutObject(ctx, alice, "shared", "secret", PutInput{Body: strings.NewReader("x"), Size: 1}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SetObjectTagging(ctx, bob, "shared", "secret", []Tag{{Key: "class", Value: "public"}}), AccessDenied)
	wantCode(t, s.DeleteObjectTagging(ctx, bob, "shared", "secret"), AccessDenied)
	if err := s.SetObjectTagging(ctx, alice, "shared", "secret", []Tag{{Key: "class", Value: "secret"}}); err != nil {
		t.Fatalf("the object's owner retags: %v", err)
	}
	wantCode(t, s.SetObjectTagging(ctx, alice, "tagged", "missing", one), NoSuchKey)
	wantCode(t, s.SetObjectTagging(ctx, alice, "nobucket", "a", one), NoSuchBucket)
	if got := tagsOfKey("a"); !reflect.DeepEqual(got, two) {
		t.Fatalf("after ?tagging: %v", got)
	}
	// Copy: COPY keeps the source's tags, REPLACE takes the request's (none: none).
	for _, c := range []struct {
		key     string
		replace bool
		tags    []Tag
		want    []Tag
	}{
		{"copy-keep", false, one, two},
		{"copy-replace", true, one, one},
		{"copy-clear", true, nil, nil},
	} {
		_, err := s.CopyObject(ctx, alice, "tagged", "a", "tagged", c.key, CopyInput{ReplaceTags: c.replace, In: PutInput{Tags: c.tags, HasTags: c.tags != nil}})
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		if got := tagsOfKey(c.key); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: tags %v, want %v", c.key, got, c.want)
		}
	}
	_, err = s.CopyObject(ctx, alice, "tagged", "a", "tagged", "copy-bad", CopyInput{ReplaceTags: true, In: PutInput{Tags: []Tag{{Key: "k"}, {Key: "k"}}}})
	wantCode(t, err, InvalidTag)
	// Multipart: the tags of the initiation are the object's at completion.
	u, err := s.CreateUpload(ctx, alice, "tagged", "mp", PutInput{Tags: one, HasTags: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, alice, "tagged", "mp", u.ID, 1, PutInput{Body: bytes.NewReader([]byte("part")), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteUpload(ctx, alice, "tagged", "mp", u.ID, []CompletePart{{Number: 1, ETag: p.ETag}}, WriteConditions{}); err != nil {
		t.Fatal(err)
	}
	if got := tagsOfKey("mp"); !reflect.DeepEqual(got, one) {
		t.Fatalf("multipart: %v", got)
	}
	_, err = s.CreateUpload(ctx, alice, "tagged", "mp2", PutInput{Tags: make([]Tag, 11)})
	wantCode(t, err, BadRequest)
	// A new version has the tags its write gives (none here); DELETE removes them.
	if err := putTags("a", nil); err != nil {
		t.Fatal(err)
	}
	if got := tagsOfKey("a"); len(got) != 0 {
		t.Fatalf("replaced object kept its tags: %v", got)
	}
	if err := s.DeleteObjectTagging(ctx, alice, "tagged", "mp"); err != nil {
		t.Fatal(err)
	}
	if got := tagsOfKey("mp"); len(got) != 0 {
		t.Fatalf("after DELETE ?tagging: %v", got)
	}
	if got := read(t, s, alice, "tagged", "mp"); string(got) != "part" {
		t.Fatalf("data after the tag changes: %q", got)
	}
}

// TestBucketTagging: 404 NoSuchTagSet without tags; set, replaced and removed by the
// owner only (or whom the policy allows); a refused set changes nothing.
func TestBucketTagging(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	alice := mustUser(t, s, "alice")
	bob := mustUser(t, s, "bob")
	mustBucket(t, s, alice, "btags", "public-read-write")
	_, err := s.BucketTagging(ctx, alice, "btags")
	wantCode(t, err, NoSuchTagSet)
	tags := []Tag{{Key: "team", Value: "storage"}}
	wantCode(t, s.SetBucketTagging(ctx, bob, "btags", tags), AccessDenied) // an ACL grants no tagging
	if err := s.SetBucketTagging(ctx, alice, "btags", tags); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SetBucketTagging(ctx, alice, "btags", make([]Tag, 51)), InvalidTag)
	got, err := s.BucketTagging(ctx, alice, "btags")
	if err != nil || !reflect.DeepEqual(got, tags) {
		t.Fatalf("tags %v %v", got, err)
	}
	_, err = s.BucketTagging(ctx, bob, "btags")
	wantCode(t, err, AccessDenied)
	doc := policyDoc("btags", "Allow", `"*"`, "s3:GetBucketTagging", "", "")
	if err := s.SetBucketPolicy(ctx, alice, "btags", doc); err != nil {
		t.Fatal(err)
	}
	if got, err := s.BucketTagging(ctx, bob, "btags"); err != nil || !reflect.DeepEqual(got, tags) {
		t.Fatalf("bob allowed by the policy: %v %v", got, err)
	}
	wantCode(t, s.DeleteBucketTagging(ctx, bob, "btags"), AccessDenied)
	if err := s.SetBucketTagging(ctx, alice, "btags", nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.BucketTagging(ctx, alice, "btags")
	wantCode(t, err, NoSuchTagSet)
	if err := s.DeleteBucketTagging(ctx, alice, "btags"); err != nil {
		t.Fatalf("delete of no tags: %v", err)
	}
}

// TestTagPolicyConditions: s3:ExistingObjectTag/<key> tests the object's current tags
// (reads, ?acl, ?tagging), s3:RequestObjectTag/<key> the tags a PUT or PutObjectTagging
// asks for; the tag key's case matters; absent tags fail a positive condition.
func TestTagPolicyConditions(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t)
	alice := mustUser(t, s, "alice")
	bob := mustUser(t, s, "bob")
	mustBucket(t, s, alice, "cond", "")
	mustPut := func(key string, tags []Tag) {
		t.Helper()
		if _, err := s.PutObject(ctx, alice, "cond", key, PutInput{Body: strings.NewReader("x"), Size: 1, Tags: tags, HasTags: tags != nil}); err != nil {
			t.Fatal(err)
		}
	}
	mustPut("public", []Tag{{Key: "class", Value: "public"}})
	mustPut("secret", []Tag{{Key: "class", Value: "secret"}})
	mustPut("untagged", nil)
	mustPut("upper", []Tag{{Key: "Class", Value: "public"}})
	doc := `{"Version":"2012-10-17","Statement":[
	 {"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectTagging"],"Resource":"arn:aws:s3:::cond/*",
	  "Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"public"}}},
	 {"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:PutObjectTagging"],"Resource":"arn:aws:s3:::cond/*",
	  "Condition":{"StringLike":{"s3:RequestObjectTag/owner":"bob*"}}},
	 {"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::cond/*",
	  "Condition":{"StringEquals":{"s3:ExistingObjectTag/class":"secret"}}}]}`
	if err := s.SetBucketPolicy(ctx, alice, "cond", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		op   func() error
		ok   bool
	}{
		{"read a public object", func() error { _, err := s.StatObject(ctx, bob, "cond", "public"); return err }, true},
		{"read its tags", func() error { _, err := s.ObjectTagging(ctx, bob, "cond", "public"); return err }, true},
		{"read a secret object", func() error { _, err := s.StatObject(ctx, bob, "cond", "secret"); return err }, false},
		{"read an untagged object", func() error { _, err := s.StatObject(ctx, bob, "cond", "untagged"); return err }, false},
		{"tag keys are case-sensitive", func() error { _, err := s.StatObject(ctx, bob, "cond", "upper"); return err }, false},
		{"anonymous read of a public object", func() error { _, err := s.OpenObject(ctx, AnonymousRequester, "cond", "public"); return err }, true},
		{"put with the asked tag", func() error {
			_, err := s.PutObject(ctx, bob, "cond", "new", PutInput{Body: strings.NewReader("x"), Size: 1, Tags: []Tag{{Key: "owner", Value: "bobby"}}, HasTags: true})
			return err
		}, true},
		{"put with another tag", func() error {
			_, err := s.PutObject(ctx, bob, "cond", "new2", PutInput{Body: strings.NewReader("x"), Size: 1, Tags: []Tag{{Key: "owner", Value: "carol"}}, HasTags: true})
			return err
		}, false},
		{"put without tags", func() error {
			_, err := s.PutObject(ctx, bob, "cond", "new3", PutInput{Body: strings.NewReader("x"), Size: 1})
			return err
		}, false},
		{"retag with the asked tag", func() error {
			return s.SetObjectTagging(ctx, bob, "cond", "public", []Tag{{Key: "owner", Value: "bob"}})
		}, true},
		{"retag a secret object: the Deny wins", func() error {
			return s.SetObjectTagging(ctx, bob, "cond", "secret", []Tag{{Key: "owner", Value: "bob"}})
		}, false},
		{"the owner is denied too", func() error { return s.SetObjectTagging(ctx, alice, "cond", "secret", nil) }, false},
		{"the owner, unconditioned", func() error { return s.SetObjectTagging(ctx, alice, "cond", "untagged", []Tag{{Key: "a", Value: "b"}}) }, true},
	} {
		err := c.op()
		if c.ok && err != nil || !c.ok && !IsCode(err, AccessDenied) {
			t.Errorf("%s: %v, want allowed=%v", c.name, err, c.ok)
		}
	}
}

// TestCheckTagLimits: `cairn check` reports a manifest or a bucket record whose tags
// break the limits (a record no write path could have made).
func TestCheckTagLimits(t *testing.T) {
	ctx := context.Background()
	s, db := newTestService(t)
	alice := mustUser(t, s, "alice")
	mustBucket(t, s, alice, "chk", "")
	put(t, s, alice, "chk", "obj", []byte("x"))
	if err := s.SetObjectTagging(ctx, alice, "chk", "obj", []Tag{{Key: "ok", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(db, nil); err != nil || rep.Problems != 0 {
		t.Fatalf("valid tags: %v", err)
	}
	v, err := db.Get(objectKey("chk", "obj"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	m.Tags = append(m.Tags, Tag{Key: "aws:reserved"})
	v, _ = json.Marshal(m)
	if err := db.Put(objectKey("chk", "obj"), v, false); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(db, nil)
	if rep.Problems != 1 || err == nil || !strings.Contains(err.Error(), "manifest chk/obj: tags") {
		t.Fatalf("%d problems: %v", rep.Problems, err)
	}
	// Repaired by the one write path there is: ?tagging.
	if err := s.DeleteObjectTagging(ctx, alice, "chk", "obj"); err != nil {
		t.Fatal(err)
	}
}

// TestTagKeySetConditions: s3:RequestObjectTagKeys under ForAnyValue: and
// ForAllValues:, positive and negated, with and without tags asked for.
func TestTagKeySetConditions(t *testing.T) {
	req := func(keys ...string) PolicyRequest {
		q := PolicyRequest{Requester: AnonymousRequester, Action: ActionPutObject, Bucket: "bkt", Key: "k"}
		if keys != nil {
			q.Tags.HasRequest = true
			for _, k := range keys {
				q.Tags.Request = append(q.Tags.Request, Tag{Key: k})
			}
		}
		return q
	}
	allowIf := func(cond string) *Policy {
		t.Helper()
		p, err := ParsePolicy([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*","Condition":` + cond + `}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const (
		anyOf     = `{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`
		allOf     = `{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`
		anyNot    = `{"ForAnyValue:StringNotEquals":{"s3:RequestObjectTagKeys":["a","b"]}}`
		allNot    = `{"ForAllValues:StringNotEquals":{"s3:RequestObjectTagKeys":["secret"]}}`
		anyExists = `{"ForAnyValue:StringEqualsIfExists":{"s3:RequestObjectTagKeys":"a"}}`
	)
	for _, c := range []struct {
		cond string
		req  PolicyRequest
		want bool
	}{
		{anyOf, req("a"), true},
		{anyOf, req("c", "b"), true},
		{anyOf, req("c"), false},
		{anyOf, req(), false},
		{anyOf, req([]string{}...), false},
		{allOf, req("a", "b"), true},
		{allOf, req("a", "c"), false},
		{allOf, req(), true}, // no value: vacuously all
		{anyNot, req("a", "c"), true},
		{anyNot, req("a", "b"), false},
		{allNot, req("a", "b"), true},
		{allNot, req("a", "secret"), false},
		{anyExists, req(), true},
		{anyExists, req("b"), false},
	} {
		got := allowIf(c.cond).Evaluate(c.req) == EffectAllow
		if got != c.want {
			t.Errorf("%s with tags %v (asked: %v): %v, want %v", c.cond, c.req.Tags.Request, c.req.Tags.HasRequest, got, c.want)
		}
	}
}
