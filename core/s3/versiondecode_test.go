package s3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// randomManifest is a version record with every field the listing skips, and strings
// that need escapes now and then.
func randomManifest(r *rand.Rand) *Manifest {
	word := func() string {
		return []string{"plain", `quo"te`, `back\slash`, "<html>&", "ünïcødé", "tab\there", "", "\u2028"}[r.IntN(8)]
	}
	owner := Owner{ID: fmt.Sprintf("%064x", r.Uint64()), DisplayName: word()}
	m := &Manifest{UUID: fmt.Sprintf("%032x", r.Uint64()), Size: r.Int64N(1 << 40), ChunkSize: 1 << 20,
		ETag: fmt.Sprintf("%032x", r.Uint64()), ContentType: word(),
		LastModified: time.UnixMilli(r.Int64N(4e12)).UTC(), Owner: owner,
		ACL:       ACL{Owner: owner, Grants: []Grant{{Grantee: Grantee{ID: owner.ID, DisplayName: word()}, Permission: PermFullControl}}},
		VersionID: newSlot(r.Uint64()).id()}
	if r.IntN(3) == 0 {
		m.Meta = []MetaPair{{Name: word(), Value: word()}}
		m.Headers = map[string]string{"Cache-Control": word()}
		m.Tags = []Tag{{Key: word(), Value: word()}}
		m.Parts = []Extent{{ID: m.UUID, Size: 5, ChunkSize: 7}, {ID: m.ETag, Size: 9, Blob: true}}
	}
	if r.IntN(4) == 0 {
		m = &Manifest{DeleteMarker: true, Owner: owner, LastModified: m.LastModified, VersionID: m.VersionID}
	}
	if r.IntN(5) == 0 {
		m.VersionID = ""
	}
	return m
}

// TestDecodeListed: the one-pass decoder gives json.Unmarshal's result on the records
// the service writes, and takes the fast path on those without escapes in the fields
// it reads.
func TestDecodeListed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := range 5000 {
		m := randomManifest(r)
		v, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var want, got listedVersion
		if err := json.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		if err := decodeListed(v, &got); err != nil || got != want {
			t.Fatalf("record %d %s:\ngot  %+v (%v)\nwant %+v", i, v, got, err, want)
		}
		name, _ := json.Marshal(m.Owner.DisplayName)
		var probe listedVersion
		if fastListed(v, &probe) {
			fast++
		} else if !bytes.Contains(name, []byte(`\`)) {
			t.Fatalf("record %d took the slow path: %s", i, v)
		}
	}
	if fast < 1000 {
		t.Fatalf("the fast path decoded %d of 5000 records", fast)
	}
	for _, bad := range []string{"", "{", `{"size":}`, `{"size":1`, `{"etag":"x"} x`, `[]`, `{"owner":{"id":1}}`, `{"delete_marker":maybe}`} {
		var m listedVersion
		if decodeListed([]byte(bad), &m) == nil && json.Unmarshal([]byte(bad), &m) != nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzDecodeListed: whatever the input, when both decoders accept it they agree.
func FuzzDecodeListed(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		v, _ := json.Marshal(randomManifest(r))
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		var fast, slow listedVersion
		if !fastListed(v, &fast) || json.Unmarshal(v, &slow) != nil {
			return
		}
		if fast != slow {
			t.Fatalf("%q: fast %+v, encoding/json %+v", v, fast, slow)
		}
	})
}
