package storage_test

import (
	"path/filepath"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/storage/blobtest"
)

// TestBlobStoreConformance runs the BlobStore suite against both implementations.
func TestBlobStoreConformance(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) storage.BlobStore {
			b, err := storage.OpenBlobs(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
	})
	t.Run("memory", func(t *testing.T) {
		blobtest.Run(t, func(*testing.T) storage.BlobStore { return storage.NewMemBlobs() })
	})
}
