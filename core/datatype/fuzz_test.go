package datatype

import (
	"bytes"
	"testing"
)

// FuzzUnmarshal: Unmarshal never panics; what it accepts re-encodes to the same bytes
// and survives Value, Context and a merge with itself.
func FuzzUnmarshal(f *testing.F) {
	f.Add(Marshal(New(Counter)))
	for _, k := range allKinds {
		f.Add(Marshal(New(k)))
	}
	f.Add([]byte{1, byte(Map), 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Unmarshal(b)
		if err != nil {
			return
		}
		if !bytes.Equal(Marshal(v), b) {
			t.Fatalf("accepted non-canonical bytes %x", b)
		}
		_ = v.Value()
		_ = v.Context()
		m, err := Merge(v, v)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.Value()
	})
}

// FuzzParseOp: ParseOp never panics, and what it accepts applies to an empty value
// without any error but a precondition or range error.
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{`5`, `"increment"`, `{"add_all":["a","b"]}`, `{"remove":"a"}`,
		`{"update":{"a_counter":1,"m_map":{"update":{"f_flag":"enable"}}},"remove":["x_set"]}`} {
		f.Add(uint8(Counter), []byte(s))
		f.Add(uint8(Map), []byte(s))
		f.Add(uint8(Set), []byte(s))
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		k := Kind(kind%5 + 1)
		op, err := ParseOp(k, body)
		if err != nil {
			return
		}
		_, _ = Apply(New(k), op, Writer{Actor: "fuzz"})
	})
}
