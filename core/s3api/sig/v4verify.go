package sig

import (
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// verifyHeaderV4 checks "Authorization: AWS4-HMAC-SHA256 Credential=…".
func verifyHeaderV4(req *Request, auth string, lookup Lookup, now time.Time) (Result, error) {
	a, err := ParseAuthorizationV4(auth)
	if err != nil {
		return Result{}, err
	}
	payload, err := payloadHashHeader(req.Header)
	if err != nil {
		return Result{}, err
	}
	if err := checkSignedHeaders(req.Header, a.SignedHeaders, true); err != nil {
		return Result{}, err
	}
	secret, err := lookupSecret(lookup, a.Credential.KeyID)
	if err != nil {
		return Result{}, err
	}
	t, amzDate, err := requestTimeV4(req.Header)
	if err != nil {
		return Result{}, err
	}
	if err := checkTime(t, now); err != nil {
		return Result{}, err
	}
	if a.Credential.Date != t.UTC().Format(scopeDate) {
		return Result{}, errMalformedHeader("Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	res, err := matchV4(req, a.Credential, secret, a.SignedHeaders, a.Signature, payload, amzDate, false)
	if err != nil {
		return Result{}, err
	}
	res.Time = t
	return res, nil
}

// presignV4 holds the parsed X-Amz-* query parameters of a presigned V4 URL.
type presignV4 struct {
	cred      Credential
	signed    []string
	signature string
	amzDate   string
	time      time.Time
	expires   int64 // seconds
}

// verifyPresignedV4 checks ?X-Amz-Algorithm=…&X-Amz-Credential=…&X-Amz-Signature=….
func verifyPresignedV4(req *Request, query []param, lookup Lookup, now time.Time) (Result, error) {
	p, err := parsePresignV4(query)
	if err != nil {
		return Result{}, err
	}
	if err := checkSignedHeaders(req.Header, p.signed, false); err != nil {
		return Result{}, err
	}
	secret, err := lookupSecret(lookup, p.cred.KeyID)
	if err != nil {
		return Result{}, err
	}
	if err := checkPresignTime(p, now); err != nil {
		return Result{}, err
	}
	if p.cred.Date != p.time.Format(scopeDate) {
		return Result{}, errQueryParams("Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", p.cred.Date, p.amzDate)
	}
	payload := UnsignedPayload
	if v, ok := lookupParam(query, "X-Amz-Content-Sha256"); ok && v != "" {
		payload = v
	}
	res, err := matchV4(req, p.cred, secret, p.signed, p.signature, payload, p.amzDate, true)
	if err != nil {
		return Result{}, err
	}
	res.Time = p.time
	res.Expires = p.time.Add(time.Duration(p.expires) * time.Second)
	return res, nil
}

// parsePresignV4 reads and checks the shape of the X-Amz-* query parameters.
func parsePresignV4(query []param) (presignV4, error) {
	get := func(name string) string { v, _ := lookupParam(query, name); return v }
	alg, credential, date := get("X-Amz-Algorithm"), get("X-Amz-Credential"), get("X-Amz-Date")
	expires, signed, signature := get("X-Amz-Expires"), get("X-Amz-SignedHeaders"), get(signatureParamV4)
	if alg == "" || credential == "" || date == "" || expires == "" || signed == "" || signature == "" {
		return presignV4{}, errQueryParams(msgV4Query)
	}
	if alg != AlgorithmV4 {
		return presignV4{}, errQueryParams(`X-Amz-Algorithm only supports "%s"`, AlgorithmV4)
	}
	p := presignV4{signature: signature, amzDate: date}
	var err error
	if p.cred, err = ParseCredential(credential); err != nil {
		return presignV4{}, errQueryParams("Error parsing the X-Amz-Credential parameter; %v", err)
	}
	var ok bool
	if p.time, ok = parseISO8601(date); !ok {
		return presignV4{}, errQueryParams(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
	}
	if p.expires, err = strconv.ParseInt(expires, 10, 64); err != nil {
		return presignV4{}, errQueryParams("X-Amz-Expires should be a number")
	}
	if p.signed, err = parseSignedHeaders(signed); err != nil {
		return presignV4{}, errQueryParams("%v", err)
	}
	return p, nil
}

// checkPresignTime refuses an out-of-range X-Amz-Expires, a URL dated in the future and an
// expired URL, all with 403 AccessDenied (what S3 conformance tests expect).
func checkPresignTime(p presignV4, now time.Time) error {
	switch {
	case p.expires < 0:
		return errAccessDenied("X-Amz-Expires must be non-negative")
	case p.expires > int64(MaxPresignExpiry/time.Second):
		return errAccessDenied("X-Amz-Expires must be less than a week (in seconds) that is 604800")
	case p.time.After(now.Add(MaxSkew)):
		return errAccessDenied(msgNotYetValid)
	case p.expires == 0 || now.After(p.time.Add(time.Duration(p.expires)*time.Second)):
		return errAccessDenied(msgExpired)
	}
	return nil
}

// matchV4 computes the signature and compares it with the one sent.
func matchV4(req *Request, cred Credential, secret string, signed []string, signature, payload, amzDate string, presigned bool) (Result, error) {
	key := SigningKeyV4(secret, cred.Date, cred.Region, cred.Service)
	canonical := CanonicalRequestV4(req, signed, payload, presigned)
	sts := StringToSignV4(amzDate, cred.Scope(), canonical)
	if !equalSignature(SignV4(key, sts), signature) {
		return Result{}, errSignature(cred.KeyID, sts, signature, canonical)
	}
	return Result{
		KeyID:         cred.KeyID,
		Version:       4,
		Presigned:     presigned,
		PayloadHash:   payload,
		SigningKey:    key,
		Region:        cred.Region,
		Scope:         cred.Scope(),
		AmzDate:       amzDate,
		SeedSignature: signature,
	}, nil
}

// payloadHashHeader returns x-amz-content-sha256, which S3 requires with V4 header auth.
func payloadHashHeader(h map[string][]string) (string, error) {
	if !hasHeader(h, "X-Amz-Content-Sha256") {
		return "", &s3types.Error{Code: s3types.InvalidRequest, Message: msgMissingSHA256}
	}
	v := firstHeader(h, "X-Amz-Content-Sha256")
	if !ValidPayloadHash(v) {
		return "", errInvalidArgument(msgBadSHA256)
	}
	return v, nil
}

// checkSignedHeaders requires host among the signed headers and, for header auth, every
// x-amz-* header sent, as S3 does.
func checkSignedHeaders(h map[string][]string, signed []string, requireAmz bool) error {
	set := make(map[string]bool, len(signed))
	for _, name := range signed {
		set[name] = true
	}
	if !set["host"] {
		return errAccessDenied(msgUnsigned)
	}
	if !requireAmz {
		return nil
	}
	for _, name := range indexHeaders(h).names() {
		if strings.HasPrefix(name, "x-amz-") && !set[name] {
			return errAccessDenied(msgUnsigned)
		}
	}
	return nil
}

// requestTimeV4 is the time a V4 header-signed request claims and the timestamp its string
// to sign holds: X-Amz-Date (ISO 8601 basic) if sent, else the Date header in ISO form.
func requestTimeV4(h map[string][]string) (time.Time, string, error) {
	if hasHeader(h, "X-Amz-Date") {
		v := firstHeader(h, "X-Amz-Date")
		t, ok := parseISO8601(v)
		if !ok {
			return time.Time{}, "", errAccessDenied(msgNoDate)
		}
		return t, v, nil
	}
	t, ok := ParseDate(firstHeader(h, "Date"))
	if !ok {
		return time.Time{}, "", errAccessDenied(msgNoDate)
	}
	return t, t.UTC().Format(ISO8601Basic), nil
}
