package s3xml

import (
	"encoding/xml"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// versioningDoc is a VersioningConfiguration request body. Status and MfaDelete are
// pointers so that a missing element differs from an empty one.
type versioningDoc struct {
	XMLName   xml.Name
	Status    *string `xml:"Status"`
	MfaDelete *string `xml:"MfaDelete"`
}

// ParseVersioningConfiguration reads the body of PUT ?versioning,
//
//	<VersioningConfiguration xmlns="…"><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>
//
// and returns Status and MfaDelete, trimmed ("" when absent); their values are the
// service's to check. A body that is not such a document is a 400 MalformedXML
// *s3types.Error. The caller bounds the body.
func ParseVersioningConfiguration(body []byte) (status, mfaDelete string, err error) {
	var doc versioningDoc
	if err := Decode(body, &doc); err != nil || doc.XMLName.Local != "VersioningConfiguration" {
		return "", "", errMalformedXML()
	}
	if doc.Status != nil {
		status = trim(*doc.Status)
	}
	if doc.MfaDelete != nil {
		mfaDelete = trim(*doc.MfaDelete)
	}
	return status, mfaDelete, nil
}

// MarshalVersioningConfiguration renders the answer of GET ?versioning: an empty
// VersioningConfiguration for a bucket never versioned, else
//
//	<VersioningConfiguration xmlns="…"><Status>Enabled</Status></VersioningConfiguration>
func MarshalVersioningConfiguration(status string) []byte {
	w := NewWriter("VersioningConfiguration", true, 0)
	if status != "" {
		w.Elem("Status", status)
	}
	return w.Bytes()
}

// ListVersions is what a ListObjectVersions answer echoes and lists.
type ListVersions struct {
	Bucket, Prefix, KeyMarker, VersionIDMarker, Delimiter string
	MaxKeys                                               int
	// EncodingURL is set when the request had encoding-type=url.
	EncodingURL bool
	// Listing is the page; nil lists nothing.
	Listing *s3types.VersionListing
}

// MarshalListVersions renders a ListVersionsResult, elements in this order:
//
//	Name, Prefix, KeyMarker, VersionIdMarker, MaxKeys, Delimiter (when not empty),
//	EncodingType (url, when asked), IsTruncated, NextKeyMarker and NextVersionIdMarker
//	(when truncated; the latter when the page ends with a version), then the entries in listing order: Version{Key, VersionId,
//	IsLatest, LastModified, ETag, Size, StorageClass STANDARD, Owner} or
//	DeleteMarker{Key, VersionId, IsLatest, LastModified, Owner}, then
//	CommonPrefixes{Prefix}…
//
// With EncodingURL, Prefix, KeyMarker, NextKeyMarker, Delimiter, Key and
// CommonPrefixes/Prefix are encoded by [AppendURLEncoded] (the elements botocore
// decodes for ListObjectVersions).
func MarshalListVersions(l ListVersions) []byte {
	ls := l.Listing
	if ls == nil {
		ls = &s3types.VersionListing{}
	}
	enc := l.EncodingURL
	w := NewWriter("ListVersionsResult", true, 512+400*len(ls.Versions)+70*len(ls.CommonPrefixes))
	w.Elem("Name", l.Bucket)
	w.ElemURL("Prefix", l.Prefix, enc)
	w.ElemURL("KeyMarker", l.KeyMarker, enc)
	w.Elem("VersionIdMarker", l.VersionIDMarker)
	w.ElemInt("MaxKeys", int64(l.MaxKeys))
	writeDelimiter(w, l.Delimiter, enc)
	w.ElemBool("IsTruncated", ls.Truncated)
	if ls.Truncated {
		w.ElemURL("NextKeyMarker", ls.NextKeyMarker, enc)
		if ls.NextVersionIDMarker != "" {
			w.Elem("NextVersionIdMarker", ls.NextVersionIDMarker)
		}
	}
	for i := range ls.Versions {
		writeVersion(w, &ls.Versions[i], enc)
	}
	writeCommonPrefixes(w, ls.CommonPrefixes, enc)
	return w.Bytes()
}

// writeVersion writes one Version or DeleteMarker entry.
func writeVersion(w *Writer, v *s3types.VersionInfo, enc bool) {
	name := "Version"
	if v.DeleteMarker {
		name = "DeleteMarker"
	}
	w.Open(name)
	w.ElemURL("Key", v.Key, enc)
	w.Elem("VersionId", v.VersionID)
	w.ElemBool("IsLatest", v.IsLatest)
	w.ElemTime("LastModified", v.LastModified)
	if !v.DeleteMarker {
		w.ElemETag("ETag", v.ETag)
		w.ElemInt("Size", v.Size)
		w.Raw("<StorageClass>STANDARD</StorageClass>")
	}
	writeOwner(w, v.Owner)
	w.Close(name)
}
