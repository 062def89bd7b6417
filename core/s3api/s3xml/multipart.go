package s3xml

import (
	"encoding/xml"
	"strconv"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Limits of the request documents of this file.
const (
	// MaxCompleteParts bounds the parts a CompleteMultipartUpload document may name
	// (one per part number).
	MaxCompleteParts = s3types.MaxPartNumber
	// MaxDeleteObjects bounds the objects of one multi-object Delete document (S3's
	// limit; more is MalformedXML).
	MaxDeleteObjects = 1000
)

// MarshalInitiateMultipartUpload renders the answer of POST ?uploads:
//
//	<InitiateMultipartUploadResult xmlns="…"><Bucket/><Key/><UploadId/></InitiateMultipartUploadResult>
func MarshalInitiateMultipartUpload(bucket, key, uploadID string) []byte {
	w := NewWriter("InitiateMultipartUploadResult", true, 256+len(bucket)+len(key)+len(uploadID))
	w.Elem("Bucket", bucket)
	w.Elem("Key", key)
	w.Elem("UploadId", uploadID)
	return w.Bytes()
}

// completeDoc is a CompleteMultipartUpload request body. The checksum elements newer
// clients add to each Part are ignored.
type completeDoc struct {
	XMLName xml.Name
	Parts   []struct {
		PartNumber *string `xml:"PartNumber"`
		ETag       *string `xml:"ETag"`
	} `xml:"Part"`
}

// ParseCompleteMultipartUpload reads the body of POST ?uploadId=…,
//
//	<CompleteMultipartUpload xmlns="…"><Part><PartNumber>1</PartNumber><ETag>"…"</ETag></Part>…</CompleteMultipartUpload>
//
// and returns its parts in document order, ETags with surrounding white space removed
// (quotes are kept; the service ignores them). Order, existence and sizes of the parts
// are the service's to check. A body that is not such a document, a part without a
// decimal PartNumber or without an ETag, no parts at all, or more than
// [MaxCompleteParts] parts is a 400 MalformedXML *s3types.Error. The caller bounds the body
// size.
func ParseCompleteMultipartUpload(body []byte) ([]s3types.CompletePart, error) {
	var doc completeDoc
	if err := decodeStrict(body, &doc); err != nil || doc.XMLName.Local != "CompleteMultipartUpload" {
		return nil, errMalformedXML()
	}
	if len(doc.Parts) == 0 || len(doc.Parts) > MaxCompleteParts {
		return nil, errMalformedXML()
	}
	out := make([]s3types.CompletePart, 0, len(doc.Parts))
	for _, p := range doc.Parts {
		if p.PartNumber == nil || p.ETag == nil {
			return nil, errMalformedXML()
		}
		n, err := strconv.Atoi(trim(*p.PartNumber))
		if err != nil {
			return nil, errMalformedXML()
		}
		out = append(out, s3types.CompletePart{Number: n, ETag: trim(*p.ETag)})
	}
	return out, nil
}

// MarshalCompleteMultipartUpload renders the answer of a completed upload:
//
//	<CompleteMultipartUploadResult xmlns="…"><Location/><Bucket/><Key/><ETag>"…"</ETag></CompleteMultipartUploadResult>
func MarshalCompleteMultipartUpload(location, bucket, key, etag string) []byte {
	return marshalStored("CompleteMultipartUploadResult", true, location, bucket, key, etag)
}

// PartList is what a ListParts answer echoes and lists.
type PartList struct {
	Bucket, Key, UploadID string
	// Initiator and Owner are written as Initiator{ID, DisplayName} and
	// Owner{ID, DisplayName}.
	Initiator, Owner s3types.Owner
	// PartNumberMarker is the request's marker (0 when none); MaxParts the page size.
	PartNumberMarker, MaxParts int
	// Truncated says more parts follow the page.
	Truncated bool
	Parts     []Part
}

// Part is one part of a ListParts answer.
type Part struct {
	Number       int
	LastModified time.Time
	ETag         string // without quotes
	Size         int64
}

// MarshalListParts renders a ListPartsResult, elements in this order:
//
//	Bucket, Key, UploadId, Initiator{ID, DisplayName}, Owner{ID, DisplayName},
//	StorageClass STANDARD, PartNumberMarker, NextPartNumberMarker, MaxParts,
//	IsTruncated, Part{PartNumber, LastModified, ETag, Size}…
//
// NextPartNumberMarker is the number of the page's last part (0 when the page is empty),
// the marker of the next page when truncated.
func MarshalListParts(l PartList) []byte {
	w := NewWriter("ListPartsResult", true, 512+len(l.Key)+200*len(l.Parts))
	w.Elem("Bucket", l.Bucket)
	w.Elem("Key", l.Key)
	w.Elem("UploadId", l.UploadID)
	writePerson(w, "Initiator", l.Initiator)
	writePerson(w, "Owner", l.Owner)
	w.Raw("<StorageClass>STANDARD</StorageClass>")
	w.ElemInt("PartNumberMarker", int64(l.PartNumberMarker))
	next := 0
	if n := len(l.Parts); n > 0 {
		next = l.Parts[n-1].Number
	}
	w.ElemInt("NextPartNumberMarker", int64(next))
	w.ElemInt("MaxParts", int64(l.MaxParts))
	w.ElemBool("IsTruncated", l.Truncated)
	for i := range l.Parts {
		p := &l.Parts[i]
		w.Open("Part")
		w.ElemInt("PartNumber", int64(p.Number))
		w.ElemTime("LastModified", p.LastModified)
		w.ElemETag("ETag", p.ETag)
		w.ElemInt("Size", p.Size)
		w.Close("Part")
	}
	return w.Bytes()
}

// writePerson writes <name><ID/><DisplayName/></name>.
func writePerson(w *Writer, name string, o s3types.Owner) {
	w.Open(name)
	w.Elem("ID", o.ID)
	w.Elem("DisplayName", o.DisplayName)
	w.Close(name)
}

// UploadList is what a ListMultipartUploads answer echoes and lists.
type UploadList struct {
	Bucket, Prefix, Delimiter, KeyMarker, UploadIDMarker string
	MaxUploads                                           int
	// EncodingURL is set when the request had encoding-type=url.
	EncodingURL bool
	// Listing is the page; nil lists nothing.
	Listing *UploadPage
}

// UploadPage is a page of uploads in progress, by key then upload id.
type UploadPage struct {
	Uploads                           []Upload
	CommonPrefixes                    []string
	Truncated                         bool
	NextKeyMarker, NextUploadIDMarker string
}

// Upload is one upload in progress of a ListMultipartUploads answer; its owner is
// written as both Initiator and Owner.
type Upload struct {
	Key, ID   string
	Owner     s3types.Owner
	Initiated time.Time
}

// MarshalListUploads renders a ListMultipartUploadsResult, elements in this order:
//
//	Bucket, KeyMarker, UploadIdMarker, NextKeyMarker, NextUploadIdMarker, Delimiter
//	(when not empty), Prefix, MaxUploads, EncodingType (url, when asked), IsTruncated,
//	Upload{Key, UploadId, Initiator{ID, DisplayName}, Owner{ID, DisplayName},
//	StorageClass STANDARD, Initiated}…, CommonPrefixes{Prefix}…
//
// Initiator and Owner are both the upload's owner. With EncodingURL, KeyMarker,
// NextKeyMarker, Delimiter, Prefix, Upload/Key and CommonPrefixes/Prefix are encoded by
// [AppendURLEncoded] (the elements AWS documents as encoded); upload ids never need it.
func MarshalListUploads(l UploadList) []byte {
	ls := l.Listing
	if ls == nil {
		ls = &UploadPage{}
	}
	enc := l.EncodingURL
	w := NewWriter("ListMultipartUploadsResult", true, 512+400*len(ls.Uploads)+70*len(ls.CommonPrefixes))
	w.Elem("Bucket", l.Bucket)
	w.ElemURL("KeyMarker", l.KeyMarker, enc)
	w.Elem("UploadIdMarker", l.UploadIDMarker)
	w.ElemURL("NextKeyMarker", ls.NextKeyMarker, enc)
	w.Elem("NextUploadIdMarker", ls.NextUploadIDMarker)
	if l.Delimiter != "" {
		w.ElemURL("Delimiter", l.Delimiter, enc)
	}
	w.ElemURL("Prefix", l.Prefix, enc)
	w.ElemInt("MaxUploads", int64(l.MaxUploads))
	if enc {
		w.Raw("<EncodingType>url</EncodingType>")
	}
	w.ElemBool("IsTruncated", ls.Truncated)
	for i := range ls.Uploads {
		u := &ls.Uploads[i]
		w.Open("Upload")
		w.ElemURL("Key", u.Key, enc)
		w.Elem("UploadId", u.ID)
		writePerson(w, "Initiator", u.Owner)
		writePerson(w, "Owner", u.Owner)
		w.Raw("<StorageClass>STANDARD</StorageClass>")
		w.ElemTime("Initiated", u.Initiated)
		w.Close("Upload")
	}
	writeCommonPrefixes(w, ls.CommonPrefixes, enc)
	return w.Bytes()
}

// MarshalCopyObjectResult renders the answer of a copy (PUT with x-amz-copy-source):
//
//	<CopyObjectResult xmlns="…"><LastModified/><ETag>"…"</ETag></CopyObjectResult>
func MarshalCopyObjectResult(lastModified time.Time, etag string) []byte {
	return marshalCopyResult("CopyObjectResult", lastModified, etag)
}

// MarshalCopyPartResult renders the answer of an upload-part copy:
//
//	<CopyPartResult xmlns="…"><LastModified/><ETag>"…"</ETag></CopyPartResult>
func MarshalCopyPartResult(lastModified time.Time, etag string) []byte {
	return marshalCopyResult("CopyPartResult", lastModified, etag)
}

func marshalCopyResult(root string, lastModified time.Time, etag string) []byte {
	w := NewWriter(root, true, 0)
	w.ElemTime("LastModified", lastModified)
	w.ElemETag("ETag", etag)
	return w.Bytes()
}

// DeleteObject is one object a multi-object Delete names.
type DeleteObject struct {
	Key string
	// VersionID is the VersionId element's text ("" when absent).
	VersionID string
}

// DeleteRequest is a multi-object Delete request body.
type DeleteRequest struct {
	// Quiet asks for the errors only (no Deleted entries).
	Quiet   bool
	Objects []DeleteObject
}

// deleteDoc is the shape of a Delete request body.
type deleteDoc struct {
	XMLName xml.Name
	Quiet   *string `xml:"Quiet"`
	Objects []struct {
		Key       *string `xml:"Key"`
		VersionID string  `xml:"VersionId"`
	} `xml:"Object"`
}

// ParseDelete reads the body of POST ?delete,
//
//	<Delete xmlns="…"><Quiet>true</Quiet><Object><Key>k</Key><VersionId>v</VersionId></Object>…</Delete>
//
// Keys are taken exactly as written (white space is significant in a key); Quiet and
// VersionId are trimmed. Quiet is an XML Schema boolean (true, false, 1, 0; absent is
// false). A body that is not such a document, an Object without a Key, no objects, more
// than [MaxDeleteObjects] objects, or another Quiet value is a 400 MalformedXML
// *s3types.Error. The caller bounds the body size.
func ParseDelete(body []byte) (*DeleteRequest, error) {
	var doc deleteDoc
	if err := decodeStrict(body, &doc); err != nil || doc.XMLName.Local != "Delete" {
		return nil, errMalformedXML()
	}
	if len(doc.Objects) == 0 || len(doc.Objects) > MaxDeleteObjects {
		return nil, errMalformedXML()
	}
	req := &DeleteRequest{Objects: make([]DeleteObject, 0, len(doc.Objects))}
	if doc.Quiet != nil {
		switch trim(*doc.Quiet) {
		case "true", "1":
			req.Quiet = true
		case "false", "0":
		default:
			return nil, errMalformedXML()
		}
	}
	for _, o := range doc.Objects {
		if o.Key == nil {
			return nil, errMalformedXML()
		}
		req.Objects = append(req.Objects, DeleteObject{Key: *o.Key, VersionID: trim(o.VersionID)})
	}
	return req, nil
}

// DeleteOutcome is what became of one object of a multi-object delete.
type DeleteOutcome struct {
	Key, VersionID string
	// Code is empty when the object was deleted (or was absent); otherwise Code and
	// Message are the error.
	Code    s3types.Code
	Message string
	// DeleteMarker says the delete made, or removed, a delete marker, whose version id
	// is DeleteMarkerVersionID.
	DeleteMarker          bool
	DeleteMarkerVersionID string
}

// MarshalDeleteResult renders the answer of a multi-object delete, entries in the order
// given:
//
//	<DeleteResult xmlns="…"><Deleted><Key/>[<VersionId/>][<DeleteMarker/><DeleteMarkerVersionId/>]</Deleted>…
//	<Error><Key/>[<VersionId/>]<Code/><Message/></Error>…</DeleteResult>
//
// VersionId is written when not empty. In quiet mode the Deleted entries are left out.
func MarshalDeleteResult(quiet bool, outcomes []DeleteOutcome) []byte {
	w := NewWriter("DeleteResult", true, 256+120*len(outcomes))
	for i := range outcomes {
		o := &outcomes[i]
		if o.Code == "" {
			if quiet {
				continue
			}
			w.Open("Deleted")
			w.Elem("Key", o.Key)
			if o.VersionID != "" {
				w.Elem("VersionId", o.VersionID)
			}
			if o.DeleteMarker {
				w.Raw("<DeleteMarker>true</DeleteMarker>")
				w.Elem("DeleteMarkerVersionId", o.DeleteMarkerVersionID)
			}
			w.Close("Deleted")
			continue
		}
		w.Open("Error")
		w.Elem("Key", o.Key)
		if o.VersionID != "" {
			w.Elem("VersionId", o.VersionID)
		}
		w.Elem("Code", string(o.Code))
		w.Elem("Message", o.Message)
		w.Close("Error")
	}
	return w.Bytes()
}
