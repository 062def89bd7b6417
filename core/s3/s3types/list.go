package s3types

import "time"

// BucketInfo is one entry of a user's bucket list.
type BucketInfo struct {
	Name    string
	Created time.Time
}

// ObjectInfo is one entry of an object listing.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
	Owner        Owner
}

// Listing is one page of an object listing, keys in byte order.
type Listing struct {
	Objects        []ObjectInfo
	CommonPrefixes []string
	// Truncated says more entries follow; NextMarker is then the last key or common
	// prefix of this page (the After of the next).
	Truncated  bool
	NextMarker string
}

// MaxPartNumber is the highest part number of a multipart upload (parts are 1 to
// MaxPartNumber), so also the most parts a completion request may name.
const MaxPartNumber = 10000

// CompletePart names a part in a completion request.
type CompletePart struct {
	Number int
	ETag   string
}
