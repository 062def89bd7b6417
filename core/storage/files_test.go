package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// checkPrivate fails the test for every directory under root (root included) that is
// not 0700 and every file that is not 0600. A file that a compaction still running
// removes between the listing and its stat is skipped.
func checkPrivate(t *testing.T, root string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p != root {
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		want := filePerm
		if d.IsDir() {
			want = dirPerm
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d entries under %s", n, root)
	}
}

// TestFilesArePrivate: under a parent directory open to everyone (0755 as an operator
// may create it, umask permitting), the LevelDB directory and every file in it (the
// journal and tables hold values in clear, S3 secrets included), and the blob
// directories and files, are 0700 and 0600, also across a reopen (goleveldb recreates
// LOG and CURRENT 0644) and after files of an older build were left 0644.
func TestFilesArePrivate(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "leveldb")
	for round := 0; round < 2; round++ {
		db, err := Open(dir, Options{NoSync: true, WriteBuffer: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			if err := db.Put(k("t", "b", string(rune('a'+i%26)), string(rune(i))), value(i, 1000), false); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.CompactRange(nil, nil); err != nil {
			t.Fatal(err)
		}
		checkPrivate(t, dir)
		db.Close()
		// An older build's leftovers: loose files in the directory, and the directory.
		if err := os.WriteFile(filepath.Join(dir, "000999.ldb"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	blobs, err := OpenBlobs(filepath.Join(parent, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := blobs.Create(context.Background(), []byte{0xab, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, blobs.Dir())
}

// TestMakeTreePrivate: an older build's tree (0755 directories, 0644 files) is made
// private below the root, which keeps its mode; symbolic links and what they point to
// are left alone; a second pass changes nothing.
func TestMakeTreePrivate(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	mk := func(p string, perm fs.FileMode, dir bool) {
		t.Helper()
		var err error
		if dir {
			err = os.MkdirAll(p, perm)
		} else {
			err = os.WriteFile(p, []byte("x"), perm)
		}
		if err == nil {
			err = os.Chmod(p, perm)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	mk(filepath.Join(root, "blobs", "ab"), 0o755, true)
	mk(filepath.Join(root, "blobs"), 0o755, true)
	mk(filepath.Join(root, "blobs", "ab", "ab01"), 0o644, false)
	mk(filepath.Join(root, "admin-credentials.json"), 0o644, false)
	mk(filepath.Join(root, "private"), 0o700, true)
	mk(outside, 0o755, true)
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	n, err := MakeTreePrivate(root)
	if err != nil || n != 4 {
		t.Fatalf("MakeTreePrivate = %d, %v; want 4 entries changed", n, err)
	}
	for p, want := range map[string]fs.FileMode{
		root: 0o755, filepath.Join(root, "blobs"): 0o700, filepath.Join(root, "blobs", "ab"): 0o700,
		filepath.Join(root, "blobs", "ab", "ab01"): 0o600, filepath.Join(root, "admin-credentials.json"): 0o600,
		outside: 0o755,
	} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %#o", p, fi.Mode().Perm(), err, want)
		}
	}
	if n, err := MakeTreePrivate(root); n != 0 || err != nil {
		t.Errorf("second pass: %d, %v", n, err)
	}
}
