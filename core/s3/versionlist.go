package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/s3/s3types"
	"github.com/cairnkv/cairn/core/storage"
)

// VersionInfo is one entry of a version listing (defined in s3types).
type VersionInfo = s3types.VersionInfo

// VersionListing is one page of a version listing (defined in s3types).
type VersionListing = s3types.VersionListing

// VersionListOptions select the versions a version listing returns.
type VersionListOptions struct {
	Prefix, Delimiter string
	// KeyMarker and VersionIDMarker say where the listing starts: after that version
	// of KeyMarker, or with no VersionIDMarker after every version of KeyMarker.
	KeyMarker, VersionIDMarker string
	// MaxKeys bounds versions plus common prefixes (0 gives an empty, untruncated page).
	MaxKeys int
}

// ListObjectVersions lists a page of the bucket's versions and delete markers
// (s3:ListBucketVersions, else READ on the bucket), from one snapshot: keys in byte
// order, each key's versions newest first; keys under a common prefix roll up into it
// as in ListObjects. It merges two ordered scans, the current records (a key without
// versions records has one version, the null one) and the versions table, seeking past
// what a page does not list: a page reads at most its entries, the current records of
// the keys it lists, and one entry more.
func (s *Service) ListObjectVersions(ctx context.Context, r Requester, bucket string, o VersionListOptions) (*VersionListing, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !s.allowed(b, nil, r, ActionListBucketVersions, "", PermRead) {
		return nil, errAccessDenied
	}
	if o.VersionIDMarker != "" {
		if o.KeyMarker == "" {
			return nil, Errorf(InvalidArgument, "A version-id marker cannot be specified without a key marker.")
		}
		if err := CheckVersionID(o.VersionIDMarker); err != nil {
			return nil, err
		}
	}
	if o.MaxKeys > MaxListKeys || o.MaxKeys < 0 {
		o.MaxKeys = MaxListKeys
	}
	out := &VersionListing{}
	if o.MaxKeys == 0 {
		return out, nil
	}
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return nil, wrapf(err, "list versions %s", bucket)
	}
	defer snap.Release()
	l := &versionLister{ctx: ctx, snap: snap, bucket: bucket, o: o, out: out}
	defer l.release()
	if err := l.start(); err != nil {
		return nil, err
	}
	if err := l.run(); err != nil {
		return nil, err
	}
	if !out.Truncated {
		out.NextKeyMarker, out.NextVersionIDMarker = "", ""
	}
	return out, nil
}

// versionLister is one page of a version listing in progress: a cursor over the
// current records (cur*) and one over the versions table (ver*).
type versionLister struct {
	ctx    context.Context
	snap   *storage.Snapshot
	bucket string
	o      VersionListOptions
	out    *VersionListing

	curIt, verIt   *storage.Iterator
	curOK, verOK   bool
	curKey, verKey string
	verPrefix      []byte // keyVersionsPrefix(bucket, verKey)
	count          int
	// resumeKey is the key the page starts in the middle of (after VersionIDMarker);
	// resumeLatest is the slot key of its newest version then.
	resumeKey    string
	resumeLatest []byte
}

func (l *versionLister) release() {
	if l.curIt != nil {
		l.curIt.Release()
	}
	if l.verIt != nil {
		l.verIt.Release()
	}
}

// start opens both cursors at the page's first entry.
func (l *versionLister) start() error {
	l.curIt = l.snap.IteratePrefix(storage.AppendComponentPrefix(objectPrefix(l.bucket), l.o.Prefix))
	l.verIt = l.snap.IteratePrefix(storage.AppendComponentPrefix(versionsPrefix(l.bucket), l.o.Prefix))
	km := l.o.KeyMarker
	if km == "" || km < l.o.Prefix {
		l.curOK, l.verOK = l.curIt.Next(), l.verIt.Next()
		return l.decode()
	}
	l.curOK = l.curIt.Seek(objectKey(l.bucket, km))
	if err := l.decode(); err != nil {
		return err
	}
	if l.curOK && l.curKey == km {
		l.curOK = l.curIt.Next()
	}
	if err := l.seekVersions(km); err != nil {
		return err
	}
	return l.decode()
}

