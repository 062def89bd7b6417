package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareDataDir: a missing data directory is created 0700 without a warning; one
// the operator created open to others (0755, 0750, 0701) is kept as it is but warned
// about at warn level, and what an older build left readable in it is made private.
func TestPrepareDataDir(t *testing.T) {
	tests := []struct {
		name string
		mode os.FileMode // 0: missing
		warn bool
	}{
		{"missing", 0, false},
		{"private", 0o700, false},
		{"world-readable", 0o755, true},
		{"group-readable", 0o750, true},
		{"others may enter", 0o701, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "data")
			if tt.mode != 0 {
				if err := os.MkdirAll(dir, tt.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, AdminCredentialsFile), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			if err := PrepareDataDir(dir, log); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.mode
			if want == 0 {
				want = 0o700
			}
			if fi.Mode().Perm() != want {
				t.Errorf("data directory mode %#o, want %#o (kept, or 0700 when created)", fi.Mode().Perm(), want)
			}
			warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "open to other users")
			if warned != tt.warn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tt.warn, logs.String())
			}
			if tt.mode != 0 {
				if fi, err := os.Stat(filepath.Join(dir, AdminCredentialsFile)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("credentials file left by an older build: %v, %v; want 0600", fi.Mode().Perm(), err)
				}
			}
		})
	}
}

// TestPrepareDataDirNotADirectory: a data directory path that is a file is an error.
func TestPrepareDataDirNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PrepareDataDir(f, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("PrepareDataDir(file) succeeded")
	}
}
