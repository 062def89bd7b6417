package s3xml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// msgMalformedXML is the text of MalformedXML (the same as MalformedACLError's).
const msgMalformedXML = "The XML you provided was not well-formed or did not validate against our published schema"

func errMalformedXML() error {
	return &s3types.Error{Code: s3types.MalformedXML, Message: msgMalformedXML}
}

// Decode unmarshals an XML request body into v with encoding/xml (element names in
// struct tags without a namespace match any namespace). Only white space, comments and
// processing instructions may follow the root element. Any failure is a 400
// MalformedXML *s3types.Error; v may then be partly filled.
func Decode(body []byte, v any) error {
	if err := decodeStrict(body, v); err != nil {
		return errMalformedXML()
	}
	return nil
}

// decodeStrict unmarshals the single root element of body into v and checks that
// nothing but white space, comments and processing instructions surround it.
func decodeStrict(body []byte, v any) error {
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")) // a UTF-8 byte order mark
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charsetReader
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("s3xml: decode: %w", err)
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("s3xml: after the root element: %w", err)
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst:
		case xml.CharData:
			if len(bytes.Trim(t, " \t\r\n")) != 0 {
				return errors.New("s3xml: text after the root element")
			}
		default:
			return fmt.Errorf("s3xml: unexpected %T after the root element", tok)
		}
	}
}

// charsetReader accepts the declared encodings that are UTF-8 or a subset of it.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	}
	return nil, fmt.Errorf("s3xml: unsupported encoding %q", label)
}

// createBucketDoc is a CreateBucketConfiguration request body.
type createBucketDoc struct {
	XMLName            xml.Name
	LocationConstraint string `xml:"LocationConstraint"`
}

// ParseCreateBucketConfiguration reads the optional body of PUT Bucket,
//
//	<CreateBucketConfiguration xmlns="…"><LocationConstraint>EU</LocationConstraint></CreateBucketConfiguration>
//
// and returns the location constraint, trimmed ("" when the body is empty or only
// white space, or has no LocationConstraint). Other child elements are ignored. A body
// that is not XML or whose root is not CreateBucketConfiguration is a 400 MalformedXML
// *s3types.Error.
func ParseCreateBucketConfiguration(body []byte) (location string, err error) {
	if len(bytes.Trim(body, " \t\r\n")) == 0 {
		return "", nil
	}
	var doc createBucketDoc
	if err := decodeStrict(body, &doc); err != nil || doc.XMLName.Local != "CreateBucketConfiguration" {
		return "", errMalformedXML()
	}
	return trim(doc.LocationConstraint), nil
}