// seekVersions places the versions cursor after KeyMarker's version VersionIDMarker,
// or after all of KeyMarker's versions.
func (l *versionLister) seekVersions(km string) error {
	slot, ok, err := l.markerSlot(km)
	if err != nil {
		return err
	}
	if !ok {
		end := storage.PrefixEnd(keyVersionsPrefix(l.bucket, km))
		l.verOK = end != nil && l.verIt.Seek(end)
		return nil
	}
	at := versionKey(l.bucket, km, slot)
	l.verOK = l.verIt.Seek(at)
	if l.verOK && bytes.Equal(l.verIt.Key(), at) {
		l.verOK = l.verIt.Next()
	}
	l.resumeKey = km
	first := l.snap.IteratePrefix(keyVersionsPrefix(l.bucket, km))
	if first.Next() {
		l.resumeLatest = bytes.Clone(first.Key())
	}
	err = first.Err()
	first.Release()
	return wrapf(err, "list versions %s", l.bucket)
}

// markerSlot returns the slot VersionIDMarker names in key km, if any ("null" names
// the null version's slot when it is in the versions table).
func (l *versionLister) markerSlot(km string) (versionSlot, bool, error) {
	id := l.o.VersionIDMarker
	switch id {
	case "":
		return versionSlot{}, false, nil
	case NullVersionID:
		v, err := l.snap.Get(headKey(l.bucket, km))
		if errors.Is(err, storage.ErrNotFound) {
			return versionSlot{}, false, nil
		}
		if err != nil {
			return versionSlot{}, false, wrapf(err, "list versions %s", l.bucket)
		}
		var h versionHead
		if err := json.Unmarshal(v, &h); err != nil {
			return versionSlot{}, false, wrapf(err, "decode version head %s/%s", l.bucket, km)
		}
		if h.Null == "" {
			return versionSlot{}, false, nil
		}
		id = h.Null
	}
	s, err := parseSlot(id)
	return s, err == nil, err
}

// decode reads the keys under both cursors.
func (l *versionLister) decode() error {
	if err := l.decodeCur(); err != nil {
		return err
	}
	return l.decodeVer()
}

// decodeCur reads the key under the current records' cursor.
func (l *versionLister) decodeCur() error {
	if !l.curOK {
		return nil
	}
	var err error
	l.curKey, err = decodeObjectKey(l.curIt.Key())
	return err
}

// decodeVer reads the key under the versions cursor: decoded only when it differs
// from the previous entry's (verPrefix, the prefix of that key's versions).
func (l *versionLister) decodeVer() error {
	if !l.verOK || l.verPrefix != nil && bytes.HasPrefix(l.verIt.Key(), l.verPrefix) {
		return nil
	}
	_, comps, err := storage.DecodeKey(l.verIt.Key())
	if err != nil || len(comps) != 4 {
		return wrapf(errors.Join(err, storage.ErrMalformedKey), "decode version key")
	}
	l.verKey = string(comps[2])
	l.verPrefix = keyVersionsPrefix(l.bucket, l.verKey)
	return nil
}

// run lists entries until the page is full or both cursors are done.
func (l *versionLister) run() error {
	for l.curOK || l.verOK {
		if err := l.ctx.Err(); err != nil {
			return err
		}
		k := l.verKey
		if !l.verOK || l.curOK && l.curKey < k {
			k = l.curKey
		}
		var full bool
		var err error
		switch cp, ok := l.commonPrefix(k); {
		case ok:
			full, err = l.rollUp(cp)
		case l.verOK && l.verKey == k:
			full, err = l.keyVersions(k)
		default:
			full, err = l.nullVersion(k)
		}
		if err != nil || full {
			return err
		}
	}
	return errors.Join(wrapf(l.curIt.Err(), "list %s", l.bucket), wrapf(l.verIt.Err(), "list versions %s", l.bucket))
}

