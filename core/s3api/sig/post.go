package sig

import "strings"

// PostForm holds the authentication fields of a POST object form (a browser-based
// upload): the base64 policy document and its signature, V2 (AWSAccessKeyId and
// signature: the base64 HMAC-SHA1 of the policy) or V4 (x-amz-algorithm,
// x-amz-credential, x-amz-date and x-amz-signature: the hex HMAC-SHA256 of the policy
// under the credential's signing key). Absent fields are "".
type PostForm struct {
	Policy string
	// V2.
	AccessKeyID, Signature string
	// V4.
	Algorithm, Credential, Date, SignatureV4 string
}

// postFieldError is AWS's answer to a form lacking a field its authentication needs.
func postFieldError(name string) error {
	return errInvalidArgument("Bucket POST must contain a field named '" + name + "'.  If it is specified, please check the order of the fields.")
}

// VerifyPost checks the signature of a POST object form's policy. A form with neither
// a policy nor any signature field is anonymous (a zero Result, nil); a policy without
// its signature fields, or signature fields without a policy, is 400 InvalidArgument
// naming the missing field; a malformed V4 algorithm, credential or date is 400
// InvalidArgument; an unknown key is what lookup answers (InvalidAccessKeyId); a
// signature that does not match is a *SignatureError (403 SignatureDoesNotMatch) whose
// string to sign is the policy. The policy's expiration and conditions are the
// caller's to check: the signature carries no time of its own.
func VerifyPost(f PostForm, lookup Lookup) (Result, error) {
	v4 := f.Algorithm != "" || f.Credential != "" || f.Date != "" || f.SignatureV4 != ""
	v2 := f.AccessKeyID != "" || f.Signature != ""
	switch {
	case !v4 && !v2 && f.Policy == "":
		return Result{}, nil
	case f.Policy == "":
		return Result{}, postFieldError("policy")
	case v4:
		return verifyPostV4(f, lookup)
	case f.AccessKeyID == "":
		return Result{}, postFieldError("AWSAccessKeyId")
	case f.Signature == "":
		return Result{}, postFieldError("Signature")
	}
	secret, err := lookupSecret(lookup, f.AccessKeyID)
	if err != nil {
		return Result{}, err
	}
	if !equalSignature(SignPostV2(secret, f.Policy), f.Signature) {
		return Result{}, errSignature(f.AccessKeyID, f.Policy, f.Signature, "")
	}
	return Result{KeyID: f.AccessKeyID, Version: 2}, nil
}

// verifyPostV4 checks a V4-signed form (see VerifyPost).
func verifyPostV4(f PostForm, lookup Lookup) (Result, error) {
	for _, req := range [][2]string{{"x-amz-algorithm", f.Algorithm}, {"x-amz-credential", f.Credential},
		{"x-amz-date", f.Date}, {"x-amz-signature", f.SignatureV4}} {
		if req[1] == "" {
			return Result{}, postFieldError(req[0])
		}
	}
	if f.Algorithm != AlgorithmV4 {
		return Result{}, errInvalidArgument("X-Amz-Algorithm only supports \"" + AlgorithmV4 + "\"")
	}
	cred, err := ParseCredential(f.Credential)
	if err != nil {
		return Result{}, errInvalidArgument("Invalid X-Amz-Credential: " + err.Error())
	}
	if _, ok := parseISO8601(f.Date); !ok || !strings.HasPrefix(f.Date, cred.Date) {
		return Result{}, errInvalidArgument("Invalid X-Amz-Date: it must be yyyymmddThhmmssZ, on the credential's date")
	}
	secret, err := lookupSecret(lookup, cred.KeyID)
	if err != nil {
		return Result{}, err
	}
	key := SigningKeyV4(secret, cred.Date, cred.Region, cred.Service)
	if !equalSignature(SignV4(key, f.Policy), strings.ToLower(f.SignatureV4)) {
		return Result{}, errSignature(cred.KeyID, f.Policy, f.SignatureV4, "")
	}
	return Result{KeyID: cred.KeyID, Version: 4, SigningKey: key, Region: cred.Region, Scope: cred.Scope(), AmzDate: f.Date}, nil
}

// SignPostV2 returns the V2 signature of a POST policy (base64 as sent in the form):
// Base64(HMAC-SHA1(secret, policy)).
func SignPostV2(secret, policy string) string { return SignV2(secret, policy) }

// SignPostV4 returns the V4 signature of a POST policy (base64 as sent in the form)
// for the credential: hex(HMAC-SHA256(signing key, policy)).
func SignPostV4(secret string, cred Credential, policy string) string {
	return SignV4(SigningKeyV4(secret, cred.Date, cred.Region, cred.Service), policy)
}
