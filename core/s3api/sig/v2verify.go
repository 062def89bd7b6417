package sig

import (
	"strconv"
	"strings"
	"time"
)

// verifyHeaderV2 checks "Authorization: AWS key:signature".
func verifyHeaderV2(req *Request, auth string, lookup Lookup, now time.Time) (Result, error) {
	keyID, signature, err := ParseAuthorizationV2(auth)
	if err != nil {
		return Result{}, err
	}
	secret, err := lookupSecret(lookup, keyID)
	if err != nil {
		return Result{}, err
	}
	t, err := requestTimeV2(req.Header)
	if err != nil {
		return Result{}, err
	}
	if err := checkTime(t, now); err != nil {
		return Result{}, err
	}
	if err := matchV2(req, keyID, secret, signature, dateValuesV2(req.Header)); err != nil {
		return Result{}, err
	}
	return Result{KeyID: keyID, Version: 2, Time: t}, nil
}

// verifyPresignedV2 checks ?AWSAccessKeyId=…&Expires=…&Signature=….
func verifyPresignedV2(req *Request, query []param, lookup Lookup, now time.Time) (Result, error) {
	keyID, _ := lookupParam(query, "AWSAccessKeyId")
	signature, _ := lookupParam(query, "Signature")
	expires, _ := lookupParam(query, "Expires")
	if keyID == "" || signature == "" || expires == "" {
		return Result{}, errAccessDenied(msgV2Query)
	}
	secret, err := lookupSecret(lookup, keyID)
	if err != nil {
		return Result{}, err
	}
	unix, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return Result{}, errAccessDenied("Invalid date (should be seconds since epoch): " + expires)
	}
	if now.Unix() > unix {
		return Result{}, errAccessDenied(msgExpired)
	}
	// A "+" the client forgot to encode arrives as a space; base64 has no spaces.
	signature = strings.ReplaceAll(signature, " ", "+")
	if err := matchV2(req, keyID, secret, signature, []string{expires}); err != nil {
		return Result{}, err
	}
	return Result{KeyID: keyID, Version: 2, Presigned: true, Expires: time.Unix(unix, 0).UTC()}, nil
}

// requestTimeV2 is the time a V2 request claims: x-amz-date if sent, else Date.
func requestTimeV2(h map[string][]string) (time.Time, error) {
	v := firstHeader(h, "Date")
	if hasHeader(h, "X-Amz-Date") {
		v = firstHeader(h, "X-Amz-Date")
	}
	t, ok := ParseDate(v)
	if !ok {
		return time.Time{}, errAccessDenied(msgNoDate)
	}
	return t, nil
}

// dateValuesV2 lists what may stand in the date position of a header-signed request: the
// Date header, or "" when x-amz-date is sent — and then, tolerated after "", the Date value
// anyway, which botocore and minio-go sign whatever x-amz-date says.
func dateValuesV2(h map[string][]string) []string {
	date := firstHeader(h, "Date")
	if !hasHeader(h, "X-Amz-Date") {
		return []string{date}
	}
	if hasHeader(h, "Date") {
		return []string{"", date}
	}
	return []string{""}
}

// matchV2 accepts the signature if it signs any tolerated string to sign; the first
// candidate (the standard form) is the one reported on a mismatch.
func matchV2(req *Request, keyID, secret, signature string, dateValues []string) error {
	var first string
	for _, resource := range ResourceCandidatesV2(req) {
		for _, date := range dateValues {
			sts := StringToSignV2(req, date, resource)
			if first == "" {
				first = sts
			}
			if equalSignature(SignV2(secret, sts), signature) {
				return nil
			}
		}
	}
	return errSignature(keyID, first, signature, "")
}

// ResourceCandidatesV2 lists the canonicalized resources a V2 signature of req is checked
// against, standard form first. For a bucket-level path-style request it adds the form with
// a trailing slash (botocore sends /bkt?… but signs /bkt/…) and, last, the form botocore
// 1.28–1.31 produced, the operation's own query glued to the bucket (/bkt?acl?acl).
// When minio-go would sign other sub-resources (it leaves out "object-lock"), its form
// comes second, except for a PUT without Content-MD5: minio-go sends one with every
// configuration it PUTs, and without it a V2 signature of PUT /bkt (create bucket),
// which covers no body, would also set /bkt?object-lock.
func ResourceCandidatesV2(req *Request) []string {
	out := []string{CanonicalResourceV2(req)}
	if req.Method != "PUT" || len(req.Header["Content-Md5"]) > 0 {
		out = appendNew(out, resourcePathV2(req)+subResourceString(req.RawQuery, minioSubResourcesV2))
	}
	bucket, ok := pathStyleBucket(req)
	if !ok {
		return out
	}
	subs := SubResourceStringV2(req.RawQuery)
	out = appendNew(out, "/"+bucket+"/"+subs)
	if first, _, _ := strings.Cut(req.RawQuery, "&"); first != "" {
		out = appendNew(out, "/"+bucket+"?"+first+subs)
	}
	return out
}

// pathStyleBucket returns the bucket of a bucket-level path-style request (/bkt or /bkt/).
func pathStyleBucket(req *Request) (string, bool) {
	if req.HostBucket != "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(req.RawPath, "/")
	if !ok {
		return "", false
	}
	bucket := strings.TrimSuffix(rest, "/")
	if bucket == "" || strings.Contains(bucket, "/") {
		return "", false
	}
	return bucket, true
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}
