package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/cairnkv/cairn/core/storage"
)

// MaxListKeys is the most entries one listing page holds.
const MaxListKeys = 1000

// ListObjects lists a page of the bucket's objects (READ on the bucket), from one
// snapshot. Keys under a common prefix (Prefix up to and including the next Delimiter)
// roll up into that prefix, which counts as one entry; a common prefix that After
// falls inside was listed on an earlier page and is skipped whole.
func (s *Service) ListObjects(ctx context.Context, r Requester, bucket string, o ListOptions) (*Listing, error) {
	b, err := s.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !s.allowed(b, nil, r, ActionListBucket, "", PermRead) {
		return nil, errAccessDenied
	}
	if o.MaxKeys > MaxListKeys || o.MaxKeys < 0 {
		o.MaxKeys = MaxListKeys
	}
	out := &Listing{}
	if o.MaxKeys == 0 {
		return out, nil
	}
	snap, err := s.db.NewSnapshot()
	if err != nil {
		return nil, wrapf(err, "list %s", bucket)
	}
	defer snap.Release()
	base := objectPrefix(bucket)
	scan := storage.AppendComponentPrefix(bytes.Clone(base), o.Prefix)
	it := snap.IteratePrefix(scan)
	defer it.Release()
	ok := it.Next()
	if o.After != "" && o.After >= o.Prefix {
		ok = it.Seek(objectKey(bucket, o.After))
	}
	count := 0
	for ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key, err := decodeObjectKey(it.Key())
		if err != nil {
			return nil, err
		}
		if key <= o.After {
			ok = it.Next()
			continue
		}
		if o.Delimiter != "" {
			if i := strings.Index(key[len(o.Prefix):], o.Delimiter); i >= 0 {
				cp := key[:len(o.Prefix)+i+len(o.Delimiter)]
				if !strings.HasPrefix(o.After, cp) {
					if count == o.MaxKeys {
						out.Truncated = true
						break
					}
					out.CommonPrefixes = append(out.CommonPrefixes, cp)
					out.NextMarker = cp
					count++
				}
				end := storage.PrefixEnd(storage.AppendComponentPrefix(bytes.Clone(base), cp))
				ok = end != nil && it.Seek(end)
				continue
			}
		}
		if count == o.MaxKeys {
			out.Truncated = true
			break
		}
		m := new(Manifest)
		if err := json.Unmarshal(it.Value(), m); err != nil {
			return nil, wrapf(err, "decode manifest %s/%s", bucket, key)
		}
		out.Objects = append(out.Objects, ObjectInfo{Key: key, Size: m.Size, ETag: m.ETag, LastModified: m.LastModified, Owner: m.Owner})
		out.NextMarker = key
		count++
		ok = it.Next()
	}
	if err := it.Err(); err != nil {
		return nil, wrapf(err, "list %s", bucket)
	}
	if !out.Truncated {
		out.NextMarker = ""
	}
	return out, nil
}

func decodeObjectKey(k []byte) (string, error) {
	_, comps, err := storage.DecodeKey(k)
	if err != nil || len(comps) != 3 {
		return "", wrapf(storage.ErrMalformedKey, "decode object key")
	}
	return string(comps[2]), nil
}
