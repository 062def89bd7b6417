package main

import (
	"path/filepath"
	"testing"
)

// TestBucketTypeShowWithoutStore: `cairn bucket-type show` reads, so on a directory
// that holds no store it fails (exit 1) with check's message and creates nothing, where
// it used to create an empty store and report the type missing.
func TestBucketTypeShowWithoutStore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	missing := filepath.Join(root, "missing")
	before := treeState(t, root)
	code, out, errOut := runCairn(t, serverOpts{args: []string{"bucket-type", "show", "sets", "--data-dir", missing}})
	want := "cairn: data directory " + missing + " does not exist (give the server's --data-dir, or set CAIRN_DATA_DIR)\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, out, errOut, want)
	}
	if after := treeState(t, root); after != before {
		t.Errorf("bucket-type show changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
