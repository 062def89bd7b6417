package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// noHTML is what a json.Encoder with SetEscapeHTML(false) writes for s.
func noHTML(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppend(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "ctl\x00\x01\x1f\n\r\t\b\f", "<a&b>", "é ü 日本", "bad\xff\xfeutf8", "\u2028\u2029", "\xed\xa0\x80"} {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendNoHTML(nil, s), noHTML(s); string(got) != want {
			t.Errorf("AppendNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
	for _, s := range []string{"key-0001", "key with <html> & é"} {
		if n := testing.AllocsPerRun(100, func() {
			var buf [64]byte
			Append(buf[:0], s)
		}); n != 0 {
			t.Errorf("Append(%q) allocates %v times", s, n)
		}
	}
	b := []byte("bytes\xff<")
	want, _ := json.Marshal(string(b))
	if got := Append(nil, b); string(got) != string(want) {
		t.Errorf("Append(%q bytes) = %s, want %s", b, got, want)
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "k", "\xff", "<>&", "\u2028", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
		if got := Append(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("Append(%q as bytes) = %s, want %s", s, got, want)
		}
		if got, want := AppendNoHTML(nil, s), noHTML(s); string(got) != want {
			t.Fatalf("AppendNoHTML(%q) = %s, want %s", s, got, want)
		}
	})
}
