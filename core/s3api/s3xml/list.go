package s3xml

import (
	"github.com/cairnkv/cairn/core/s3/s3types"
)

// MarshalBuckets renders the answer of GET Service:
//
//	<ListAllMyBucketsResult xmlns="…"><Owner><ID/><DisplayName/></Owner><Buckets>
//	<Bucket><Name/><CreationDate/></Bucket>…</Buckets></ListAllMyBucketsResult>
//
// (on one line; <Buckets></Buckets> when there are none).
func MarshalBuckets(owner s3types.Owner, buckets []s3types.BucketInfo) []byte {
	w := NewWriter("ListAllMyBucketsResult", true, 256+100*len(buckets))
	writeOwner(w, owner)
	w.Open("Buckets")
	for _, b := range buckets {
		w.Open("Bucket")
		w.Elem("Name", b.Name)
		w.ElemTime("CreationDate", b.Created)
		w.Close("Bucket")
	}
	w.Close("Buckets")
	return w.Bytes()
}

// ListV1 is what a ListObjects (version 1) answer echoes and lists.
type ListV1 struct {
	Bucket, Prefix, Marker, Delimiter string
	MaxKeys                           int
	// EncodingURL is set when the request had encoding-type=url.
	EncodingURL bool
	// Listing is the page; nil lists nothing.
	Listing *s3types.Listing
}

// MarshalListV1 renders a ListBucketResult (ListObjects version 1), elements in this
// order:
//
//	Name, Prefix, Marker, MaxKeys, Delimiter (when not empty), EncodingType (url, when
//	asked), IsTruncated, NextMarker (when truncated), Contents{Key, LastModified, ETag,
//	Size, StorageClass STANDARD, Owner{ID, DisplayName}}…, CommonPrefixes{Prefix}…
//
// NextMarker is the listing's NextMarker, or when that is empty the greater of the last
// key and the last common prefix of the page.
//
// With EncodingURL, Key, Marker, Delimiter, NextMarker and CommonPrefixes/Prefix are
// encoded by [AppendURLEncoded]; Prefix is not: botocore, which adds encoding-type=url
// to every ListObjects call by itself, decodes exactly those five and not Prefix (S3
// conformance tests test_bucket_list_prefix_unreadable expects the prefix "\n" back
// verbatim), which matches AWS.
func MarshalListV1(l ListV1) []byte {
	ls := l.Listing
	if ls == nil {
		ls = &s3types.Listing{}
	}
	enc := l.EncodingURL
	w := NewWriter("ListBucketResult", true, listSizeHint(ls, true))
	w.Elem("Name", l.Bucket)
	w.Elem("Prefix", l.Prefix)
	w.ElemURL("Marker", l.Marker, enc)
	w.ElemInt("MaxKeys", int64(l.MaxKeys))
	writeDelimiter(w, l.Delimiter, enc)
	w.ElemBool("IsTruncated", ls.Truncated)
	if ls.Truncated {
		w.ElemURL("NextMarker", nextMarker(ls), enc)
	}
	writeEntries(w, ls, enc, true)
	return w.Bytes()
}

// ListV2 is what a ListObjectsV2 answer echoes and lists.
type ListV2 struct {
	Bucket, Prefix, Delimiter, StartAfter string
	// ContinuationToken is echoed when not empty; NextContinuationToken is written
	// when the listing is truncated. Both are opaque and written as plain text.
	ContinuationToken, NextContinuationToken string
	MaxKeys                                  int
	// EncodingURL is set when the request had encoding-type=url; FetchOwner when it had
	// fetch-owner=true.
	EncodingURL, FetchOwner bool
	// Listing is the page; nil lists nothing.
	Listing *s3types.Listing
}

