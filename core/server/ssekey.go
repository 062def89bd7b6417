package server

import (
	"fmt"
	"path/filepath"

	"github.com/cairnkv/cairn/core/s3/sse"
)

// MasterKeyPath is where the server reads the SSE master key: cfg.SSEMasterKey, else
// <data-dir>/sse-master.key.
func MasterKeyPath(cfg Config) string {
	if cfg.SSEMasterKey != "" {
		return cfg.SSEMasterKey
	}
	return filepath.Join(cfg.DataDir, sse.MasterKeyFile)
}

// masterKey loads the SSE master key: the file --sse-master-key names (which must
// exist), or, standalone, the data directory's, created at first start. A file that
// others may read, or malformed, stops the server with a message that says so. A
// cluster node without --sse-master-key has none (nil): every node must have the same
// key, which nodes starting together cannot each create (see docs/rationale.md).
func (s *Server) masterKey() (*sse.MasterKey, error) {
	path := MasterKeyPath(s.cfg)
	if s.cfg.SSEMasterKey == "" && s.cfg.ClusterName != "" {
		s.log.Info("SSE-S3 and bucket default encryption are off: a cluster node needs --sse-master-key (the same file on every node)")
		return nil, nil
	}
	if s.cfg.SSEMasterKey != "" {
		k, err := sse.LoadMasterKey(path)
		if err != nil {
			return nil, fmt.Errorf("server: --sse-master-key: %w", err)
		}
		return k, nil
	}
	k, created, err := sse.LoadOrCreateMasterKey(path)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if created {
		s.log.Info("created the SSE master key; back it up with the data: SSE-S3 objects cannot be read without it", "file", path)
	}
	return k, nil
}
