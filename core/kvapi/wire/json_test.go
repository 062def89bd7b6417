package wire

import (
	"encoding/json"
	"testing"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "ctl\x00\x01\x1f\n\r\t\b\f", "<a&b>", "é ü 日本", "bad\xff\xfeutf8", "\u2028\u2029", "\xed\xa0\x80"} {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, s := range []string{"key-0001", "key with <html> & é"} {
		if n := testing.AllocsPerRun(100, func() {
			var buf [64]byte
			AppendJSONString(buf[:0], s)
		}); n != 0 {
			t.Errorf("AppendJSONString(%q) allocates %v times", s, n)
		}
	}
	b := []byte("bytes\xff<")
	want, _ := json.Marshal(string(b))
	if got := AppendJSONString(nil, b); string(got) != string(want) {
		t.Errorf("AppendJSONString(%q bytes) = %s, want %s", b, got, want)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "k", "\xff", "<>&", "\u2028", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
		if got := AppendJSONString(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("AppendJSONString(%q as bytes) = %s, want %s", s, got, want)
		}
	})
}
