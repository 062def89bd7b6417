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
	if n := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		AppendJSONString(buf[:0], "key-0001 with <html>")
	}); n != 0 {
		t.Errorf("allocates %v times", n)
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
	})
}
