package s3

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// checkVersions verifies the versions tables (see versioning.go) for Check: every
// version record decodes, is in an existing bucket, sits in a well-formed slot that
// its version id names (the null version's in its head's Null), keeps the tag limits,
// names whole data no other version names (the current record is a copy of its
// newest version and shares its data), and has a well-formed encryption record
// (checkEncryption); a delete marker has no data and no encryption; every key with
// version records has a head whose sequence number is at least every slot's, and no
// head is without records; the current record exists exactly when the newest version
// is not a delete marker, and is that version, byte for byte (or decoded, field for
// field: an ACL, tag or lock change rewrites both records). Data of the versions is marked owned
// and added to extents, so that Check verifies its chunks and blobs.
func checkVersions(tables map[string]map[string][]byte, buckets map[string]Bucket, owned map[string]bool,
	extents map[string]Extent, bad func(string, ...any)) {
	type version struct {
		slot versionSlot
		m    Manifest
		raw  []byte
	}
	byKey := map[string][]version{} // joinKey(bucket, key) → versions
	for k, v := range tables["v"] {
		parts := splitKey(k)
		if len(parts) != 3 || len(parts[2]) != len(versionSlot{}) {
			bad("s3: malformed version key %q", k)
			continue
		}
		bucket, name := parts[0], parts[1]
		ver := version{raw: v}
		copy(ver.slot[:], parts[2])
		if err := json.Unmarshal(v, &ver.m); err != nil {
			bad("s3: version %s/%s %s does not decode: %v", bucket, name, ver.slot.id(), err)
			continue
		}
		if _, ok := buckets[bucket]; !ok {
			bad("s3: version %s/%s %s is in a bucket that does not exist", bucket, name, ver.slot.id())
		}
		byKey[joinKey(bucket, name)] = append(byKey[joinKey(bucket, name)], ver)
	}
	for k := range tables["vh"] {
		if _, ok := byKey[k]; !ok {
			bad("s3: version head of %q, which has no versions", strings.Join(splitKey(k), "/"))
		}
	}
	for k, vs := range byKey {
		parts := splitKey(k)
		bucket, name := parts[0], parts[1]
		slices.SortFunc(vs, func(a, b version) int { return strings.Compare(string(a.slot[:]), string(b.slot[:])) })
		var head versionHead
		hv, ok := tables["vh"][k]
		if !ok {
			bad("s3: versions of %s/%s without a head", bucket, name)
		} else if err := json.Unmarshal(hv, &head); err != nil {
			bad("s3: version head of %s/%s does not decode: %v", bucket, name, err)
		}
		var cur *Manifest
		if v, ok := tables["o"][k]; ok {
			cur = new(Manifest)
			if json.Unmarshal(v, cur) != nil {
				cur = nil // reported by Check
			}
		}
		newest := vs[0].m
		switch {
		case newest.DeleteMarker && cur != nil:
			bad("s3: %s/%s: the newest version is a delete marker and a current record exists", bucket, name)
		case !newest.DeleteMarker && (cur == nil || cur.VersionID != newest.VersionID || cur.UUID != newest.UUID):
			bad("s3: %s/%s: the current record is not the newest version %s", bucket, name, externalID(newest.VersionID))
		case !newest.DeleteMarker && !sameRecord(tables["o"][k], vs[0].raw, cur, &newest):
			bad("s3: %s/%s: the current record differs from its version record %s", bucket, name, externalID(newest.VersionID))
		}
		for i, ver := range vs {
			label := bucket + "/" + name + " " + ver.slot.id()
			if ok && ver.slot.seq() > head.Seq {
				bad("s3: version %s: sequence number above its head's", label)
			}
			switch ver.m.VersionID {
			case "":
				if ok && head.Null != ver.slot.id() {
					bad("s3: version %s: a null version its head does not name", label)
				}
			case ver.slot.id():
			default:
				bad("s3: version %s: version id %q differs from its slot", label, ver.m.VersionID)
			}
			if err := CheckObjectTags(ver.m.Tags); err != nil {
				bad("s3: version %s: tags: %v", label, err)
			}
			checkLock("version "+label, &ver.m, buckets[bucket], bad)
			if ver.m.DeleteMarker {
				if ver.m.UUID != "" || ver.m.Size != 0 || len(ver.m.Parts) > 0 || ver.m.SSE != nil {
					bad("s3: delete marker %s names data", label)
				}
				continue
			}
			if err := checkEncryption(&ver.m); err != nil {
				bad("s3: version %s: %v", label, err)
			}
			if i == 0 && cur != nil && cur.UUID == ver.m.UUID {
				continue // the current record's data, checked with it
			}
			checkData("version "+label, &ver.m, owned, extents, bad)
		}
	}
}

// checkData marks the data of the manifest m (what names it in problems) owned and
// adds its extents (a chunk id named twice is a problem), checking that they add up
// to its size.
func checkData(label string, m *Manifest, owned map[string]bool, extents map[string]Extent, bad func(string, ...any)) {
	var total int64
	for _, e := range m.Extents() {
		raw, err := hex.DecodeString(e.ID)
		if err != nil || len(raw) != 16 {
			bad("s3: %s: bad chunk id %q", label, e.ID)
			continue
		}
		if _, dup := extents[string(raw)]; dup {
			bad("s3: chunk id %s is named twice", e.ID)
		}
		owned[string(raw)] = true
		extents[string(raw)] = e
		total += e.Size
	}
	if total != m.Size {
		bad("s3: %s: parts of %d bytes, size %d", label, total, m.Size)
	}
}

// sameRecord reports whether the current record (raw cur, decoded curM) holds the
// same manifest as the version record (raw ver, decoded verM): the same bytes, or,
// should an encoder have written them differently, equal once decoded.
func sameRecord(cur, ver []byte, curM, verM *Manifest) bool {
	return bytes.Equal(cur, ver) || reflect.DeepEqual(curM, verM)
}

// checkQueuedListed reports data that a manifest ("o" or "v" record) names and that a
// write in progress ("w") or the collector ("g") also owns: data queued for
// collection while still listed would be lost. extents holds the data manifests and
// upload parts name, partIDs the parts' (an upload's, not a listed object's).
func checkQueuedListed(tables map[string]map[string][]byte, extents map[string]Extent, partIDs map[string]bool, bad func(string, ...any)) {
	for _, t := range []string{"w", "g"} {
		for k := range tables[t] {
			id := splitKey(k)[0]
			if _, ok := extents[id]; ok && !partIDs[id] {
				bad("s3: data %s queued while still listed (a %q record names it)", hex.EncodeToString([]byte(id)), t)
			}
		}
	}
}
