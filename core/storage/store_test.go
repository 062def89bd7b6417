package storage_test

import (
	"testing"

	"github.com/cairnkv/cairn/core/storage"
	"github.com/cairnkv/cairn/core/storage/storagetest"
)

// TestStoreConformance runs the Store conformance suite against the LevelDB store.
func TestStoreConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, dir string) storage.Store {
		st, err := storage.OpenStore(dir, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
