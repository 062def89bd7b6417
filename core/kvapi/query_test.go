package kvapi

import (
	"net/url"
	"strings"
	"testing"
)

// queryNames are the names the query tests look up: the handlers' parameters and a few
// that the queries below use in odd ways.
var queryNames = []string{"dw", "w", "returnbody", "timeout", "vtag", "props", "keys", "", "a", "a b", "x"}

// checkQueryArgs fails t when queryArgs answers any of queryNames differently from
// url.ParseQuery (the first value, as (*url.URL).Query gives it).
func checkQueryArgs(t *testing.T, raw string) {
	t.Helper()
	var q queryArgs
	q.parse(raw)
	want, _ := url.ParseQuery(raw)
	for _, name := range queryNames {
		got, gotOK := q.lookup(name)
		vs, wantOK := want[name]
		wantV := ""
		if wantOK {
			wantV = vs[0]
		}
		if got != wantV || gotOK != wantOK {
			t.Errorf("query %q: lookup(%q) = %q, %v; url.ParseQuery gives %q, %v", raw, name, got, gotOK, wantV, wantOK)
		}
		if g := q.get(name); g != want.Get(name) {
			t.Errorf("query %q: get(%q) = %q; url.Values.Get gives %q", raw, name, g, want.Get(name))
		}
	}
}

func TestQueryArgsMatchesParseQuery(t *testing.T) {
	tests := []struct {
		name, raw string
		plain     bool // read in place, without url.ParseQuery
	}{
		{"empty", "", true},
		{"one", "dw=0", true},
		{"several", "dw=0&w=all&returnbody=true", true},
		{"first value wins", "dw=0&dw=1", true},
		{"no value", "returnbody", true},
		{"empty value", "dw=&w=1", true},
		{"empty key", "=x&dw=2", true},
		{"empty pairs", "&&dw=3&&", true},
		{"two equals", "a=b=c", true},
		{"escaped value", "vtag=a%2Bb&dw=1", false},
		{"escaped key", "d%77=1", false},
		{"plus is a space", "a+b=c+d&a b=z", false},
		{"bad escape dropped", "dw=%zz&w=1", false},
		{"semicolon dropped", "dw=1;w=2&timeout=5", false},
		{"many pairs", strings.Repeat("x=1&", maxPlainArgs) + "dw=9", false},
		{"just enough pairs", strings.Repeat("x=1&", maxPlainArgs-1) + "dw=9", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkQueryArgs(t, tt.raw)
			var q queryArgs
			q.parse(tt.raw)
			if plain := q.vals == nil; plain != tt.plain {
				t.Errorf("query %q read in place: %v, want %v", tt.raw, plain, tt.plain)
			}
		})
	}
}

func FuzzQueryArgs(f *testing.F) {
	for _, s := range []string{"", "dw=0", "a=1&a=2&b", "=&=", "a%20b=c+d", "x;y=1", strings.Repeat("k=v&", 20)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkQueryArgs(t, raw)
	})
}

func BenchmarkQueryArgs(b *testing.B) {
	for _, raw := range []string{"dw=0", "returnbody=true&w=all&dw=1", "vtag=a%2Bb"} {
		b.Run(raw, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var q queryArgs
				q.parse(raw)
				if _, err := parseParams(&q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
