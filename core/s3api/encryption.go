package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"strings"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3api/s3xml"
)

// kmsHeaders are the encryption headers (after the vendor prefix) that name KMS keys:
// Cairn offers no KMS, so a write carrying one answers 501 NotImplemented.
var kmsHeaders = []string{"server-side-encryption-aws-kms-key-id", "server-side-encryption-context"}

// errKMS answers the requests for KMS-managed keys.
var errKMS = s3.Errorf(s3.NotImplemented, "A header or query you provided requested a function that is not implemented: server-side encryption with KMS keys (aws:kms) is not offered; use AES256")

// sseSource looks an encryption parameter up by its name after the vendor prefix
// ("Server-Side-Encryption", "Server-Side-Encryption-Customer-Key", …): a request's
// headers (call.headerPresent) or a POST form's fields (formSource). It says whether
// the parameter was given, even empty.
type sseSource func(name string) (string, bool)

// formSource is the sseSource of a POST form's fields (lower-case names, see
// formFields), under their x-amz- or x-obj- names.
func formSource(fields map[string]string) sseSource {
	return func(name string) (string, bool) {
		for _, prefix := range [...]string{"x-amz-", "x-obj-"} {
			if v, ok := fields[prefix+strings.ToLower(name)]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// sseRequest reads the encryption a write asks for in its headers (PUT, copy,
// multipart initiate): see sseRequestFrom.
func (c *call) sseRequest() (s3.SSERequest, error) { return sseRequestFrom(c.headerPresent) }

// sseRequestFrom reads the encryption a write asks for from get (headers, or a POST
// form's fields): x-amz-server-side-encryption AES256 (aws:kms is 501 NotImplemented,
// another value 400 InvalidArgument) or the SSE-C parameters (customerKeyFrom), not
// both (400 InvalidArgument). x-amz-server-side-encryption-bucket-key-enabled is
// accepted and changes nothing.
func sseRequestFrom(get sseSource) (s3.SSERequest, error) {
	var q s3.SSERequest
	if v, ok := get("Server-Side-Encryption"); ok {
		switch v = strings.TrimSpace(v); {
		case v == s3.SSEAlgorithm:
			q.S3 = true
		case strings.HasPrefix(v, "aws:kms"):
			return q, errKMS
		default:
			return q, s3.Errorf(s3.InvalidArgument, "The encryption method specified is not supported")
		}
	}
	ck, err := customerKeyFrom(get, "")
	if err != nil {
		return q, err
	}
	if ck != nil && q.S3 {
		return q, s3.Errorf(s3.InvalidArgument, "Server Side Encryption with Customer provided key is incompatible with the encryption method specified")
	}
	q.Customer = ck
	return q, nil
}

// customerKey reads the SSE-C headers of the object written or read (prefix "") or of
// a copy's source (prefix "Copy-Source-"): see customerKeyFrom.
func (c *call) customerKey(prefix string) (*s3.CustomerKey, error) {
	return customerKeyFrom(c.headerPresent, prefix)
}

// customerKeyFrom reads the SSE-C parameters from get (prefix "", or "Copy-Source-"
// for a copy's source): nil when there are none. The algorithm must be AES256, the key
// the base64 of 32 bytes, its MD5 the base64 of the key's MD5; one missing or wrong is
// 400 InvalidArgument with AWS's texts.
func customerKeyFrom(get sseSource, prefix string) (*s3.CustomerKey, error) {
	base := prefix + "Server-Side-Encryption-Customer-"
	alg, hasAlg := get(base + "Algorithm")
	key, hasKey := get(base + "Key")
	sum, hasSum := get(base + "Key-Md5")
	if !hasAlg && !hasKey && !hasSum {
		return nil, nil
	}
	const must = "Requests specifying Server Side Encryption with Customer provided keys must provide "
	if !hasAlg || strings.TrimSpace(alg) != s3.SSEAlgorithm {
		return nil, s3.Errorf(s3.InvalidArgument, must+"a valid encryption algorithm.")
	}
	if !hasKey {
		return nil, s3.Errorf(s3.InvalidArgument, must+"an appropriate secret key.")
	}
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil || len(k) != 32 {
		return nil, s3.Errorf(s3.InvalidArgument, "The secret key was invalid for the specified algorithm.")
	}
	if !hasSum {
		return nil, s3.Errorf(s3.InvalidArgument, must+"the client calculated MD5 of the secret key.")
	}
	want := md5.Sum(k)
	if got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sum)); err != nil || !bytes.Equal(got, want[:]) {
		return nil, s3.Errorf(s3.InvalidArgument, "The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	return &s3.CustomerKey{Key: k, MD5: base64.StdEncoding.EncodeToString(want[:])}, nil
}

// echoSSE sets the response headers that say how the object (or upload, or part) is
// encrypted: x-amz-server-side-encryption for SSE-S3, the SSE-C algorithm and key MD5
// for SSE-C (the MD5 of ck, the request's key, else the record's: an upload's); nothing
// for data stored in clear.
func (c *call) echoSSE(e *s3.Encryption, ck *s3.CustomerKey) {
	if e == nil {
		return
	}
	h := c.w.Header()
	if !e.Customer {
		h[c.names.prefix+"server-side-encryption"] = []string{s3.SSEAlgorithm}
		return
	}
	h[c.names.prefix+"server-side-encryption-customer-algorithm"] = []string{s3.SSEAlgorithm}
	sum := e.CustomerKeyMD5
	if ck != nil {
		sum = ck.MD5
	}
	if sum != "" {
		h[c.names.prefix+"server-side-encryption-customer-key-md5"] = []string{sum}
	}
}

// echoPartSSE echoes the encryption of a part stored with the request's SSE-C key ck
// (nil: none): a sealed part is SSE-C with ck, else SSE-S3.
func (c *call) echoPartSSE(p *s3.PartInfo, ck *s3.CustomerKey) {
	switch {
	case !p.Extent.Sealed:
	case ck != nil:
		c.echoSSE(&s3.Encryption{Customer: true}, ck)
	default:
		c.echoSSE(&s3.Encryption{}, nil)
	}
}

// serveBucketEncryption answers GET, PUT and DELETE /{bucket}?encryption: the
// bucket's default encryption (AES256 only; aws:kms is 501 NotImplemented, another
// algorithm 400 MalformedXML, a KMS key with AES256 400 InvalidArgument).
func (c *call) serveBucketEncryption() {
	svc := c.a.svc
	c.serveDoc(docOps{
		get: func(ctx context.Context) ([]byte, error) {
			e, err := svc.BucketEncryption(ctx, c.who, c.bucket)
			if err != nil {
				return nil, err
			}
			return s3xml.MarshalEncryption(s3xml.EncryptionRule{Algorithm: e.Algorithm, BucketKeyEnabled: e.BucketKeyEnabled}), nil
		},
		put: func(ctx context.Context) error {
			rule, err := c.readEncryption()
			if err != nil {
				return err
			}
			return svc.SetBucketEncryption(ctx, c.who, c.bucket, s3.BucketEncryption{Algorithm: rule.Algorithm, BucketKeyEnabled: rule.BucketKeyEnabled})
		},
		del: func(ctx context.Context) error { return svc.DeleteBucketEncryption(ctx, c.who, c.bucket) },
	})
}

// readEncryption reads and parses the body of PUT ?encryption (at most maxXMLBody
// bytes, checked against Content-MD5 and x-amz-checksum-* as the other documents are).
func (c *call) readEncryption() (s3xml.EncryptionRule, error) {
	body, err := c.readCheckedBody(maxXMLBody)
	if err != nil {
		return s3xml.EncryptionRule{}, err
	}
	rule, err := s3xml.ParseEncryption(body)
	switch {
	case err != nil:
		return rule, err
	case strings.HasPrefix(rule.Algorithm, "aws:kms"):
		return rule, errKMS
	case rule.KMSMasterKeyID != "":
		return rule, s3.Errorf(s3.InvalidArgument, "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
	}
	return rule, nil
}

// unseal readies an opened object for reading with the request's SSE-C headers (see
// s3.Object.Unseal for the answers) and returns the key they gave (nil: none).
func (c *call) unseal(obj *s3.Object) (*s3.CustomerKey, error) {
	ck, err := c.customerKey("")
	if err != nil {
		return nil, err
	}
	return ck, obj.Unseal(ck)
}

// sseConditionKeys adds to keys the bucket-policy condition keys of the encryption
// parameters a write carries in get (its headers, or a POST form's fields):
// s3:x-amz-server-side-encryption and s3:x-amz-server-side-encryption-customer-algorithm,
// absent when the parameter is (so that a Null condition can require one).
func sseConditionKeys(keys map[string]string, get sseSource) {
	delete(keys, s3.CondSSE)
	delete(keys, s3.CondSSECustomerAlgorithm)
	if v, ok := get("Server-Side-Encryption"); ok {
		keys[s3.CondSSE] = v
	}
	if v, ok := get("Server-Side-Encryption-Customer-Algorithm"); ok {
		keys[s3.CondSSECustomerAlgorithm] = v
	}
}