// MarshalListV2 renders a ListBucketResult (ListObjectsV2), elements in this order:
//
//	Name, Prefix, KeyCount, MaxKeys, Delimiter (when not empty), EncodingType (url, when
//	asked), IsTruncated, ContinuationToken (when given), NextContinuationToken (when
//	truncated), StartAfter (when given), Contents{Key, LastModified, ETag, Size,
//	StorageClass STANDARD, Owner{ID, DisplayName} only with FetchOwner}…,
//	CommonPrefixes{Prefix}…
//
// KeyCount counts the objects and common prefixes of the page. With EncodingURL,
// Prefix, Delimiter, StartAfter, Key and CommonPrefixes/Prefix are encoded by
// [AppendURLEncoded] (the elements botocore decodes for ListObjectsV2); the tokens are
// not. EncodingType sits next to Delimiter as in ListObjects version 1 (AWS documents
// no order and clients read elements by name).
func MarshalListV2(l ListV2) []byte {
	ls := l.Listing
	if ls == nil {
		ls = &s3types.Listing{}
	}
	enc := l.EncodingURL
	w := NewWriter("ListBucketResult", true, listSizeHint(ls, l.FetchOwner))
	w.Elem("Name", l.Bucket)
	w.ElemURL("Prefix", l.Prefix, enc)
	w.ElemInt("KeyCount", int64(len(ls.Objects)+len(ls.CommonPrefixes)))
	w.ElemInt("MaxKeys", int64(l.MaxKeys))
	writeDelimiter(w, l.Delimiter, enc)
	w.ElemBool("IsTruncated", ls.Truncated)
	if l.ContinuationToken != "" {
		w.Elem("ContinuationToken", l.ContinuationToken)
	}
	if ls.Truncated {
		w.Elem("NextContinuationToken", l.NextContinuationToken)
	}
	if l.StartAfter != "" {
		w.ElemURL("StartAfter", l.StartAfter, enc)
	}
	writeEntries(w, ls, enc, l.FetchOwner)
	return w.Bytes()
}

// writeEntries writes the Contents and CommonPrefixes of a listing page.
func writeEntries(w *Writer, ls *s3types.Listing, enc, owner bool) {
	for i := range ls.Objects {
		o := &ls.Objects[i]
		w.Open("Contents")
		w.ElemURL("Key", o.Key, enc)
		w.ElemTime("LastModified", o.LastModified)
		w.ElemETag("ETag", o.ETag)
		w.ElemInt("Size", o.Size)
		w.Raw("<StorageClass>STANDARD</StorageClass>")
		if owner {
			writeOwner(w, o.Owner)
		}
		w.Close("Contents")
	}
	writeCommonPrefixes(w, ls.CommonPrefixes, enc)
}

// writeDelimiter writes a listing's Delimiter (when not empty) and EncodingType (url,
// when asked).
func writeDelimiter(w *Writer, delimiter string, enc bool) {
	if delimiter != "" {
		w.ElemURL("Delimiter", delimiter, enc)
	}
	if enc {
		w.Raw("<EncodingType>url</EncodingType>")
	}
}

// writeCommonPrefixes writes a listing's CommonPrefixes{Prefix} entries.
func writeCommonPrefixes(w *Writer, prefixes []string, enc bool) {
	for _, p := range prefixes {
		w.Open("CommonPrefixes")
		w.ElemURL("Prefix", p, enc)
		w.Close("CommonPrefixes")
	}
}

// nextMarker is the NextMarker of a truncated page.
func nextMarker(ls *s3types.Listing) string {
	if ls.NextMarker != "" {
		return ls.NextMarker
	}
	m := ""
	if n := len(ls.Objects); n > 0 {
		m = ls.Objects[n-1].Key
	}
	if n := len(ls.CommonPrefixes); n > 0 && ls.CommonPrefixes[n-1] > m {
		m = ls.CommonPrefixes[n-1]
	}
	return m
}

// listSizeHint estimates the size of a listing document.
func listSizeHint(ls *s3types.Listing, owner bool) int {
	per := 240
	if owner {
		per += 140
	}
	return 512 + per*len(ls.Objects) + 70*len(ls.CommonPrefixes)
}

// MarshalLocation renders the answer of GET ?location:
//
//	<LocationConstraint xmlns="…">region</LocationConstraint>
//
// The region is written as given; AWS answers an empty element for us-east-1, which is
// the caller's choice to make.
func MarshalLocation(region string) []byte {
	w := NewWriter("LocationConstraint", true, 0)
	w.buf = AppendText(w.buf, region)
	return w.Bytes()
}
