package s3xml

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// fuzzResolver knows every id and address except those containing "unknown"; a user's
// display name is derived from the id, an address's id from the address (consistently:
// the user of an address is the user of its id).
type fuzzResolver struct{}

func (fuzzResolver) UserByID(id string) (s3types.Owner, error) {
	if strings.Contains(id, "unknown") {
		return s3types.Owner{}, ErrUnknownUser
	}
	return s3types.Owner{ID: id, DisplayName: "name of " + id}, nil
}

func (fuzzResolver) UserByEmail(email string) (s3types.Owner, error) {
	if strings.Contains(email, "unknown") {
		return s3types.Owner{}, ErrUnknownUser
	}
	return fuzzResolver{}.UserByID("id-" + email)
}

func FuzzParseACL(f *testing.F) {
	f.Add(string(MarshalACL(aliceACL())))
	f.Add(`<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee type="AmazonCustomerByEmail"><EmailAddress>a@b</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	f.Add(`<AccessControlPolicy xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><Owner><ID>o&#xD;</ID></Owner><AccessControlList><Grant><Grantee i:type="CanonicalUser"><ID>x&amp;y</ID></Grantee><Permission>WRITE_ACP</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	f.Add(`<AccessControlPolicy><Owner><ID>o</ID></Owner><AccessControlList><Grant><Grantee xsi:type="CustomerByEmail"><EmailAddress>unknown</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`)
	f.Add(`<AccessControlPolicy><Owner/></AccessControlPolicy>`)
	f.Fuzz(func(t *testing.T, body string) {
		acl, err := ParseACL([]byte(body), fuzzResolver{})
		if err != nil {
			if s3types.AsError(err) == nil {
				t.Fatalf("error is not an *s3types.Error: %v", err)
			}
			return
		}
		if len(acl.Grants) > MaxGrants || acl.Owner.ID == "" {
			t.Fatalf("accepted %+v", acl)
		}
		for _, g := range acl.Grants {
			if !s3types.ValidPermission(g.Permission) {
				t.Fatalf("bad permission %q", g.Permission)
			}
			switch g.Grantee.Type {
			case s3types.GranteeCanonicalUser:
				if g.Grantee.ID == "" || g.Grantee.URI != "" {
					t.Fatalf("bad user grantee %+v", g.Grantee)
				}
			case s3types.GranteeGroup:
				if !s3types.ValidGroup(g.Grantee.URI) || g.Grantee.ID != "" {
					t.Fatalf("bad group grantee %+v", g.Grantee)
				}
			default:
				t.Fatalf("bad grantee type %+v", g.Grantee)
			}
		}
		doc := MarshalACL(acl)
		wellFormed(t, doc)
		again, err := ParseACL(doc, fuzzResolver{})
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, doc)
		}
		if !reflect.DeepEqual(again, acl) {
			t.Fatalf("re-parse differs:\n%+v\n%+v", again, acl)
		}
	})
}

func FuzzParseGrantHeaders(f *testing.F) {
	f.Add(`id="abc", emailAddress="a@b"`, `uri=`+allUsers)
	f.Add(`ID = x ,EMAILADDRESS= " y "`, ``)
	f.Add(`uri="http://acs.amazonaws.com/groups/s3/LogDelivery",id=unknown`, `id="a,b"`)
	f.Add(`id="`, `,`)
	f.Fuzz(func(t *testing.T, read, writeACP string) {
		h := map[string][]string{"x-amz-grant-read": {read}, "x-obj-grant-write-acp": {writeACP}}
		owner := s3types.Owner{ID: "o", DisplayName: "own"}
		acl, present, err := ParseGrantHeaders(headers(h), owner, fuzzResolver{})
		if !present {
			t.Fatal("present = false")
		}
		if err != nil {
			if s3types.AsError(err) == nil {
				t.Fatalf("error is not an *s3types.Error: %v", err)
			}
			return
		}
		if acl.Owner != owner || len(acl.Grants) > MaxGrants {
			t.Fatalf("got %+v", acl)
		}
		// Writing the grants back as headers (quoted ids, canonical-user ids as id=)
		// gives the same ACL.
		var again = map[string][]string{}
		for _, g := range acl.Grants {
			name := GrantHeaderPrefix + "read"
			if g.Permission == s3types.PermWriteACP {
				name = GrantHeaderPrefix + "write-acp"
			} else if g.Permission != s3types.PermRead {
				t.Fatalf("unexpected permission %q", g.Permission)
			}
			item := `uri="` + g.Grantee.URI + `"`
			if g.Grantee.Type == s3types.GranteeCanonicalUser {
				if strings.Contains(g.Grantee.ID, `"`) {
					return // cannot be quoted; the syntax has no escapes
				}
				item = `id="` + g.Grantee.ID + `"`
			}
			if len(again[name]) == 0 {
				again[name] = []string{item}
			} else {
				again[name][0] += ", " + item
			}
		}
		if len(again) == 0 {
			return
		}
		acl2, _, err := ParseGrantHeaders(headers(again), owner, fuzzResolver{})
		if err != nil {
			t.Fatalf("re-parse %q: %v", again, err)
		}
		if !reflect.DeepEqual(acl2, acl) {
			t.Fatalf("re-parse differs:\n%+v\n%+v", acl2, acl)
		}
	})
}

