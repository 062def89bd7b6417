package wire

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core"
)

func TestRandomIDs(t *testing.T) {
	gens := []struct {
		name string
		fn   func() string
		n    int
	}{
		{"NewKey", core.NewKey, core.KeyLen},
		{"NewVTag", core.NewVTag, core.VTagLen},
		{"NewBoundary", NewBoundary, UniqueIDLen},
	}
	for _, g := range gens {
		seen := map[string]bool{}
		var counts [256]int
		for range 2000 {
			id := g.fn()
			if len(id) != g.n {
				t.Fatalf("%s: %q has length %d, want %d", g.name, id, len(id), g.n)
			}
			if strings.Trim(id, base62Digits) != "" {
				t.Fatalf("%s: %q is not base62", g.name, id)
			}
			if seen[id] {
				t.Fatalf("%s: duplicate %q", g.name, id)
			}
			seen[id] = true
			for i := 0; i < len(id); i++ {
				counts[id[i]]++
			}
		}
		// Every digit shows up, none dominates: a coarse check against a broken generator.
		total := 2000 * g.n
		for i := 0; i < len(base62Digits); i++ {
			c := counts[base62Digits[i]]
			if exp := total / 62; c < exp/2 || c > exp*2 {
				t.Errorf("%s: digit %q appeared %d times, expected about %d", g.name, base62Digits[i], c, exp)
			}
		}
	}
}

func TestRandomIDsConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]string, 0, 500)
			for range 500 {
				local = append(local, core.NewKey(), core.NewVTag())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("duplicate %q", id)
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()
}

func TestETagOfClock(t *testing.T) {
	clock, _ := base64.StdEncoding.DecodeString("a85hYGBgzGDKBVIsbLvm1WYwJTLmsTLcjeE5ypcFAA==")
	tests := []struct {
		clock []byte
		want  string
	}{
		{nil, "6SFsQFoWZKg7DZ3I6vLDPK"}, // base62(md5("")) computed independently
		{clock, "5ybd4tt7AnLkWXJ3e3OBJI"},
	}
	for _, tt := range tests {
		if got := ETagOfClock(tt.clock); got != tt.want {
			t.Errorf("ETagOfClock(%x) = %q, want %q", tt.clock, got, tt.want)
		}
	}
}
