package server

import "testing"

func TestAutoObjectCacheSize(t *testing.T) {
	got := AutoObjectCacheSize()
	if got < minAutoObjectCache || got > maxAutoObjectCache {
		t.Fatalf("AutoObjectCacheSize() = %d, want within [%d, %d]", got, minAutoObjectCache, maxAutoObjectCache)
	}
	if m := availableMemory(); m > 0 {
		want := min(max(m/objectCacheShare, minAutoObjectCache), maxAutoObjectCache)
		if got != want {
			t.Fatalf("AutoObjectCacheSize() = %d, want %d for %d bytes of memory", got, want, m)
		}
	}
}
