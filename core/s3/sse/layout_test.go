package sse

import (
	"bytes"
	"errors"
	"testing"
)

// TestPartStreams: a version 2 stream opens what it sealed; data sealed for one part
// number does not open as another, nor as version 1 (the same extent id), nor the
// reverse.
func TestPartStreams(t *testing.T) {
	key, prefix, id := NewKey(), bytes.Repeat([]byte{9}, NoncePrefixSize), []byte("extent-a")
	size := int64(S + 100)
	plain := plaintext(size)
	part := func(n uint32) *Stream {
		s, err := NewPartStream(key, prefix, id, n, size)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sealed := seal(t, part(2), plain)
	if got, err := open(part(2), sealed, 0, size); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("round trip: %v", err)
	}
	for name, s := range map[string]*Stream{"part 3": part(3), "part 0": part(0), "version 1": testStream(t, key, id, size)} {
		if _, err := open(s, sealed, 0, size); !errors.Is(err, ErrAuth) {
			t.Errorf("opened as %s: %v, want ErrAuth", name, err)
		}
	}
	if _, err := open(part(0), seal(t, testStream(t, key, id, size), plain), 0, size); !errors.Is(err, ErrAuth) {
		t.Errorf("version 1 data opened as version 2 part 0: %v", err)
	}
}

// TestLayout: the layout MAC checks against the same extents under the same key, and
// fails for extents reordered, dropped, renumbered, resized or renamed, and under
// another data key.
func TestLayout(t *testing.T) {
	lk := LayoutKey(NewKey())
	layout := []LayoutEntry{{1, []byte("aaaaaaaaaaaaaaaa"), 100}, {2, []byte("bbbbbbbbbbbbbbbb"), 100}, {5, []byte("cccccccccccccccc"), 7}}
	mac := Layout(lk, layout)
	if err := CheckLayout(lk, layout, mac); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string][]LayoutEntry{
		"reordered":  {layout[1], layout[0], layout[2]},
		"dropped":    {layout[0], layout[2]},
		"last cut":   layout[:2],
		"renumbered": {{1, layout[0].ID, 100}, {3, layout[1].ID, 100}, layout[2]},
		"resized":    {layout[0], layout[1], {5, layout[2].ID, 8}},
		"renamed":    {layout[0], layout[1], {5, []byte("dddddddddddddddd"), 7}},
	} {
		if err := CheckLayout(lk, l, mac); !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrAuth", name, err)
		}
	}
	if err := CheckLayout(LayoutKey(NewKey()), layout, mac); !errors.Is(err, ErrAuth) {
		t.Errorf("another data key: %v", err)
	}
}