// FuzzParseTagging: the Tagging parser never panics, answers only S3 errors, and what
// it accepts renders back (MarshalTagging) to the same tags.
func FuzzParseTagging(f *testing.F) {
	f.Add(string(MarshalTagging([]s3types.Tag{{Key: "k", Value: "v"}, {Key: "a&b", Value: ""}})))
	f.Add(`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`)
	f.Add(`<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>`)
	f.Add(`<Tagging/>`)
	f.Add(`<Tagging><TagSet/></Tagging><!-- c -->`)
	f.Fuzz(func(t *testing.T, body string) {
		tags, err := ParseTagging([]byte(body))
		if err != nil {
			if s3types.AsError(err) == nil {
				t.Fatalf("error is not an *s3types.Error: %v", err)
			}
			return
		}
		again, err := ParseTagging(MarshalTagging(tags))
		if err != nil || len(again) != len(tags) {
			t.Fatalf("%q renders to what does not parse back: %v", tags, err)
		}
		for i := range tags {
			if again[i] != tags[i] {
				t.Fatalf("tag %q renders back as %q", tags[i], again[i])
			}
		}
	})
}

// FuzzParseLifecycle: the lifecycle parser never panics, answers only S3 errors, and
// what it accepts renders (MarshalLifecycle) to a document that parses back to what
// renders the same.
func FuzzParseLifecycle(f *testing.F) {
	for _, c := range lifecycleForms {
		f.Add(c.body)
	}
	f.Add(`<LifecycleConfiguration><Rule><Status>Enabled</Status><Transition><Days>1</Days></Transition></Rule></LifecycleConfiguration>`)
	f.Add(`<LifecycleConfiguration><Rule><Status>Enabled</Status><Expiration><Days>x</Days></Expiration></Rule></LifecycleConfiguration>`)
	f.Fuzz(func(t *testing.T, body string) {
		lc, err := ParseLifecycle([]byte(body))
		if err != nil {
			if s3types.AsError(err) == nil {
				t.Fatalf("error is not an *s3types.Error: %v", err)
			}
			return
		}
		out := MarshalLifecycle(lc)
		again, err := ParseLifecycle(out)
		if err != nil || len(again.Rules) != len(lc.Rules) {
			t.Fatalf("%+v renders to what does not parse back: %v\n%s", lc, err, out)
		}
		if out2 := MarshalLifecycle(again); !bytes.Equal(out, out2) {
			t.Fatalf("renders differently after a round trip:\n%s\n%s", out, out2)
		}
	})
}

// FuzzParseObjectLock: the three Object Lock parsers never panic, answer only S3
// errors, and what they accept renders back to the same value.
func FuzzParseObjectLock(f *testing.F) {
	f.Add(string(MarshalObjectLockConfiguration(s3types.ObjectLockConfig{Mode: "GOVERNANCE", Days: 1})))
	f.Add(string(MarshalRetention(s3types.Retention{Mode: "COMPLIANCE", Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})))
	f.Add(string(MarshalLegalHold(true)))
	f.Add(`<Retention/>`)
	f.Fuzz(func(t *testing.T, body string) {
		if c, err := ParseObjectLockConfiguration([]byte(body)); err == nil {
			if again, err := ParseObjectLockConfiguration(MarshalObjectLockConfiguration(c)); err != nil || (c.Mode != "" && again != c) {
				t.Fatalf("%+v renders back as %+v, %v", c, again, err)
			}
		} else if s3types.AsError(err) == nil {
			t.Fatalf("lock configuration: not an S3 error: %v", err)
		}
		if r, err := ParseRetention([]byte(body)); err == nil && r != nil {
			if again, err := ParseRetention(MarshalRetention(*r)); err != nil || !again.Until.Equal(r.Until.Truncate(time.Millisecond)) || again.Mode != r.Mode {
				t.Fatalf("%+v renders back as %+v, %v", r, again, err)
			}
		} else if err != nil && s3types.AsError(err) == nil {
			t.Fatalf("retention: not an S3 error: %v", err)
		}
		if on, err := ParseLegalHold([]byte(body)); err == nil {
			if again, err := ParseLegalHold(MarshalLegalHold(on)); err != nil || again != on {
				t.Fatalf("legal hold %v renders back as %v, %v", on, again, err)
			}
		} else if s3types.AsError(err) == nil {
			t.Fatalf("legal hold: not an S3 error: %v", err)
		}
	})
}
