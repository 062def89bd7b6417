package s3xml

import (
	"encoding/xml"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MaxTaggingBody bounds the body of PUT ?tagging: room for the most tags a bucket may
// have (50), each key and value at its longest in characters and every character
// written as a character reference, with the elements around them.
const MaxTaggingBody = 256 << 10

// taggingDoc is a Tagging request body. Key and Value are pointers so that a missing
// element differs from an empty one.
type taggingDoc struct {
	XMLName xml.Name
	TagSet  *struct {
		Tags []struct {
			Key   *string `xml:"Key"`
			Value *string `xml:"Value"`
		} `xml:"Tag"`
	} `xml:"TagSet"`
}

// ParseTagging reads the body of PUT ?tagging (object or bucket),
//
//	<Tagging xmlns="…"><TagSet><Tag><Key>k</Key><Value>v</Value></Tag>…</TagSet></Tagging>
//
// and returns the tags in document order, keys and values as written (white space
// kept: it is part of a tag). A body that is not such a document, without a TagSet, or
// with a Tag lacking its Key or Value is a 400 MalformedXML *s3types.Error; the limits
// on the tags (count, lengths, unique keys) are the service's to check. The caller
// bounds the body (MaxTaggingBody).
func ParseTagging(body []byte) ([]s3types.Tag, error) {
	var doc taggingDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "Tagging" || doc.TagSet == nil {
		return nil, errMalformedXML()
	}
	out := make([]s3types.Tag, 0, len(doc.TagSet.Tags))
	for _, t := range doc.TagSet.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, errMalformedXML()
		}
		out = append(out, s3types.Tag{Key: *t.Key, Value: *t.Value})
	}
	return out, nil
}

// MarshalTagging renders the answer of GET ?tagging:
//
//	<Tagging xmlns="…"><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tagging>
func MarshalTagging(tags []s3types.Tag) []byte {
	w := NewWriter("Tagging", true, 128+64*len(tags))
	w.Open("TagSet")
	for _, t := range tags {
		w.Open("Tag")
		w.Elem("Key", t.Key)
		w.Elem("Value", t.Value)
		w.Close("Tag")
	}
	w.Close("TagSet")
	return w.Bytes()
}
