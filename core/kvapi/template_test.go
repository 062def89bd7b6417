package kvapi

import "testing"

func TestTemplateMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		ok            bool
		caps          []string
	}{
		{"/buckets/{bucket}/keys/{key}", "/buckets/b/keys/k", true, []string{"b", "k"}},
		{"/buckets/{bucket}/keys/{key}", "/buckets/b%2F1/keys/a+b", true, []string{"b%2F1", "a+b"}},
		{"/buckets/{bucket}/keys/{key}", "/buckets/b/keys", false, nil},
		{"/buckets/{bucket}/keys/{key}", "/buckets/b/keys/k/extra", false, nil},
		{"/buckets/{bucket}/keys/{key}", "/buckets/b/keys/k/", false, nil},
		{"/buckets/{bucket}/keys/{key}", "/bucket/b/keys/k", false, nil},
		{"/buckets/{bucket}/keys/{key}", "buckets/b/keys/k", false, nil},
		{"/types/{type}/buckets/{bucket}/keys/{key}", "/types/t/buckets/b/keys/k", true, []string{"t", "b", "k"}},
		{"/{prefix:store|riak}/{bucket}", "/riak/b", true, []string{"b"}},
		{"/{prefix:store|riak}/{bucket}", "/store/b", true, []string{"b"}},
		{"/{prefix:store|riak}/{bucket}", "/stored/b", false, nil},
		{"/{prefix:store|riak}/{bucket}", "/riak", false, nil},
		{"/", "/", true, nil},
		{"/", "/ping", false, nil},
		{"/ping", "/ping", true, nil},
		{"/ping", "/", false, nil},
		{"/ping", "", false, nil},
		{"/buckets/{bucket}/keys/{key}/{walk*}", "/buckets/b/keys/k/b2,t,1", true, []string{"b", "k", "b2,t,1"}},
		{"/buckets/{bucket}/keys/{key}/{walk*}", "/buckets/b/keys/k/_,_,_/x,%2C,1", true, []string{"b", "k", "_,_,_/x,%2C,1"}},
		{"/buckets/{bucket}/keys/{key}/{walk*}", "/buckets/b/keys/k", false, nil},
		{"/buckets/{bucket}/index/{query*}", "/buckets/b/index/f_bin/a/z", true, []string{"b", "f_bin/a/z"}},
	}
	for i, tt := range tests {
		tmpl := parseTemplate(tt.pattern)
		var caps [maxCaptures]string
		if got := tmpl.match(tt.path, &caps); got != tt.ok {
			t.Errorf("%d: %q matching %q = %v, want %v", i, tt.pattern, tt.path, got, tt.ok)
			continue
		}
		for j, want := range tt.caps {
			if caps[j] != want {
				t.Errorf("%d: capture %d = %q, want %q", i, j, caps[j], want)
			}
		}
	}
	tmpl := parseTemplate("/types/{type}/buckets/{bucket}/keys/{key}")
	if n := testing.AllocsPerRun(100, func() {
		var caps [maxCaptures]string
		tmpl.match("/types/t/buckets/b/keys/k", &caps)
	}); n != 0 {
		t.Errorf("match allocates %v times", n)
	}
}
