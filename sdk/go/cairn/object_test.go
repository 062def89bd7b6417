package cairn

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestObjectRoundTrip decodes objects in the exact shape the host writes and checks that
// encoding them again gives the same bytes.
func TestObjectRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, json string }{
		{"store dialect, every field",
			`{"bucket_type":"default","bucket":"users","key":"u1","vclock":"a85hYGBg","values":[{"metadata":{` +
				`"content-type":"application/json","charset":"utf-8","content-encoding":"gzip",` +
				`"X-Store-VTag":"4LdxAbc","X-Store-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",` +
				`"X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"index":{"age_int":[1,2],"email_bin":"a@b.c"},` +
				`"Links":[["users","u2","friend"]],"X-Store-Deleted":"true"},"data":"{\"name\":\"alice\"}"}]}`},
		{"riak dialect, every field",
			`{"bucket_type":"t","bucket":"users","key":"u1","vclock":"a85hYGBg","values":[{"metadata":{` +
				`"content-type":"text/plain","charset":"utf-8","content-encoding":"gzip",` +
				`"X-Riak-VTag":"4LdxAbc","X-Riak-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",` +
				`"X-Riak-Meta":{"X-Riak-Meta-Owner":"bob","X-Riak-Meta-color":"red"},"index":{"email_bin":["a@b.c","d@e.f"]},` +
				`"Links":[["users","u2","friend"],["users","u3",""]],"X-Riak-Deleted":"true"},"data":"hi"}]}`},
		{"precommit put input: no vtag, no clock, empty meta",
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{}},"data":""}]}`},
		{"binary value in data_b64",
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"application/octet-stream","X-Store-Meta":{}},"data_b64":"AAEC/w=="}]}`},
		{"siblings",
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"AQID","values":[` +
				`{"metadata":{"content-type":"text/plain","X-Store-VTag":"a","X-Store-Meta":{}},"data":"one"},` +
				`{"metadata":{"content-type":"text/plain","X-Store-VTag":"b","X-Store-Meta":{}},"data":"two"}]}`},
		{"integers beyond 2^53 and negative",
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{},` +
				`"index":{"n_int":[-5,123456789012345678901234567890]}},"data":"x"}]}`},
		{"escapes and non-ASCII",
			`{"bucket_type":"default","bucket":"b\"<&>","key":"k\\\n\t\u0001","vclock":"","values":[{"metadata":{"content-type":"text/plain","X-Store-Meta":{"X-Store-Meta-Name":"é✓"}},"data":"\u001f日本"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var o Object
			if err := json.Unmarshal([]byte(tc.json), &o); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := json.Marshal(o)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			// json.Marshal escapes <, > and & after MarshalJSON; the object's own encoding
			// does not.
			own, _ := o.MarshalJSON()
			if string(own) != tc.json {
				t.Errorf("round trip:\n got %s\nwant %s", own, tc.json)
			}
			var again Object
			if err := json.Unmarshal(got, &again); err != nil || !reflect.DeepEqual(again, o) {
				t.Errorf("json.Marshal output decodes to %+v (%v), want %+v", again, err, o)
			}
		})
	}
}

// TestObjectDecode checks what the fields decode to, including the lenient forms.
func TestObjectDecode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json string
		want       Value
	}{
		{"store names",
			`{"metadata":{"content-type":"application/json","charset":"utf-8","X-Store-VTag":"v","X-Store-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",` +
				`"X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"index":{"email_bin":"a@b.c","age_int":[1,2]},"Links":[["users","u2","friend"]],"X-Store-Deleted":"true"},"data":"{}"}`,
			Value{Metadata: Metadata{ContentType: "application/json", Charset: "utf-8", VTag: "v", LastModified: "Tue, 01 Jan 2030 00:00:00 GMT",
				UserMeta: map[string]string{"Owner": "bob"}, Indexes: map[string][]string{"email_bin": {"a@b.c"}, "age_int": {"1", "2"}},
				Links: []Link{{"users", "u2", "friend"}}, Deleted: true, Prefix: PrefixStore}, Data: []byte("{}")}},
		{"riak names",
			`{"metadata":{"content-type":"text/plain","X-Riak-VTag":"v","X-Riak-Meta":{"X-Riak-Meta-Owner":"bob"},"X-Riak-Deleted":"true"},"data":"x"}`,
			Value{Metadata: Metadata{ContentType: "text/plain", VTag: "v", UserMeta: map[string]string{"Owner": "bob"}, Deleted: true, Prefix: PrefixRiak}, Data: []byte("x")}},
		{"nulls and booleans as in the reference JS object",
			`{"metadata":{"content-type":"text/plain","charset":null,"content-encoding":null,"X-Riak-Deleted":false,"X-Riak-Meta":{}},"data":"x"}`,
			Value{Metadata: Metadata{ContentType: "text/plain", UserMeta: map[string]string{}, Prefix: PrefixRiak}, Data: []byte("x")}},
		{"names in other cases; index fields lower-cased; numbers kept as written",
			`{"metadata":{"Content-Type":"text/plain","x-store-meta":{"x-store-meta-Owner":"bob"},"INDEX":{"Age_INT":12345678901234567890,"Tag_Bin":["a",7]},"links":[["b","k"]]},"data":"x"}`,
			Value{Metadata: Metadata{ContentType: "text/plain", UserMeta: map[string]string{"Owner": "bob"}, Prefix: PrefixStore,
				Indexes: map[string][]string{"age_int": {"12345678901234567890"}, "tag_bin": {"a", "7"}}, Links: []Link{{"b", "k", ""}}}, Data: []byte("x")}},
		{"data_b64 without padding", `{"metadata":{},"data_b64":"AAEC"}`,
			Value{Data: []byte{0, 1, 2}}},
		{"data_b64 wins over data", `{"metadata":{},"data":"ignored","data_b64":"/w=="}`,
			Value{Data: []byte{0xff}}},
		{"no data", `{"metadata":{}}`, Value{Data: []byte{}}},
		{"user meta without the prefix", `{"metadata":{"X-Store-Meta":{"plain":"v"}},"data":""}`,
			Value{Metadata: Metadata{UserMeta: map[string]string{"plain": "v"}, Prefix: PrefixStore}, Data: []byte{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var v Value
			if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("decoded\n %+v\nwant\n %+v", v, tc.want)
			}
		})
	}
}

func TestObjectDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, json, want string }{
		{"not an object", `[1]`, "cairn: object"},
		{"bad vclock", `{"vclock":"!!","values":[]}`, "vclock"},
		{"bad data_b64", `{"values":[{"metadata":{},"data_b64":"***"}]}`, "data_b64"},
		{"metadata not an object", `{"values":[{"metadata":"x"}]}`, "metadata"},
		{"content-type not a string", `{"values":[{"metadata":{"content-type":1}}]}`, "content-type"},
		{"index value a boolean", `{"values":[{"metadata":{"index":{"a_bin":true}}}]}`, `"index": "a_bin": offset`},
		{"index not an object", `{"values":[{"metadata":{"index":[]}}]}`, `"index"`},
		{"link too short", `{"values":[{"metadata":{"Links":[["b"]]}}]}`, "link"},
		{"link not strings", `{"values":[{"metadata":{"Links":[[1,2,3]]}}]}`, "link"},
		{"deleted a number", `{"values":[{"metadata":{"X-Store-Deleted":1}}]}`, "Deleted"},
		{"user meta not strings", `{"values":[{"metadata":{"X-Store-Meta":{"X-Store-Meta-A":1}}}]}`, "Meta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var o Object
			err := json.Unmarshal([]byte(tc.json), &o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestMetadataEncode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		meta Metadata
		want string
	}{
		{"empty: content type and user meta only", Metadata{},
			`{"content-type":"","X-Store-Meta":{}}`},
		{"riak prefix", Metadata{ContentType: "text/plain", VTag: "v", UserMeta: map[string]string{"b": "2", "A": "1"}, Deleted: true, Prefix: PrefixRiak},
			`{"content-type":"text/plain","X-Riak-VTag":"v","X-Riak-Meta":{"X-Riak-Meta-A":"1","X-Riak-Meta-b":"2"},"X-Riak-Deleted":"true"}`},
		{"int values canonical numbers, bad ones strings; bin values strings", Metadata{Indexes: map[string][]string{
			"n_int": {"007", "-0", "+3", "x1"}, "s_bin": {"12"}, "empty_bin": nil, "Up_BIN": {"v"}}},
			`{"content-type":"","X-Store-Meta":{},"index":{"n_int":[7,0,3,"x1"],"s_bin":"12","up_bin":"v"}}`},
		{"only empty index fields: no index", Metadata{Indexes: map[string][]string{"a_bin": {}}},
			`{"content-type":"","X-Store-Meta":{}}`},
		{"links", Metadata{Links: []Link{{"b", "k", "t"}, {"b2", "k2", ""}}},
			`{"content-type":"","X-Store-Meta":{},"Links":[["b","k","t"],["b2","k2",""]]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _ := tc.meta.MarshalJSON()
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestMetadataHelpers(t *testing.T) {
	t.Parallel()
	var m Metadata
	m.AddIndex("Email_BIN", "a@b.c")
	m.AddIndex("email_bin", "a@b.c")
	m.AddIndex("email_bin", "d@e.f")
	if got := m.Index("EMAIL_bin"); !reflect.DeepEqual(got, []string{"a@b.c", "d@e.f"}) {
		t.Errorf("Index = %q", got)
	}
	m.SetIndex("email_bin", "x")
	if got := m.Index("email_bin"); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("after SetIndex: %q", got)
	}
	m.SetIndex("email_bin")
	if _, ok := m.Indexes["email_bin"]; ok {
		t.Error("SetIndex with no values left the field")
	}
	m.SetMeta("Owner", "bob")
	if v, ok := m.Meta("owner"); !ok || v != "bob" {
		t.Errorf("Meta(owner) = %q, %v", v, ok)
	}
	if _, ok := m.Meta("other"); ok {
		t.Error("Meta(other) found")
	}
	m.LastModified = "Tue, 01 Jan 2030 00:00:00 GMT"
	if tm, err := m.LastModifiedTime(); err != nil || tm.Year() != 2030 {
		t.Errorf("LastModifiedTime = %v, %v", tm, err)
	}
	m.LastModified = "yesterday"
	if _, err := m.LastModifiedTime(); err == nil {
		t.Error("LastModifiedTime parsed a bad date")
	}
}

func TestValueJSONHelpers(t *testing.T) {
	t.Parallel()
	o := NewObject("b", "k", "", nil)
	v := o.First()
	if err := v.SetJSON(map[string]string{"a": "<b>"}); err != nil {
		t.Fatal(err)
	}
	if string(v.Data) != `{"a":"<b>"}` || v.Metadata.ContentType != "application/json" {
		t.Errorf("SetJSON gave %s, %q", v.Data, v.Metadata.ContentType)
	}
	var back map[string]string
	if err := v.DecodeJSON(&back); err != nil || back["a"] != "<b>" {
		t.Errorf("DecodeJSON = %v, %v", back, err)
	}
	v.Data = []byte("not json")
	if err := v.DecodeJSON(&back); err == nil {
		t.Error("DecodeJSON accepted non-JSON")
	}
	c := o.Clone()
	c.Values[0].Data[0] = 'N'
	c.Values[0].Metadata.AddIndex("x_bin", "1")
	if o.Values[0].Data[0] != 'n' || o.Values[0].Metadata.Indexes != nil {
		t.Error("Clone shares memory with the original")
	}
	var empty *Object
	if empty.First() != nil {
		t.Error("First of nil object")
	}
	o.Values = append(o.Values, Value{Metadata: Metadata{Deleted: true}})
	if live := o.Live(); len(live) != 1 || live[0] != &o.Values[0] {
		t.Errorf("Live = %v", live)
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"b\`, "\n\r\t\x00\x1f", "<&>", "é✓日本", "bad\xffutf8", "\xff\xfe run", "\u2028"} {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%q encodes to invalid JSON %s: %v", s, b, err)
			continue
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if back != want {
			t.Errorf("%q -> %s -> %q", s, b, back)
		}
	}
}

func TestCanonicalInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"0", "0", true}, {"-0", "0", true}, {"007", "7", true}, {"-0012", "-12", true}, {"+5", "5", true},
		{"123456789012345678901234567890", "123456789012345678901234567890", true},
		{"", "", false}, {"-", "", false}, {"1.5", "", false}, {"1e3", "", false}, {"x", "", false},
	} {
		got, ok := canonicalInt(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("canonicalInt(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzObjectRoundTrip checks that whatever decodes encodes to valid JSON that decodes to
// the same object and encodes to the same bytes.
func FuzzObjectRoundTrip(f *testing.F) {
	f.Add(`{"bucket_type":"default","bucket":"users","key":"u1","vclock":"a85hYGBg","values":[{"metadata":{"content-type":"application/json","X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"index":{"age_int":[1,2],"email_bin":"a@b.c"},"Links":[["users","u2","friend"]]},"data":"{}"}]}`)
	f.Add(`{"values":[{"metadata":{"X-Riak-Deleted":"true","index":{"n_int":"007"}},"data_b64":"/w=="}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var o Object
		if json.Unmarshal([]byte(in), &o) != nil {
			return
		}
		b1, _ := o.MarshalJSON()
		if !json.Valid(b1) {
			t.Fatalf("invalid JSON %s", b1)
		}
		var o2 Object
		if err := json.Unmarshal(b1, &o2); err != nil {
			t.Fatalf("re-decode %s: %v", b1, err)
		}
		b2, _ := o2.MarshalJSON()
		if string(b1) != string(b2) {
			t.Fatalf("not stable:\n%s\n%s", b1, b2)
		}
	})
}
