package wire

import (
	"errors"
	"slices"
	"testing"

	"github.com/cairnkv/cairn/core"
)

type h = map[string][]string

func TestParseIndexHeaders(t *testing.T) {
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }
	tests := []struct {
		name    string
		headers h
		want    []core.IndexEntry
		wantErr string
	}{
		{name: "none", headers: h{"Content-Type": {"text/plain"}}},
		{name: "comma space splits", headers: h{"X-Riak-Index-Field_bin": {"a, b"}}, want: []core.IndexEntry{e("field_bin", "a"), e("field_bin", "b")}},
		{name: "comma alone does not", headers: h{"X-Riak-Index-Field_bin": {"a,b"}}, want: []core.IndexEntry{e("field_bin", "a,b")}},
		{name: "comma tab splits, one whitespace eaten", headers: h{"X-Riak-Index-F_bin": {"a,\tb,  c"}}, want: []core.IndexEntry{e("f_bin", " c"), e("f_bin", "a"), e("f_bin", "b")}},
		{name: "store prefix", headers: h{"X-Store-Index-Email_bin": {"x@y"}}, want: []core.IndexEntry{e("email_bin", "x@y")}},
		{name: "lower-case name", headers: h{"x-riak-index-email_bin": {"x@y"}}, want: []core.IndexEntry{e("email_bin", "x@y")}},
		{name: "repeated header values", headers: h{"X-Riak-Index-F_bin": {"b", "a", "b"}}, want: []core.IndexEntry{e("f_bin", "a"), e("f_bin", "b")}},
		{name: "both prefixes merge", headers: h{"X-Riak-Index-F_bin": {"a"}, "X-Store-Index-F_bin": {"a, c"}}, want: []core.IndexEntry{e("f_bin", "a"), e("f_bin", "c")}},
		{name: "ints canonical and numeric order", headers: h{"X-Riak-Index-Age_int": {"+007, -3, 10, 9, -0, 00, 123456789012345678901234567890, -12"}},
			want: []core.IndexEntry{e("age_int", "-12"), e("age_int", "-3"), e("age_int", "0"), e("age_int", "7"), e("age_int", "9"), e("age_int", "10"), e("age_int", "123456789012345678901234567890")}},
		{name: "fields sorted", headers: h{"X-Riak-Index-Z_bin": {"1"}, "X-Riak-Index-A_int": {"2"}, "X-Riak-Index-M_bin": {""}},
			want: []core.IndexEntry{e("a_int", "2"), e("m_bin", ""), e("z_bin", "1")}},
		{name: "bin bytes kept", headers: h{"X-Riak-Index-F_bin": {"Héllo , x"}}, want: []core.IndexEntry{e("f_bin", "Héllo "), e("f_bin", "x")}},
		{name: "unknown type", headers: h{"X-Riak-Index-Foo": {"1"}}, wantErr: "Unknown field type for field: 'foo'.\n"},
		{name: "bare suffix", headers: h{"X-Riak-Index-_bin": {"1"}}, wantErr: "Unknown field type for field: '_bin'.\n"},
		{name: "bare int suffix", headers: h{"X-Store-Index-_INT": {"1"}}, wantErr: "Unknown field type for field: '_int'.\n"},
		{name: "bad int", headers: h{"X-Riak-Index-Age_int": {"abc"}}, wantErr: "Could not parse field 'age_int', value 'abc'.\n"},
		{name: "int with space", headers: h{"X-Riak-Index-Age_int": {"1 "}}, wantErr: "Could not parse field 'age_int', value '1 '.\n"},
		{name: "empty int", headers: h{"X-Riak-Index-Age_int": {"1, "}}, wantErr: "Could not parse field 'age_int', value ''.\n"},
		{name: "sign only", headers: h{"X-Riak-Index-Age_int": {"-"}}, wantErr: "Could not parse field 'age_int', value '-'.\n"},
		{name: "float", headers: h{"X-Riak-Index-Age_int": {"1.5"}}, wantErr: "Could not parse field 'age_int', value '1.5'.\n"},
		{name: "all problems sorted", headers: h{
			"X-Riak-Index-Zed":      {"1"},
			"X-Riak-Index-Foo":      {"1, 2"},
			"X-Riak-Index-B_int":    {"x, 1, y"},
			"X-Riak-Index-A_int":    {"q"},
			"X-Riak-Index-Good_bin": {"fine"},
		}, wantErr: "Could not parse field 'a_int', value 'q'.\n" +
			"Could not parse field 'b_int', value 'x'.\n" +
			"Could not parse field 'b_int', value 'y'.\n" +
			"Unknown field type for field: 'foo'.\n" +
			"Unknown field type for field: 'zed'.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIndexHeaders(tt.headers, DialectRiak)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("got %q, want error %q", got, tt.wantErr)
				}
				if err.Error() != tt.wantErr {
					t.Fatalf("error text %q, want %q", err.Error(), tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidIndex) {
					t.Fatalf("%v does not match ErrInvalidIndex", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitIndexValuesMatchesRegexp(t *testing.T) {
	for _, v := range []string{"", ",", ", ", "a, b", "a,b", "a,  b", ",\n,\r,\f,\t, ,\v", "a, , b", "x,", ",x", "é, ü,\xff"} {
		var got []string
		for more, rest := true, v; more; {
			var s string
			s, rest, more = cutIndexValue(rest)
			got = append(got, s)
		}
		if want := refSplitIndex(v); !slices.Equal(got, want) {
			t.Errorf("split %q = %q, want %q", v, got, want)
		}
	}
}

func TestFormatIndexHeaders(t *testing.T) {
	entries := []core.IndexEntry{
		{Field: "age_int", Value: "10"}, {Field: "age_int", Value: "9"}, {Field: "age_int", Value: "-2"},
		{Field: "email_bin", Value: "b@x"}, {Field: "email_bin", Value: "a@x"}, {Field: "email_bin", Value: "a@x"},
	}
	got := FormatIndexHeaders(entries, DialectRiak)
	want := [][2]string{{"x-riak-index-age_int", "-2, 9, 10"}, {"x-riak-index-email_bin", "a@x, b@x"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if entries[0].Value != "10" {
		t.Fatal("FormatIndexHeaders reordered its input")
	}
	if got := FormatIndexHeaders(entries[:1], DialectStore); !slices.Equal(got, [][2]string{{"x-store-index-age_int", "10"}}) {
		t.Fatalf("store dialect: %q", got)
	}
	if FormatIndexHeaders(nil, DialectRiak) != nil {
		t.Fatal("nil entries should format to nil")
	}
	// A GET's index headers PUT back give the same entries.
	m := map[string][]string{}
	for _, kv := range FormatIndexHeaders(entries, DialectRiak) {
		m[kv[0]] = append(m[kv[0]], kv[1])
	}
	back, err := ParseIndexHeaders(m, DialectRiak)
	e := func(f, v string) core.IndexEntry { return core.IndexEntry{Field: f, Value: v} }
	wantBack := []core.IndexEntry{e("age_int", "-2"), e("age_int", "9"), e("age_int", "10"), e("email_bin", "a@x"), e("email_bin", "b@x")}
	if err != nil || !slices.Equal(back, wantBack) {
		t.Fatalf("round trip: %q, %v", back, err)
	}
	part := IndexPartHeaders(entries, DialectRiak)
	wantPart := [][2]string{{"x-riak-index-age_int", "-2"}, {"x-riak-index-age_int", "9"}, {"x-riak-index-age_int", "10"},
		{"x-riak-index-email_bin", "a@x"}, {"x-riak-index-email_bin", "b@x"}}
	if !slices.Equal(part, wantPart) {
		t.Fatalf("IndexPartHeaders = %q", part)
	}
}

func TestIndexHeaderName(t *testing.T) {
	if got := IndexHeaderName(DialectRiak, "f_bin"); got != "x-riak-index-f_bin" {
		t.Fatal(got)
	}
	if got := IndexHeaderName(DialectStore, "f_bin"); got != "x-store-index-f_bin" {
		t.Fatal(got)
	}
}
