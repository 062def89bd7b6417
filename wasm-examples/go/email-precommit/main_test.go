package main

import (
	"reflect"
	"testing"

	"github.com/cairnkv/cairn/sdk/go/cairn"
	"github.com/cairnkv/cairn/sdk/go/cairntest"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	user := func(data string) *cairn.Object {
		return cairn.NewObject("users", "u1", "application/json", []byte(data))
	}
	indexed := user(`{"email":"bob@example.com"}`)
	indexed.First().Metadata.AddIndex("email_bin", "bob@example.com")
	rich := user(`{"email":"Carol@Example.com","age":41}`)
	rich.First().Metadata = cairn.Metadata{
		ContentType: "application/json",
		UserMeta:    map[string]string{"Owner": "carol"},
		Indexes:     map[string][]string{"email_bin": {"old@example.com"}, "age_int": {"41"}},
		Links:       []cairn.Link{{Bucket: "users", Key: "u2", Tag: "friend"}},
		Prefix:      cairn.PrefixRiak,
	}

	for _, tc := range []struct {
		name   string
		op     string
		obj    *cairn.Object
		reject string // the reason, when the write is refused
		data   string // the replacement's data, when the hook replaces the value
		meta   *cairn.Metadata
	}{
		{name: "lower-cases and indexes", op: cairn.OpPut, obj: user(`{"name":"Alice","email":" Alice@Example.COM "}`),
			data: `{"email":"alice@example.com","name":"Alice"}`,
			meta: &cairn.Metadata{ContentType: "application/json", Indexes: map[string][]string{"email_bin": {"alice@example.com"}}}},
		{name: "indexes an address already in lower case, value unchanged", op: cairn.OpPut, obj: user(`{"email":"a@b.c", "n": 1.50}`),
			data: `{"email":"a@b.c", "n": 1.50}`,
			meta: &cairn.Metadata{ContentType: "application/json", Indexes: map[string][]string{"email_bin": {"a@b.c"}}}},
		{name: "already normalized and indexed: accepted unchanged", op: cairn.OpPut, obj: indexed},
		{name: "keeps the other metadata and the dialect, replaces the old index entry", op: cairn.OpPut, obj: rich,
			data: `{"age":41,"email":"carol@example.com"}`,
			meta: &cairn.Metadata{ContentType: "application/json", UserMeta: map[string]string{"Owner": "carol"},
				Indexes: map[string][]string{"email_bin": {"carol@example.com"}, "age_int": {"41"}},
				Links:   []cairn.Link{{Bucket: "users", Key: "u2", Tag: "friend"}}, Prefix: cairn.PrefixRiak}},
		{name: "no HTML escaping in the rewritten value", op: cairn.OpPut, obj: user(`{"email":"X@Y.Z","note":"<b>&</b>"}`),
			data: `{"email":"x@y.z","note":"<b>&</b>"}`,
			meta: &cairn.Metadata{ContentType: "application/json", Indexes: map[string][]string{"email_bin": {"x@y.z"}}}},
		{name: "text value", op: cairn.OpPut, obj: cairn.NewObject("users", "u1", "text/plain", []byte("hello")),
			reject: "the value must be a JSON object"},
		{name: "JSON array", op: cairn.OpPut, obj: user(`[{"email":"a@b.c"}]`), reject: "the value must be a JSON object"},
		{name: "JSON null", op: cairn.OpPut, obj: user(`null`), reject: "the value must be a JSON object"},
		{name: "empty value", op: cairn.OpPut, obj: user(``), reject: "the value must be a JSON object"},
		{name: "no email", op: cairn.OpPut, obj: user(`{"name":"x"}`), reject: `the value must have a string field "email"`},
		{name: "email not a string", op: cairn.OpPut, obj: user(`{"email":42}`), reject: `the value must have a string field "email"`},
		{name: "not an address", op: cairn.OpPut, obj: user(`{"email":"bob"}`), reject: `"bob" is not an email address`},
		{name: "empty local part", op: cairn.OpPut, obj: user(`{"email":"@b.c"}`), reject: `"@b.c" is not an email address`},
		{name: "delete passes", op: cairn.OpDelete, obj: cairntest.Tombstone("default", "users", "u1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := cairntest.New(t).Precommit(normalizeEmailHook, tc.op, tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reject != (tc.reject != "") || res.Reason != tc.reject {
				t.Fatalf("verdict %v, want reject %q", res, tc.reject)
			}
			if (res.Replacement != nil) != (tc.meta != nil) {
				t.Fatalf("verdict %v, want a replacement: %v", res, tc.meta != nil)
			}
			if tc.meta == nil {
				return
			}
			v := res.Replacement.First()
			if string(v.Data) != tc.data {
				t.Errorf("data %s, want %s", v.Data, tc.data)
			}
			want := *tc.meta
			if want.UserMeta == nil {
				want.UserMeta = map[string]string{}
			}
			if want.Prefix == "" {
				want.Prefix = cairn.PrefixStore
			}
			if !reflect.DeepEqual(v.Metadata, want) {
				t.Errorf("metadata\n %+v\nwant\n %+v", v.Metadata, want)
			}
		})
	}
}
