package s3types

import "time"

// VersionInfo is one entry of a version listing: a version of an object or a delete
// marker.
type VersionInfo struct {
	Key string
	// VersionID is the version's id, "null" for the null version.
	VersionID string
	// IsLatest says this is the key's newest version; DeleteMarker that it is a delete
	// marker (Size and ETag are then unset).
	IsLatest, DeleteMarker bool
	Size                   int64
	ETag                   string
	LastModified           time.Time
	Owner                  Owner
}

// VersionListing is one page of a version listing: versions by key in byte order,
// each key's newest first.
type VersionListing struct {
	Versions       []VersionInfo
	CommonPrefixes []string
	// Truncated says more entries follow; NextKeyMarker and NextVersionIDMarker then
	// name the last entry of this page (NextVersionIDMarker is empty when it is a
	// common prefix).
	Truncated                          bool
	NextKeyMarker, NextVersionIDMarker string
}
