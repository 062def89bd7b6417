package server

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cairnkv/cairn/core/cluster/jsblob"
	"github.com/cairnkv/cairn/core/storage"
)

// blobStoreStart bounds the creation (or check) of the cluster's blob stream at start.
const blobStoreStart = time.Minute

// openBlobs opens the S3 service's blob store: the blob files under the data directory
// standalone; in cluster mode the JetStream blob store (docs/rationale.md, "S3 blobs on
// JetStream"), replicated like the cluster-wide metadata, which Close closes.
func (s *Server) openBlobs() (storage.BlobStore, error) {
	if s.node == nil {
		b, err := storage.OpenBlobs(filepath.Join(s.cfg.DataDir, BlobsDir))
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		return b, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), blobStoreStart)
	defer cancel()
	b, err := jsblob.New(ctx, s.node.JetStream(), jsblob.Config{Replicas: s.node.Replicas()})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.jsBlobs = b
	return b, nil
}
