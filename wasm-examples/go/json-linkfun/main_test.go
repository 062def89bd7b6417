package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/sdk/go/cairn"
	"github.com/cairnkv/cairn/sdk/go/cairntest"
)

const alice = `{"name":"Alice","links":[
	{"bucket":"people","key":"bob","tag":"friend"},
	{"bucket":"people","key":"carol","tag":"sister"},
	{"bucket":"pets","key":"rex","tag":"friend"},
	{"bucket":"people","key":"dave"}]}`

func TestLinksFromJSON(t *testing.T) {
	t.Parallel()
	person := func(data string) *cairn.Object {
		return cairn.NewObject("people", "alice", "application/json", []byte(data))
	}
	siblings := person(`{"links":[{"bucket":"people","key":"bob","tag":"friend"}]}`)
	siblings.Values = append(siblings.Values,
		cairn.Value{Data: []byte(`{"links":[{"bucket":"people","key":"bob","tag":"friend"},{"bucket":"people","key":"erin","tag":"friend"}]}`)},
		cairn.Value{Data: []byte(`{"links":[{"bucket":"people","key":"zed","tag":"friend"}]}`), Metadata: cairn.Metadata{Deleted: true}})

	link := func(b, k, tag string) cairn.Link { return cairn.Link{Bucket: b, Key: k, Tag: tag} }
	for _, tc := range []struct {
		name        string
		obj         *cairn.Object
		bucket, tag string
		want        []cairn.Link
		err         string
	}{
		{"all", person(alice), "_", "_", []cairn.Link{
			link("people", "bob", "friend"), link("people", "carol", "sister"), link("pets", "rex", "friend"), link("people", "dave", "")}, ""},
		{"by bucket", person(alice), "people", "_", []cairn.Link{
			link("people", "bob", "friend"), link("people", "carol", "sister"), link("people", "dave", "")}, ""},
		{"by tag", person(alice), "_", "friend", []cairn.Link{link("people", "bob", "friend"), link("pets", "rex", "friend")}, ""},
		{"by both", person(alice), "pets", "friend", []cairn.Link{link("pets", "rex", "friend")}, ""},
		{"no match", person(alice), "cars", "_", []cairn.Link{}, ""},
		{"siblings merged without duplicates, tombstones skipped", siblings, "_", "_", []cairn.Link{
			link("people", "bob", "friend"), link("people", "erin", "friend")}, ""},
		{"no links field", person(`{"name":"x"}`), "_", "_", []cairn.Link{}, ""},
		{"links null", person(`{"links":null}`), "_", "_", []cairn.Link{}, ""},
		{"not JSON", cairn.NewObject("people", "alice", "text/plain", []byte("hello")), "_", "_", []cairn.Link{}, ""},
		{"JSON array", person(`[1,2]`), "_", "_", []cairn.Link{}, ""},
		{"links not an array", person(`{"links":{"bucket":"b"}}`), "_", "_", nil,
			`people/alice: "links" must be an array of {"bucket", "key", "tag"} objects of strings`},
		{"tag not a string", person(`{"links":[{"bucket":"b","key":"k","tag":7}]}`), "_", "_", nil,
			`people/alice: "links" must be an array`},
		{"missing key", person(`{"links":[{"bucket":"b","key":"k"},{"bucket":"b"}]}`), "_", "_", nil,
			`people/alice: "links"[1] needs a non-empty "bucket" and "key"`},
		{"empty bucket", person(`{"links":[{"bucket":"","key":"k"}]}`), "_", "_", nil,
			`people/alice: "links"[0] needs a non-empty "bucket" and "key"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := cairntest.New(t).LinkFun(linksFromJSONHook, tc.obj, tc.bucket, tc.tag)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("links %v, want %v", got, tc.want)
			}
		})
	}
}
