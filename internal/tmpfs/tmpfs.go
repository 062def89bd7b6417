// Package tmpfs mounts small tmpfs filesystems for tests that need a disk that really
// fills up (a full data directory). Only tests import it.
package tmpfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Mount mounts a tmpfs of size (mount's syntax, e.g. "8m") on a new directory and
// unmounts it when the test ends (register what must be closed first after calling
// Mount). It skips the test where mounting is impossible: not root, no permission (a
// container without CAP_SYS_ADMIN), no mount command.
func Mount(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a small tmpfs to fill up needs root")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Fill writes zeros to a new file at path until the filesystem is full, leaving it
// completely full, and returns the bytes written.
func Fill(t testing.TB, path string) int64 {
	t.Helper()
	return FillUpTo(t, path, -1)
}

// FillUpTo writes up to n bytes (n < 0: no limit) of zeros to a new file at path,
// stopping early when the filesystem is full, and returns the bytes written.
func FillUpTo(t testing.TB, path string, n int64) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var total int64
	for n < 0 || total < n {
		chunk := buf
		if n >= 0 && n-total < int64(len(chunk)) {
			chunk = chunk[:n-total]
		}
		k, err := f.Write(chunk)
		total += int64(k)
		if err != nil {
			break
		}
	}
	return total
}
