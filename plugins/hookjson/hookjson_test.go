package hookjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

var lastMod = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// sample returns an object that uses every field of the ABI.
func sample() *core.Object {
	return &core.Object{
		Type: "default", Bucket: "users", Key: "u1", VClock: []byte{0x6b, 0xce, 0x61},
		Siblings: []core.Sibling{{
			Value:        []byte(`{"name":"alice"}`),
			ContentType:  "application/json",
			Charset:      "utf-8",
			Encoding:     "gzip",
			VTag:         "4LdxAbc",
			LastModified: lastMod,
			Meta:         []core.MetaEntry{{Name: "Owner", Value: "bob"}},
			Links:        []core.Link{{Bucket: "users", Key: "u2", Tag: "friend"}},
			Indexes: []core.IndexEntry{
				{Field: "age_int", Value: "1"}, {Field: "age_int", Value: "2"},
				{Field: "email_bin", Value: "a@b.c"},
			},
		}, {
			Value:       []byte{0, 1, 2, 0xff},
			ContentType: "application/octet-stream",
			Deleted:     true,
		}},
	}
}

const sampleStoreJSON = `{"bucket_type":"default","bucket":"users","key":"u1","vclock":"a85h","values":[` +
	`{"metadata":{"content-type":"application/json","charset":"utf-8","content-encoding":"gzip",` +
	`"X-Store-VTag":"4LdxAbc","X-Store-Last-Modified":"Tue, 01 Jan 2030 00:00:00 GMT",` +
	`"X-Store-Meta":{"X-Store-Meta-Owner":"bob"},"index":{"age_int":[1,2],"email_bin":"a@b.c"},` +
	`"Links":[["users","u2","friend"]]},"data":"{\"name\":\"alice\"}"},` +
	`{"metadata":{"content-type":"application/octet-stream","X-Store-Meta":{},"X-Store-Deleted":"true"},"data_b64":"AAEC/w=="}]}`

