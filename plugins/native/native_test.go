package native

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// bin assembles a BINARY_EXT term by hand.
func bin(s string) []byte {
	n := len(s)
	return append([]byte{109, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, s...)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func sha(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

func TestKeyHashes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300) // a length that needs two bytes
	tests := []struct {
		name           string
		hash           func(typ, bucket, key string) []byte
		typ, bucket, k string
		want           string // hex SHA-1
	}{
		// The first vectors are literal digests of hand-assembled terms (computed
		// outside Go), the others hash term bytes assembled here byte by byte.
		{"std default", StdKeyHash, "default", "b", "k", "6c38d93a9b70c325a8294365c4150ff68fe1a214"},
		{"std typed", StdKeyHash, "t", "b", "k", "8b06349aa84e04044860ead307a70d0e8ff9ce65"},
		{"bucket-only default", BucketOnlyKeyHash, "default", "b", "k", "fc6165dfb7ce20e2068ddc3c35e844ce8e6b2cd9"},
		{"bucket-only typed", BucketOnlyKeyHash, "t", "b", "k", "852a221c9d03adfb3a399318b615c70be043a3b5"},
		{"std empty type is default", StdKeyHash, "", "b", "k",
			sha([]byte{131, 104, 2, 109, 0, 0, 0, 1, 'b', 109, 0, 0, 0, 1, 'k'})},
		{"std empty key", StdKeyHash, "default", "users", "",
			sha(cat([]byte{131, 104, 2}, bin("users"), bin("")))},
		{"std binary bytes", StdKeyHash, "default", "b\x00\xff", "\x80k",
			sha(cat([]byte{131, 104, 2}, bin("b\x00\xff"), bin("\x80k")))},
		{"std long key", StdKeyHash, "default", "b", long,
			sha(cat([]byte{131, 104, 2}, bin("b"), []byte{109, 0, 0, 1, 44}, []byte(long)))},
		{"std typed long", StdKeyHash, "maps", "users", "u1",
			sha(cat([]byte{131, 104, 2, 104, 2}, bin("maps"), bin("users"), bin("u1")))},
		{"bucket-only ignores key", BucketOnlyKeyHash, "default", "b", "other",
			sha([]byte{131, 109, 0, 0, 0, 1, 'b'})},
		{"bucket-only typed assembled", BucketOnlyKeyHash, "maps", "users", "u1",
			sha(cat([]byte{131, 104, 2}, bin("maps"), bin("users")))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.hash(tc.typ, tc.bucket, tc.k)
			if len(got) != 20 || hex.EncodeToString(got) != tc.want {
				t.Fatalf("hash(%q, %q, %q) = %x, want %s", tc.typ, tc.bucket, tc.k, got, tc.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	l := func(b, k, tag string) core.Link { return core.Link{Bucket: b, Key: k, Tag: tag} }
	obj := &core.Object{Type: "default", Bucket: "people", Key: "ann", Siblings: []core.Sibling{
		{Value: []byte("1"), Links: []core.Link{l("people", "bob", "friend"), l("cities", "paris", "lives"), l("people", "al", "friend")}},
		{Value: []byte("2"), Links: []core.Link{l("people", "bob", "friend"), l("people", "cy", "boss")}},
		{Deleted: true, Links: []core.Link{l("people", "ghost", "friend")}},
	}}
	tests := []struct {
		name        string
		obj         *core.Object
		bucket, tag string
		want        []core.Link
	}{
		{"all, sorted, merged across siblings", obj, "_", "_",
			[]core.Link{l("cities", "paris", "lives"), l("people", "al", "friend"), l("people", "bob", "friend"), l("people", "cy", "boss")}},
		{"by bucket", obj, "people", "_",
			[]core.Link{l("people", "al", "friend"), l("people", "bob", "friend"), l("people", "cy", "boss")}},
		{"by tag", obj, "_", "friend", []core.Link{l("people", "al", "friend"), l("people", "bob", "friend")}},
		{"by bucket and tag", obj, "people", "boss", []core.Link{l("people", "cy", "boss")}},
		{"bucket and tag from different links", obj, "cities", "friend", []core.Link{}},
		{"no match", obj, "nowhere", "_", []core.Link{}},
		{"not found", nil, "_", "_", []core.Link{}},
		{"no siblings", &core.Object{Bucket: "b", Key: "k"}, "_", "_", []core.Link{}},
		{"tombstone only", &core.Object{Siblings: []core.Sibling{{Deleted: true, Links: []core.Link{l("a", "b", "c")}}}}, "_", "_", []core.Link{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Links(tc.obj, tc.bucket, tc.tag)
			if got == nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Links(%q, %q) = %#v, want %#v", tc.bucket, tc.tag, got, tc.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	p := New()
	tests := []struct {
		mod, fun string
		point    hooks.Point
		wantErr  error  // nil: found
		wantMsg  string // a substring of the error
	}{
		{"riak_core_util", "chash_std_keyfun", hooks.PointKeyFun, nil, ""},
		{"store_core_util", "chash_std_keyfun", hooks.PointKeyFun, nil, ""},
		{"riak_core_util", "chash_bucketonly_keyfun", hooks.PointKeyFun, nil, ""},
		{"store_core_util", "chash_bucketonly_keyfun", hooks.PointKeyFun, nil, ""},
		{"riak_kv_wm_link_walker", "mapreduce_linkfun", hooks.PointLinkFun, nil, ""},
		{"store_kv_wm_link_walker", "mapreduce_linkfun", hooks.PointLinkFun, nil, ""},
		{"riak_core_util", "chash_std_keyfun", hooks.PointPrecommit, hooks.ErrNoFunction, "riak_core_util:chash_std_keyfun is a chash_keyfun function, not a precommit"},
		{"riak_kv_wm_link_walker", "mapreduce_linkfun", hooks.PointKeyFun, hooks.ErrNoFunction, "not a chash_keyfun"},
		{"riak_core_util", "nope", hooks.PointKeyFun, hooks.ErrNoFunction, "riak_core_util:nope"},
		{"riak_core_util", "mapreduce_linkfun", hooks.PointLinkFun, hooks.ErrNoFunction, "riak_core_util:mapreduce_linkfun"},
		{"riak_kv_mapreduce", "map_object_value", hooks.PointReduce, hooks.ErrNoFunction, "riak_kv_mapreduce:map_object_value is a map function, not a reduce"},
		{"riak_kv_mapred", "map_object_value", hooks.PointMap, hooks.ErrNoModule, `"riak_kv_mapred"`},
		{"audit", "check", hooks.PointPrecommit, hooks.ErrNoModule, `"audit"`},
		{"Riak_core_util", "chash_std_keyfun", hooks.PointKeyFun, hooks.ErrNoModule, `"Riak_core_util"`},
	}
	for _, tc := range tests {
		t.Run(tc.mod+":"+tc.fun+"@"+tc.point.String(), func(t *testing.T) {
			t.Parallel()
			if got := p.HasModule(tc.mod); got != !errors.Is(tc.wantErr, hooks.ErrNoModule) {
				t.Errorf("HasModule(%q) = %v", tc.mod, got)
			}
			impl, err := p.Lookup(tc.mod, tc.fun, tc.point)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) || impl != nil {
					t.Fatalf("Lookup = %v, %v; want nil and an error wrapping %v containing %q", impl, err, tc.wantErr, tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			var ok bool
			switch tc.point {
			case hooks.PointKeyFun:
				_, ok = impl.(hooks.KeyFun)
			case hooks.PointLinkFun:
				_, ok = impl.(hooks.LinkFun)
			}
			if !ok {
				t.Fatalf("Lookup returned %T, not the %s interface", impl, tc.point)
			}
		})
	}
	if p.Kind() != hooks.KindNative {
		t.Fatalf("Kind() = %q", p.Kind())
	}
}

// TestThroughRegistry resolves the default bucket properties' specs through a registry,
// bare and pinned, and calls what they resolve to.
func TestThroughRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := hooks.NewRegistry(New())
	obj := &core.Object{Siblings: []core.Sibling{{Links: []core.Link{{Bucket: "b", Key: "2", Tag: "t"}, {Bucket: "b", Key: "1", Tag: "u"}}}}}
	keyfuns := []struct {
		mod, fun string
		want     []byte
	}{
		{"riak_core_util", "chash_std_keyfun", StdKeyHash("default", "b", "k")},
		{"native:riak_core_util", "chash_std_keyfun", StdKeyHash("default", "b", "k")},
		{"store_core_util", "chash_std_keyfun", StdKeyHash("default", "b", "k")},
		{"native:store_core_util", "chash_bucketonly_keyfun", BucketOnlyKeyHash("default", "b", "")},
	}
	for _, tc := range keyfuns {
		t.Run(tc.mod+":"+tc.fun, func(t *testing.T) {
			t.Parallel()
			spec := core.HookSpec{Mod: tc.mod, Fun: tc.fun}
			if owner := reg.Owner(tc.mod); owner != hooks.KindNative {
				t.Errorf("Owner(%q) = %q", tc.mod, owner)
			}
			kf, err := reg.KeyFun(spec)
			if err != nil {
				t.Fatalf("KeyFun(%+v): %v", spec, err)
			}
			got, err := kf.KeyHash(ctx, "default", "b", "k")
			if err != nil || string(got) != string(tc.want) {
				t.Fatalf("KeyHash = %x, %v; want %x", got, err, tc.want)
			}
			if _, err := reg.Precommit(spec); !errors.Is(err, hooks.ErrNoFunction) {
				t.Fatalf("Precommit(%+v) error %v, want ErrNoFunction", spec, err)
			}
		})
	}
	for _, mod := range []string{"riak_kv_wm_link_walker", "native:store_kv_wm_link_walker"} {
		t.Run(mod, func(t *testing.T) {
			t.Parallel()
			lf, err := reg.LinkFun(core.HookSpec{Mod: mod, Fun: "mapreduce_linkfun"})
			if err != nil {
				t.Fatalf("LinkFun: %v", err)
			}
			got, err := lf.Links(ctx, obj, "b", "_")
			want := []core.Link{{Bucket: "b", Key: "1", Tag: "u"}, {Bucket: "b", Key: "2", Tag: "t"}}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("Links = %v, %v; want %v", got, err, want)
			}
		})
	}
	for _, mod := range []string{"wasm:riak_core_util", "plugin:riak_core_util", "riak_kv_mapred"} {
		if _, err := reg.KeyFun(core.HookSpec{Mod: mod, Fun: "chash_std_keyfun"}); !errors.Is(err, hooks.ErrNoModule) {
			t.Errorf("KeyFun(%s) error %v, want ErrNoModule", mod, err)
		}
	}
}

func BenchmarkStdKeyHash(b *testing.B) {
	for b.Loop() {
		StdKeyHash("default", "users", "user-000123")
	}
}
