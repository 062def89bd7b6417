package s3

import (
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// Bucket is an S3 bucket record.
type Bucket struct {
	Name    string    `json:"name"`
	Owner   Owner     `json:"owner"`
	Created time.Time `json:"created"`
	ACL     ACL       `json:"acl"`
	// Policy is the bucket policy, if one is set.
	Policy *Policy `json:"policy,omitempty"`
	// Tags are the bucket's tags (PUT ?tagging), nil when it has none.
	Tags []Tag `json:"tags,omitempty"`
	// Deleting, when set, is when a DeleteBucket marked the record to check that the
	// bucket is empty (see DeleteBucket); object commits wait for it.
	Deleting time.Time `json:"deleting,omitzero"`
	// CORS are the bucket's CORS rules (PUT ?cors), nil when it has none.
	CORS []CORSRule `json:"cors,omitempty"`
	// Lifecycle is the bucket's lifecycle configuration (PUT ?lifecycle), nil when it
	// has none. A stored configuration is never changed in place.
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`
	// Encryption is the bucket's default encryption (PUT ?encryption), nil when none.
	Encryption *BucketEncryption `json:"encryption,omitempty"`
	// Versioning is the bucket's versioning state: "" (never enabled),
	// VersioningEnabled or VersioningSuspended (see versioning.go).
	Versioning string `json:"versioning,omitempty"`
	// ObjectLock, when not nil, says the bucket has Object Lock enabled (which it
	// never loses) and gives its default retention (see objectlock.go).
	ObjectLock *ObjectLockConfig `json:"object_lock,omitempty"`
}

// BucketInfo is one entry of a user's bucket list (defined in s3types).
type BucketInfo = s3types.BucketInfo

// MetaPair is one user metadata entry: the header name without its x-amz-meta- (or
// x-obj-meta-) prefix, lower-cased, and the value.
type MetaPair struct {
	Name  string `json:"n"`
	Value string `json:"v"`
}

// Manifest describes one stored version of an object: where its data is (the chunk id
// and the chunk size) and everything GET and HEAD answer with.
type Manifest struct {
	// UUID identifies this version's chunks (16 random bytes, hex in JSON).
	UUID string `json:"uuid"`
	// Size is the object's length in bytes.
	Size int64 `json:"size"`
	// ChunkSize is the size of every chunk but the last.
	ChunkSize int `json:"chunk_size"`
	// Blob says the data is in the blob file named UUID rather than in chunk records.
	Blob bool `json:"blob,omitempty"`
	// ETag is the entity tag without quotes: the hex MD5 of the data (multipart:
	// hex MD5 of the part MD5s, "-", the number of parts).
	ETag         string    `json:"etag"`
	ContentType  string    `json:"content_type,omitempty"`
	LastModified time.Time `json:"last_modified"`
	// Meta is the user metadata, in the order given.
	Meta []MetaPair `json:"meta,omitempty"`
	// Headers holds the stored standard headers: Cache-Control, Content-Disposition,
	// Content-Encoding, Content-Language, Expires (canonical names).
	Headers map[string]string `json:"headers,omitempty"`
	Owner   Owner             `json:"owner"`
	ACL     ACL               `json:"acl"`
	// Tags are the object's tags (x-amz-tagging, PUT ?tagging), at most MaxObjectTags.
	Tags []Tag `json:"tags,omitempty"`
	// Parts, for an object assembled by a multipart upload, are its data in order,
	// each stored under its own chunk id (UUID then names no data).
	Parts []Extent `json:"parts,omitempty"`
	// SSE, when set, says the data is encrypted at rest and how (every extent is
	// Sealed); Size and ETag stay the plaintext's.
	SSE *Encryption `json:"sse,omitempty"`
	// VersionID is the version's id in a versioned bucket ("" for the null version:
	// written before versioning was enabled, or while it was suspended).
	VersionID string `json:"version_id,omitempty"`
	// DeleteMarker says this version is a delete marker: it has no data, and only
	// the versions table holds it (see versioning.go).
	DeleteMarker bool `json:"delete_marker,omitempty"`
	// Retention is the version's Object Lock retention, nil when it has none.
	Retention *Retention `json:"retention,omitempty"`
	// LegalHold says the version is under an Object Lock legal hold.
	LegalHold bool `json:"legal_hold,omitempty"`
	// NoncurrentSince is when a noncurrent version stopped being current: its
	// successor's creation (zero for the current version, and in the current record).
	// The "ln" lifecycle index is derived from it (lifecyclenoncurrent.go).
	NoncurrentSince time.Time `json:"noncurrent_since,omitzero"`

	// bucket is the record of the bucket the service read the manifest in or committed
	// it against (never stored; see Manifest.Bucket).
	bucket *Bucket
}

// Extent is a run of an object's data stored under one chunk id: as chunk records of
// ChunkSize bytes, or as one blob file.
type Extent struct {
	ID        string `json:"id"`
	Size      int64  `json:"size"`
	ChunkSize int    `json:"chunk_size,omitempty"`
	Blob      bool   `json:"blob,omitempty"`
	// Sealed says the data is stored encrypted (core/s3/sse): Size is the plaintext's,
	// the chunks or blob hold sse.SealedSize(Size) bytes.
	Sealed bool `json:"sealed,omitempty"`
	// Part, for a part sealed in format 2 (Encryption.Format), is its part number, to
	// which its segments are bound (0 otherwise).
	Part int `json:"part,omitempty"`
}

// Extents returns where the object's data is, in order.
func (m *Manifest) Extents() []Extent {
	if len(m.Parts) > 0 {
		return m.Parts
	}
	return []Extent{{ID: m.UUID, Size: m.Size, ChunkSize: m.ChunkSize, Blob: m.Blob, Sealed: m.SSE != nil}}
}

// ObjectInfo is one entry of an object listing (defined in s3types).
type ObjectInfo = s3types.ObjectInfo

// ListOptions select the objects a listing returns.
type ListOptions struct {
	Prefix    string
	Delimiter string
	// After is exclusive: only keys (and common prefixes) greater than it are listed.
	After string
	// MaxKeys bounds objects plus common prefixes (0 gives an empty, untruncated page).
	MaxKeys int
}

// Listing is one page of an object listing, keys in byte order (defined in s3types).
type Listing = s3types.Listing