func TestAppendObject(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dialect string
		obj     *core.Object
		want    string
	}{
		{"store", "store", sample(), sampleStoreJSON},
		{"riak", "riak", sample(), strings.ReplaceAll(sampleStoreJSON, "X-Store-", "X-Riak-")},
		{"minimal", "", &core.Object{Bucket: "b", Key: "k", Siblings: []core.Sibling{{}}},
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"","X-Store-Meta":{}},"data":""}]}`},
		{"escapes", "store", &core.Object{Bucket: "b\"\\\n\x01", Key: "k\xff\u2028é", Siblings: []core.Sibling{{
			Meta: []core.MetaEntry{{Name: "A\"b", Value: "v\t"}},
		}}},
			`{"bucket_type":"default","bucket":"b\"\\\n\u0001","key":"k\ufffd\u2028é","vclock":"","values":[{"metadata":{"content-type":"","X-Store-Meta":{"X-Store-Meta-A\"b":"v\t"}},"data":""}]}`},
		{"unsorted index", "store", &core.Object{Bucket: "b", Key: "k", Siblings: []core.Sibling{{
			Indexes: []core.IndexEntry{{Field: "z_bin", Value: "1"}, {Field: "a_int", Value: "-007"}, {Field: "z_bin", Value: "0"}},
		}}},
			`{"bucket_type":"default","bucket":"b","key":"k","vclock":"","values":[{"metadata":{"content-type":"","X-Store-Meta":{},"index":{"a_int":-7,"z_bin":["1","0"]}},"data":""}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCodec(tc.dialect)
			if err != nil {
				t.Fatal(err)
			}
			got := string(c.AppendObject(nil, tc.obj))
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestNewCodec(t *testing.T) {
	for _, tc := range []struct {
		dialect, prefix string
		ok              bool
	}{
		{"", PrefixStore, true}, {"store", PrefixStore, true}, {"RIAK", PrefixRiak, true}, {"other", "", false},
	} {
		c, err := NewCodec(tc.dialect)
		if (err == nil) != tc.ok || c.Prefix != tc.prefix {
			t.Errorf("NewCodec(%q) = %+v, %v", tc.dialect, c, err)
		}
	}
}

func TestInputs(t *testing.T) {
	c := Codec{}
	small := &core.Object{Type: "t", Bucket: "b", Key: "k", Siblings: []core.Sibling{{Value: []byte("v")}}}
	obj := string(c.AppendObject(nil, small))
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"commit", c.AppendCommitInput(nil, hooks.OpDelete, small), `{"op":"delete","object":` + obj + `}`},
		{"keyfun", AppendKeyFunInput(nil, "", "b", "k\""), `{"bucket_type":"default","bucket":"b","key":"k\""}`},
		{"linkfun", c.AppendLinkFunInput(nil, small, "", "friend"), `{"object":` + obj + `,"spec":{"bucket":"_","tag":"friend"}}`},
		{"map object", c.AppendMapInput(nil, hooks.MapInput{Object: small, Arg: json.RawMessage(`{"x":1}`)}),
			`{"object":` + obj + `,"keydata":null,"arg":{"x":1}}`},
		{"map not found", c.AppendMapInput(nil, hooks.MapInput{NotFound: &hooks.Place{Type: "t", Bucket: "b", Key: "k"}, KeyData: json.RawMessage(`"kd"`)}),
			`{"not_found":{"bucket_type":"t","bucket":"b","key":"k"},"keydata":"kd","arg":null}`},
		{"reduce", AppendReduceInput(nil, []json.RawMessage{json.RawMessage(`1`), nil, json.RawMessage(`[2]`)}, nil),
			`{"values":[1,null,[2]],"arg":null}`},
		{"reduce empty", AppendReduceInput(nil, nil, json.RawMessage(`3`)), `{"values":[],"arg":3}`},
		{"links", AppendLinks(nil, []core.Link{{Bucket: "b", Key: "k", Tag: "t"}}), `[["b","k","t"]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", tc.got, tc.want)
			}
			if !json.Valid(tc.got) {
				t.Errorf("not valid JSON")
			}
		})
	}
}

func TestDecodeObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want *core.Object
	}{
		{"store", sampleStoreJSON, sample()},
		{"riak", strings.ReplaceAll(sampleStoreJSON, "X-Store-", "X-Riak-"), sample()},
		{"lenient names, nulls, unknown members", `{"bucket":"b","key":"k","vclock":null,"extra":[1,{"a":null}],"values":[
			{"metadata":{"Content-Type":"text/plain","charset":null,"x-riak-vtag":"v","x-store-meta":{"x-riak-meta-A":"1","X-Store-Meta-B":null},
			 "INDEX":{"Email_BIN":["b","a","b"],"N_int":["+0012",-3,99999999999999999999999]},"links":[],"x-riak-deleted":false,"other":{}},
			 "data":"h\u00e9\ud83d\ude00\n","junk":true}]}`,
			&core.Object{Type: "default", Bucket: "b", Key: "k", Siblings: []core.Sibling{{
				Value: []byte("hé😀\n"), ContentType: "text/plain", VTag: "v",
				Meta: []core.MetaEntry{{Name: "A", Value: "1"}},
				Indexes: []core.IndexEntry{
					{Field: "email_bin", Value: "a"}, {Field: "email_bin", Value: "b"},
					{Field: "n_int", Value: "-3"}, {Field: "n_int", Value: "12"}, {Field: "n_int", Value: "99999999999999999999999"},
				},
			}}}},
		{"bin numbers, lone surrogate, empty data_b64", `{"values":[{"metadata":{"index":{"x_bin":1.5e3}},"data_b64":""},{"data":"\ud800x"}]}`,
			&core.Object{Type: "default", Siblings: []core.Sibling{
				{Indexes: []core.IndexEntry{{Field: "x_bin", Value: "1.5e3"}}},
				{Value: []byte("\uFFFDx")},
			}}},
		{"no values", `{"bucket_type":"t","bucket":"b","key":"k"}`, &core.Object{Type: "t", Bucket: "b", Key: "k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Codec{}.DecodeObject([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeObjectErrors(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", ``, "want an object, have nothing"},
		{"not an object", `[1]`, "want an object, have an array"},
		{"trailing", `{} x`, "after the value"},
		{"truncated", `{"bucket":"b"`, "unexpected end"},
		{"bad member", `{"bucket":"b",}`, "want a member name"},
		{"bad literal", `{"x":nul}`, "want a value"},
		{"bucket type", `{"bucket":1}`, "bucket: offset 10: want a string, have a number"},
		{"values not array", `{"values":{}}`, "values: offset 10: want an array"},
		{"vclock base64", `{"vclock":"@@"}`, "vclock: not standard base64"},
		{"data and data_b64", `{"values":[{"data":"a","data_b64":"YQ=="}]}`, "values: [0]: both data and data_b64"},
		{"data_b64", `{"values":[{"data_b64":"Y"}]}`, "data_b64: not standard base64"},
		{"index field", `{"values":[{"metadata":{"index":{"foo":"x"}}}]}`, `field "foo": index field names end in _bin or _int`},
		{"index token", `{"values":[{"metadata":{"index":{"a b_bin":"x"}}}]}`, "not a valid header name"},
		{"index int", `{"values":[{"metadata":{"index":{"n_int":"abc"}}}]}`, `field "n_int": "abc" is not an integer`},
		{"index float", `{"values":[{"metadata":{"index":{"n_int":1.5}}}]}`, `"1.5" is not an integer`},
		{"index type", `{"values":[{"metadata":{"index":{"n_int":true}}}]}`, "want a string or a number, have a boolean"},
		{"index nested", `{"values":[{"metadata":{"index":{"n_int":[[1]]}}}]}`, "want a string or a number, have an array"},
		{"index control", `{"values":[{"metadata":{"index":{"x_bin":"a\r\nb"}}}]}`, "control characters"},
		{"meta prefix", `{"values":[{"metadata":{"X-Store-Meta":{"Owner":"bob"}}}]}`, `user metadata names start with "X-Store-Meta-"`},
		{"meta value", `{"values":[{"metadata":{"X-Riak-Meta":{"X-Riak-Meta-N":5}}}]}`, "want a string, have a number"},
		{"meta name", `{"values":[{"metadata":{"X-Riak-Meta":{"X-Riak-Meta-":"x"}}}]}`, "not a valid header name"},
		{"meta injection", `{"values":[{"metadata":{"X-Riak-Meta":{"X-Riak-Meta-A":"x\nSet-Cookie: y"}}}]}`, "control characters"},
		{"content type", `{"values":[{"metadata":{"content-type":"text"}}]}`, "not a media type"},
		{"content type params", `{"values":[{"metadata":{"content-type":"text/plain; charset=x"}}]}`, "not a media type"},
		{"content type control", `{"values":[{"metadata":{"content-type":"a/b\u0000"}}]}`, "control characters"},
		{"date", `{"values":[{"metadata":{"X-Store-Last-Modified":"yesterday"}}]}`, "not an RFC 1123 GMT date"},
		{"deleted", `{"values":[{"metadata":{"X-Store-Deleted":"maybe"}}]}`, "not a boolean"},
		{"deleted type", `{"values":[{"metadata":{"X-Store-Deleted":1}}]}`, "want a boolean"},
		{"links arity", `{"values":[{"metadata":{"Links":[["b","k"]]}}]}`, "a link is [bucket, key, tag]"},
		{"links long", `{"values":[{"metadata":{"Links":[["b","k","t","x"]]}}]}`, "three elements"},
		{"links empty key", `{"values":[{"metadata":{"Links":[["b","","t"]]}}]}`, "not empty"},
		{"links shape", `{"values":[{"metadata":{"Links":{"b":"k"}}}]}`, "want an array"},
		{"invalid utf8", "{\"bucket\":\"\xff\"}", "invalid UTF-8"},
		{"control in string", "{\"bucket\":\"a\x01\"}", "control character"},
		{"bad escape", `{"bucket":"\x"}`, `bad escape`},
		{"bad unicode escape", `{"bucket":"\u12"}`, `bad \u escape`},
		{"bad number", `{"x":-}`, "want a number"},
		{"bad fraction", `{"x":1.}`, "bad number"},
		{"bad exponent", `{"x":1e}`, "bad number"},
		{"deep", `{"x":` + deep + `}`, "nested too deeply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Codec{}.DecodeObject([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error for %s", tc.in)
			}
			if !strings.HasPrefix(err.Error(), "hookjson: object: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	objs := []*core.Object{
		sample(),
		{Type: "t", Bucket: "", Key: "k", Siblings: []core.Sibling{{Value: []byte("\xc3\x28"), Indexes: []core.IndexEntry{{Field: "big_int", Value: "-123456789012345678901234567890"}}}}},
		{Type: "default", Bucket: "b", Key: "k"},
	}
	for _, dialect := range []string{"store", "riak"} {
		c, _ := NewCodec(dialect)
		for i, o := range objs {
			b := c.AppendObject(nil, o)
			got, err := Codec{}.DecodeObject(b)
			if err != nil {
				t.Fatalf("%s/%d: %v\n%s", dialect, i, err, b)
			}
			if !reflect.DeepEqual(got, o) {
				t.Errorf("%s/%d: got %+v\nwant %+v", dialect, i, got, o)
			}
		}
	}
}

func TestDecodeLinks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []core.Link
		err  string
	}{
		{`[]`, nil, ""},
		{` [["b","k","t"], ["b2","k2",""]] `, []core.Link{{Bucket: "b", Key: "k", Tag: "t"}, {Bucket: "b2", Key: "k2"}}, ""},
		{`[["b","k"]]`, nil, "a link is [bucket, key, tag]"},
		{`{}`, nil, "want an array"},
		{`[["b","k","t"]] x`, nil, "after the value"},
		{`[["b","k",1]]`, nil, "want a string"},
	} {
		got, err := DecodeLinks([]byte(tc.in))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("DecodeLinks(%s): error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("DecodeLinks(%s): %v", tc.in, err)
		case tc.err == "" && !reflect.DeepEqual(got, tc.want):
			t.Errorf("DecodeLinks(%s) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{`[]`, []string{}, ""},
		{` [1, "two", {"three": [3]}, null, true, -0.5e-3] `, []string{`1`, `"two"`, `{"three": [3]}`, `null`, `true`, `-0.5e-3`}, ""},
		{`{"a":1}`, nil, "want an array, have an object"},
		{`[1,]`, nil, "want a value"},
		{`[1] [2]`, nil, "after the value"},
		{`["\u00"]`, nil, `bad \u escape`},
		{`"x"`, nil, "want an array"},
	} {
		got, err := DecodeValues([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("DecodeValues(%s): error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeValues(%s): %v", tc.in, err)
			continue
		}
		strs := make([]string, len(got))
		for i, v := range got {
			strs[i] = string(v)
		}
		if !reflect.DeepEqual(strs, tc.want) {
			t.Errorf("DecodeValues(%s) = %q, want %q", tc.in, strs, tc.want)
		}
	}
}

// FuzzDecodeObject checks that decoding never panics and that whatever decodes
// re-encodes to valid JSON that decodes to the same object and re-encodes identically.
func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(sampleStoreJSON))
	f.Add([]byte(strings.ReplaceAll(sampleStoreJSON, "X-Store-", "x-riak-")))
	f.Add([]byte(`{"values":[{"metadata":{"index":{"a_int":["1",2]},"Links":[["a","b","c"]]},"data_b64":"/w=="}]}`))
	f.Add([]byte(`{"bucket":"\ud83d\ude00\u0000","values":[{"data":"\ud800"}]}`))
	f.Add([]byte(`[1,2,{"a":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Codec{}.DecodeObject(b)
		if err != nil {
			return
		}
		for _, c := range []Codec{{Prefix: PrefixStore}, {Prefix: PrefixRiak}} {
			enc := c.AppendObject(nil, o)
			if !json.Valid(enc) {
				t.Fatalf("encoding is not valid JSON: %s", enc)
			}
			o2, err := c.DecodeObject(enc)
			if err != nil {
				t.Fatalf("re-decode: %v\n%s", err, enc)
			}
			if !reflect.DeepEqual(o, o2) {
				t.Fatalf("round trip changed the object:\n%+v\n%+v", o, o2)
			}
			if enc2 := c.AppendObject(nil, o2); string(enc2) != string(enc) {
				t.Fatalf("re-encoding differs:\n%s\n%s", enc, enc2)
			}
		}
	})
}

// FuzzDecodeValues checks that DecodeValues agrees with encoding/json on validity.
func FuzzDecodeValues(f *testing.F) {
	f.Add([]byte(`[1,"a",{"b":[null,true,false]},-1.5e10]`))
	f.Add([]byte(`["\ud800\udc00"]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := DecodeValues(b)
		var std []json.RawMessage
		stdErr := json.Unmarshal(b, &std)
		if err == nil && stdErr != nil {
			t.Fatalf("accepted what encoding/json refuses (%v): %q", stdErr, b)
		}
		if err != nil {
			return
		}
		if len(vals) != len(std) {
			t.Fatalf("%d values, encoding/json found %d", len(vals), len(std))
		}
		for _, v := range vals {
			if !json.Valid(v) {
				t.Fatalf("element %q is not valid JSON", v)
			}
		}
	})
}
