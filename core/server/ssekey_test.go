package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/s3/sse"
)

// TestMasterKey: standalone, the data directory's key is created 0600 at first start
// and read back after; a --sse-master-key file must exist and be private; a cluster
// node without --sse-master-key has no key and creates no file.
func TestMasterKey(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	standalone := &Server{cfg: Config{DataDir: dir}, log: log}
	k1, err := standalone.masterKey()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, sse.MasterKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if k2, err := standalone.masterKey(); err != nil || k2.ID() != k1.ID() {
		t.Fatalf("second start: %v", err)
	}
	loose := filepath.Join(t.TempDir(), "loose.key")
	if err := os.WriteFile(loose, []byte(strings.Repeat("ab", sse.KeySize)), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{filepath.Join(dir, "missing.key"): "no such file", loose: "owner only"} {
		s := &Server{cfg: Config{DataDir: dir, SSEMasterKey: path}, log: log}
		if _, err := s.masterKey(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--sse-master-key") {
			t.Errorf("--sse-master-key %s: %v, want %q", path, err, want)
		}
	}
	cdir := t.TempDir()
	node := &Server{cfg: Config{DataDir: cdir, ClusterName: "c"}, log: log}
	if k, err := node.masterKey(); k != nil || err != nil {
		t.Fatalf("cluster node without --sse-master-key: %v %v", k, err)
	}
	if _, err := os.Stat(filepath.Join(cdir, sse.MasterKeyFile)); !os.IsNotExist(err) {
		t.Fatalf("a cluster node created a key file: %v", err)
	}
}