// commonPrefix returns the common prefix key rolls up into, if any.
func (l *versionLister) commonPrefix(key string) (string, bool) {
	if l.o.Delimiter == "" {
		return "", false
	}
	i := strings.Index(key[len(l.o.Prefix):], l.o.Delimiter)
	if i < 0 {
		return "", false
	}
	return key[:len(l.o.Prefix)+i+len(l.o.Delimiter)], true
}

// full reports whether the page holds MaxKeys entries, and marks it truncated then
// (an entry remains).
func (l *versionLister) full() bool {
	if l.count == l.o.MaxKeys {
		l.out.Truncated = true
		return true
	}
	return false
}

// rollUp lists the common prefix cp (unless an earlier page did) and moves both
// cursors past it.
func (l *versionLister) rollUp(cp string) (bool, error) {
	if !strings.HasPrefix(l.o.KeyMarker, cp) {
		if l.full() {
			return true, nil
		}
		l.out.CommonPrefixes = append(l.out.CommonPrefixes, cp)
		l.out.NextKeyMarker, l.out.NextVersionIDMarker = cp, ""
		l.count++
	}
	if end := storage.PrefixEnd(storage.AppendComponentPrefix(objectPrefix(l.bucket), cp)); end != nil && l.curOK {
		l.curOK = l.curIt.Seek(end)
	} else {
		l.curOK = false
	}
	if end := storage.PrefixEnd(storage.AppendComponentPrefix(versionsPrefix(l.bucket), cp)); end != nil && l.verOK {
		l.verOK = l.verIt.Seek(end)
	} else {
		l.verOK = false
	}
	return false, l.decode()
}

// keyVersions lists key's versions from the versions table, and skips its current
// record (a copy of its newest version that is not a marker).
func (l *versionLister) keyVersions(key string) (bool, error) {
	latest := key != l.resumeKey
	for l.verOK && l.verKey == key {
		if l.full() {
			return true, nil
		}
		if key == l.resumeKey {
			latest = bytes.Equal(l.verIt.Key(), l.resumeLatest)
		}
		if err := l.add(key, l.verIt.Value(), latest); err != nil {
			return false, err
		}
		latest = false
		l.verOK = l.verIt.Next()
		if err := l.decodeVer(); err != nil {
			return false, err
		}
	}
	if l.curOK && l.curKey == key {
		l.curOK = l.curIt.Next()
		return false, l.decodeCur()
	}
	return false, nil
}

// nullVersion lists the current record of a key without versions records: its one
// version, the null one.
func (l *versionLister) nullVersion(key string) (bool, error) {
	if l.full() {
		return true, nil
	}
	if err := l.add(key, l.curIt.Value(), true); err != nil {
		return false, err
	}
	l.curOK = l.curIt.Next()
	return false, l.decodeCur()
}

// listedVersion is what a version listing reads of a version record (a Manifest):
// decoding only these fields leaves the ACL, metadata and extents unallocated.
type listedVersion struct {
	Size         int64     `json:"size"`
	ETag         string    `json:"etag"`
	LastModified time.Time `json:"last_modified"`
	Owner        Owner     `json:"owner"`
	VersionID    string    `json:"version_id"`
	DeleteMarker bool      `json:"delete_marker"`
}

// add lists the version whose record is v.
func (l *versionLister) add(key string, v []byte, latest bool) error {
	m := new(listedVersion)
	if err := decodeListed(v, m); err != nil {
		return wrapf(err, "decode version %s/%s", l.bucket, key)
	}
	e := VersionInfo{Key: key, VersionID: externalID(m.VersionID), IsLatest: latest, DeleteMarker: m.DeleteMarker,
		LastModified: m.LastModified, Owner: m.Owner}
	if !m.DeleteMarker {
		e.Size, e.ETag = m.Size, m.ETag
	}
	l.out.Versions = append(l.out.Versions, e)
	l.out.NextKeyMarker, l.out.NextVersionIDMarker = key, e.VersionID
	l.count++
	return nil
}
