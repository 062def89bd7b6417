package s3api

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/s3types"
)

func deleteBody(quiet bool, keys ...string) string {
	var b strings.Builder
	b.WriteString(`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	if quiet {
		b.WriteString("<Quiet>true</Quiet>")
	}
	for _, k := range keys {
		k, v, _ := strings.Cut(k, "#")
		b.WriteString("<Object><Key>" + k + "</Key>")
		if v != "" {
			b.WriteString("<VersionId>" + v + "</VersionId>")
		}
		b.WriteString("</Object>")
	}
	b.WriteString("</Delete>")
	return b.String()
}

// deleteResultDoc is a parsed DeleteResult.
type deleteResultDoc struct {
	XMLName xml.Name
	Deleted []struct {
		Key       string
		VersionID string `xml:"VersionId"`
	} `xml:"Deleted"`
	Errors []struct{ Key, Code, Message string } `xml:"Error"`
}

func (d deleteResultDoc) summary() string {
	var s []string
	for _, x := range d.Deleted {
		s = append(s, "+"+x.Key)
	}
	for _, x := range d.Errors {
		s = append(s, "!"+x.Key+":"+x.Code)
	}
	return strings.Join(s, " ")
}

func crc32b64(s string) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE([]byte(s))))
}

func TestCRC64NVME(t *testing.T) {
	// The check value of CRC-64/NVME.
	if got := crc64.Checksum([]byte("123456789"), crc64NVME); got != 0xae8b14860a799888 {
		t.Fatalf("crc64nvme(123456789) = %#x", got)
	}
}

func TestDeleteObjects(t *testing.T) {
	e := newMPEnv(t)
	e.bucket("bkt", e.alice)
	for _, k := range []string{"a", "b", "c d", "e&f"} {
		e.put("/bkt/"+strings.ReplaceAll(k, " ", "%20"), "data "+k, e.alice)
	}
	del := func(h map[string]string, body string, as *s3.User) deleteResultDoc {
		t.Helper()
		r := e.must(200, mpReq{method: "POST", path: "/bkt", query: "delete", header: h, body: body, as: as})
		var d deleteResultDoc
		if err := xml.Unmarshal([]byte(r.body), &d); err != nil || d.XMLName.Local != "DeleteResult" {
			t.Fatalf("answer %s (%v)", r.body, err)
		}
		return d
	}
	// Someone without WRITE gets one error per key, and nothing is deleted.
	body := deleteBody(false, "a", "b")
	d := del(map[string]string{"Content-MD5": md5b64(body)}, body, e.bob)
	if d.summary() != "!a:AccessDenied !b:AccessDenied" {
		t.Fatalf("bob: %s", d.summary())
	}
	// Verbose: every key is reported, absent ones and absent versions as deleted too
	// (as AWS answers); a malformed version id is an error.
	body = deleteBody(false, "a", "nope", "c d", "b#null", "b#v1", "c#AAAAAAAAAAAAAAAAAAAAAA")
	d = del(map[string]string{"Content-MD5": md5b64(body)}, body, e.alice)
	if d.summary() != "+a +nope +c d +b +c !b:InvalidArgument" || d.Deleted[3].VersionID != "null" {
		t.Fatalf("verbose: %s %+v", d.summary(), d)
	}
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/bkt/a", as: e.alice})
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/bkt/b", as: e.alice})
	// Quiet, with a flexible checksum instead of Content-MD5: only errors are reported.
	body = deleteBody(true, "e&amp;f", "x#v2")
	d = del(map[string]string{"X-Amz-Checksum-Crc32": crc32b64(body), "X-Amz-Sdk-Checksum-Algorithm": "CRC32"}, body, e.alice)
	if d.summary() != "!x:InvalidArgument" {
		t.Fatalf("quiet: %s", d.summary())
	}
	e.mustErr(404, s3.NoSuchKey, mpReq{method: "GET", path: "/bkt/e&f", as: e.alice})

	// The other checksums.
	body = deleteBody(false, "z")
	c32c := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum([]byte(body), castagnoli)))
	s256 := sha256.Sum256([]byte(body))
	s1 := sha1.Sum([]byte(body))
	c64 := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, crc64.Checksum([]byte(body), crc64NVME)))
	for name, h := range map[string]map[string]string{
		"crc32c":        {"X-Amz-Checksum-Crc32c": c32c},
		"sha256":        {"X-Amz-Checksum-Sha256": base64.StdEncoding.EncodeToString(s256[:])},
		"sha1":          {"X-Amz-Checksum-Sha1": base64.StdEncoding.EncodeToString(s1[:])},
		"crc64nvme":     {"X-Amz-Checksum-Crc64nvme": c64},
		"md5 and crc32": {"Content-MD5": md5b64(body), "X-Amz-Checksum-Crc32": crc32b64(body)},
		"x-obj name":    {"X-Obj-Checksum-Crc32": crc32b64(body)},
	} {
		if d := del(h, body, e.alice); d.summary() != "+z" {
			t.Fatalf("%s: %s", name, d.summary())
		}
	}

	var many []string
	for i := range 1001 {
		many = append(many, fmt.Sprintf("k%d", i))
	}
	body = deleteBody(false, "a")
	tooMany := deleteBody(false, many...)
	for _, tt := range []struct {
		name   string
		status int
		code   s3.Code
		h      map[string]string
		body   string
		path   string
	}{
		{"no integrity header", 400, s3.InvalidRequest, nil, body, ""},
		{"md5 mismatch", 400, s3.BadDigest, map[string]string{"Content-MD5": md5b64(body + " ")}, body, ""},
		{"md5 invalid", 400, s3.InvalidDigest, map[string]string{"Content-MD5": "abc"}, body, ""},
		{"crc32 mismatch", 400, s3.BadDigest, map[string]string{"X-Amz-Checksum-Crc32": crc32b64(body + " ")}, body, ""},
		{"crc32 invalid", 400, s3.InvalidRequest, map[string]string{"X-Amz-Checksum-Crc32": "AAAAAAAA"}, body, ""},
		{"md5 right, crc32 wrong", 400, s3.BadDigest, map[string]string{"Content-MD5": md5b64(body), "X-Amz-Checksum-Crc32": crc32b64("x")}, body, ""},
		{"sha256 mismatch", 400, s3.BadDigest, map[string]string{"X-Amz-Checksum-Sha256": base64.StdEncoding.EncodeToString(s256[:])}, body, ""},
		{"not xml", 400, s3.MalformedXML, map[string]string{"Content-MD5": md5b64("keys")}, "keys", ""},
		{"no objects", 400, s3.MalformedXML, map[string]string{"Content-MD5": md5b64(deleteBody(true))}, deleteBody(true), ""},
		{"1001 objects", 400, s3.MalformedXML, map[string]string{"Content-MD5": md5b64(tooMany)}, tooMany, ""},
		{"missing bucket", 404, s3.NoSuchBucket, map[string]string{"Content-MD5": md5b64(body)}, body, "/nobkt"},
		{"too big", 400, s3types.MaxMessageLengthExceeded, map[string]string{"Content-MD5": md5b64(strings.Repeat(" ", maxDeleteBody+1))},
			strings.Repeat(" ", maxDeleteBody+1), ""},
		// A trailer needs an aws-chunked body with trailers: on a plain body it is no
		// integrity check.
		{"trailer on a plain body", 400, s3.InvalidRequest, map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32"}, body, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			path := tt.path
			if path == "" {
				path = "/bkt"
			}
			e.mustErr(tt.status, tt.code, mpReq{method: "POST", path: path, query: "delete", header: tt.h, body: tt.body, as: e.alice})
		})
	}
	e.t = t
	e.mustErr(405, s3.MethodNotAllowed, mpReq{method: "DELETE", path: "/bkt", query: "delete", as: e.alice})
}
