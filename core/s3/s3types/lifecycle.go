package s3types

import "time"

// Lifecycle is a bucket's lifecycle configuration (PUT ?lifecycle): its rules, in the
// order given. The wire form is s3xml's; the limits are core/s3's (CheckLifecycle).
type Lifecycle struct {
	Rules []LifecycleRule `json:"rules"`
}

// LifecycleRule is one rule of a lifecycle configuration: which objects it selects
// (Filter) and what it does to them (the actions; at least one is set).
type LifecycleRule struct {
	// ID names the rule (at most 255 characters, unique in the configuration).
	ID string `json:"id"`
	// Enabled is Status: Enabled (true) or Disabled.
	Enabled bool `json:"enabled"`
	// Filter selects the objects (and uploads) the rule applies to.
	Filter LifecycleFilter `json:"filter"`
	// Expiration expires current objects (or removes expired delete markers).
	Expiration *LifecycleExpiration `json:"expiration,omitempty"`
	// NoncurrentExpiration expires noncurrent versions (a versioned bucket's).
	NoncurrentExpiration *NoncurrentExpiration `json:"noncurrent_expiration,omitempty"`
	// AbortUpload aborts the multipart uploads the rule selects.
	AbortUpload *AbortIncompleteUpload `json:"abort_upload,omitempty"`
}

// AbortIncompleteUpload is a rule's AbortIncompleteMultipartUpload action: an upload
// is aborted DaysAfterInitiation days after it was initiated (rounded up to the next
// midnight UTC).
type AbortIncompleteUpload struct {
	DaysAfterInitiation int `json:"days"`
}

// LifecycleFilter selects objects by key prefix, tags and size; every condition set
// must hold. Form records how the request wrote it, so that GET answers in that form.
type LifecycleFilter struct {
	Form   FilterForm `json:"form,omitempty"`
	Prefix string     `json:"prefix,omitempty"`
	// HasPrefix says a Filter (or its And) had a Prefix element, an empty one too, so
	// that GET writes it back as sent: <Filter><Prefix></Prefix></Filter> is not
	// <Filter/> (both select every object).
	HasPrefix bool `json:"has_prefix,omitempty"`
	// Tags must all be among the object's tags (key and value).
	Tags []Tag `json:"tags,omitempty"`
	// SizeGreaterThan and SizeLessThan bound the object's size in bytes, exclusively;
	// nil: no bound.
	SizeGreaterThan *int64 `json:"size_gt,omitempty"`
	SizeLessThan    *int64 `json:"size_lt,omitempty"`
}

// FilterForm is how a rule's filter was written.
type FilterForm string

// The forms of a rule's filter.
const (
	// FilterNone is a rule without Filter or Prefix: every object.
	FilterNone FilterForm = ""
	// FilterLegacyPrefix is the rule-level <Prefix> of the first lifecycle API.
	FilterLegacyPrefix FilterForm = "legacy"
	// FilterSingle is a <Filter> with at most one condition (an empty Filter is every
	// object).
	FilterSingle FilterForm = "single"
	// FilterAnd is a <Filter><And>…</And></Filter>.
	FilterAnd FilterForm = "and"
)

// LifecycleExpiration is a rule's Expiration action: one of Days (after the object's
// creation, rounded up to the next midnight UTC), Date (from that midnight UTC on) or
// ExpiredObjectDeleteMarker.
type LifecycleExpiration struct {
	Days int       `json:"days,omitempty"`
	Date time.Time `json:"date,omitzero"`
	// DeleteMarker is ExpiredObjectDeleteMarker; nil when absent.
	DeleteMarker *bool `json:"delete_marker,omitempty"`
}

// NoncurrentExpiration is a rule's NoncurrentVersionExpiration action: a noncurrent
// version expires NoncurrentDays after it became noncurrent, keeping the newest
// NewerVersions noncurrent versions (0: none kept).
type NoncurrentExpiration struct {
	NoncurrentDays int `json:"noncurrent_days"`
	NewerVersions  int `json:"newer_versions,omitempty"`
}
