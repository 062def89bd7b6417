package cairn

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestScannerStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`""`, "", true},
		{`"plain"`, "plain", true},
		{`"a\"b\\c\/d"`, `a"b\c/d`, true},
		{`"\b\f\n\r\t"`, "\b\f\n\r\t", true},
		{`"\u00e9\u2713"`, "é✓", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud83d x"`, "\ufffd x", true},
		{`"\ude00"`, "\ufffd", true},
		{"\"bad\xff\"", "bad\ufffd", true},
		{"\"é\\n\xff\"", "é\n\ufffd", true},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{"\"a\nb\"", "", false},
		{`"open`, "", false},
		{`"open\`, "", false},
		{`7`, "", false},
	} {
		s := scanner{b: []byte(tc.in)}
		got, err := s.str()
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("str(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestScannerNumbersAndSkip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"0", "-0", "12", "-1.5", "1e9", "1E+2", "2.5e-3", "123456789012345678901234567890"} {
		s := scanner{b: []byte(in)}
		if got, err := s.number(); err != nil || got != in {
			t.Errorf("number(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"-", "01", "1.", ".5", "1e", "+1", "x"} {
		s := scanner{b: []byte(in)}
		_, err := s.number()
		if err == nil {
			err = s.end()
		}
		if err == nil {
			t.Errorf("number(%q) accepted", in)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	s := scanner{b: []byte(deep)}
	if err := s.skip(); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep nesting: %v", err)
	}
}

// FuzzScanner checks the reader against encoding/json: the same inputs are valid, and
// strings decode to the same text.
func FuzzScanner(f *testing.F) {
	for _, seed := range []string{`{"a":[1,"x",true,null,{"b":-1.5e3}]}`, `"\u00e9\ud83d\ude00"`, `[1,]`, `{"a" 1}`, "\"\xff\"", `  "x"  `} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s := scanner{b: []byte(in)}
		err := s.skip()
		if err == nil {
			err = s.end()
		}
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Fatalf("json.Valid=%v, scanner error %v", valid, err)
		}
		var want string
		if json.Unmarshal([]byte(in), &want) == nil {
			s := scanner{b: []byte(in)}
			got, err := s.str()
			if err != nil || got != want {
				t.Fatalf("str = %q, %v; encoding/json %q", got, err, want)
			}
		}
	})
}
