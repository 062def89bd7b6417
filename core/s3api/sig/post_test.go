package sig

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// TestVerifyPost: a form's policy signature, V2 and V4: an unsigned form without a
// policy is anonymous; a correct signature names the key; every missing field, a bad
// algorithm, credential or date, an unknown key and a wrong signature are refused with
// AWS's codes.
func TestVerifyPost(t *testing.T) {
	const secret, policy = "s3cr3t", "eyJleHBpcmF0aW9uIjoiMjA5OS0wMS0wMVQwMDowMDowMFoiLCJjb25kaXRpb25zIjpbXX0="
	lookup := func(id string) (string, error) {
		if id != "AKID" {
			return "", &s3types.Error{Code: s3types.InvalidAccessKeyID, Message: "unknown"}
		}
		return secret, nil
	}
	cred := Credential{KeyID: "AKID", Date: "20260101", Region: "us-east-1", Service: "s3"}
	v4 := PostForm{Policy: policy, Algorithm: AlgorithmV4, Credential: cred.String(), Date: "20260101T120000Z",
		SignatureV4: SignPostV4(secret, cred, policy)}
	v2 := PostForm{Policy: policy, AccessKeyID: "AKID", Signature: SignPostV2(secret, policy)}
	with := func(f PostForm, change func(*PostForm)) PostForm { change(&f); return f }
	tests := []struct {
		name    string
		form    PostForm
		keyID   string
		code    s3types.Code
		sigFail bool
	}{
		{name: "anonymous", form: PostForm{}},
		{name: "V2", form: v2, keyID: "AKID"},
		{name: "V4", form: v4, keyID: "AKID"},
		{name: "V4 upper-case hex", form: with(v4, func(f *PostForm) { f.SignatureV4 = strings.ToUpper(f.SignatureV4) }), keyID: "AKID"},
		{name: "policy alone", form: PostForm{Policy: policy}, code: s3types.InvalidArgument},
		{name: "signature without policy", form: with(v2, func(f *PostForm) { f.Policy = "" }), code: s3types.InvalidArgument},
		{name: "V2 no signature", form: with(v2, func(f *PostForm) { f.Signature = "" }), code: s3types.InvalidArgument},
		{name: "V2 wrong", form: with(v2, func(f *PostForm) { f.Signature = SignPostV2("other", policy) }), code: s3types.SignatureDoesNotMatch, sigFail: true},
		{name: "V2 unknown key", form: with(v2, func(f *PostForm) { f.AccessKeyID = "NOPE" }), code: s3types.InvalidAccessKeyID},
		{name: "V4 no date", form: with(v4, func(f *PostForm) { f.Date = "" }), code: s3types.InvalidArgument},
		{name: "V4 other algorithm", form: with(v4, func(f *PostForm) { f.Algorithm = "AWS4-HMAC-SHA1" }), code: s3types.InvalidArgument},
		{name: "V4 bad credential", form: with(v4, func(f *PostForm) { f.Credential = "AKID/2026/us-east-1/s3" }), code: s3types.InvalidArgument},
		{name: "V4 date off the credential", form: with(v4, func(f *PostForm) { f.Date = "20260102T000000Z" }), code: s3types.InvalidArgument},
		{name: "V4 wrong", form: with(v4, func(f *PostForm) { f.Policy = "e30=" }), code: s3types.SignatureDoesNotMatch, sigFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := VerifyPost(tt.form, lookup)
			if tt.code == "" {
				if err != nil || res.KeyID != tt.keyID {
					t.Fatalf("got %+v, %v; want key %q", res, err, tt.keyID)
				}
				return
			}
			if e := s3types.AsError(err); e == nil || e.Code != tt.code {
				t.Fatalf("error %v, want %s", err, tt.code)
			}
			var se *SignatureError
			if errors.As(err, &se) != tt.sigFail || tt.sigFail && se.StringToSign != tt.form.Policy {
				t.Fatalf("signature error %+v", se)
			}
		})
	}
}
