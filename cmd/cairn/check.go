package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/s3"
	"github.com/cairnkv/cairn/core/s3/sse"
	"github.com/cairnkv/cairn/core/server"
	"github.com/cairnkv/cairn/core/storage"
)

// openOfflineDB opens the store of a data directory that no server is using, for the
// offline commands, and the KV service over it; the returned function closes both. With
// readOnly, the store must exist and nothing in dataDir is created or changed.
func openOfflineDB(dataDir string, readOnly bool, stderr io.Writer) (*kv.Service, storage.Store, func(), error) {
	if readOnly {
		if err := storeExists(dataDir); err != nil {
			return nil, nil, nil, err
		}
	}
	db, err := storage.OpenStore(dataDir, storage.Options{ReadOnly: readOnly})
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, nil, nil, fmt.Errorf("data directory %s is in use by a running server; stop it first", dataDir)
		}
		return nil, nil, nil, err
	}
	svc, err := kv.New(db, kv.Config{Logger: slog.New(slog.NewTextHandler(stderr, nil)), ReadOnly: readOnly})
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return svc, db, func() { svc.Close(); db.Close() }, nil
}

// storeExists reports, as an error a user can act on, why dataDir holds no store: it
// does not exist, is not a directory, or has no LevelDB directory (with its LOCK file)
// in it.
func storeExists(dataDir string) error {
	fi, err := os.Stat(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("data directory %s does not exist (give the server's --data-dir, or set CAIRN_DATA_DIR)", dataDir)
	case err != nil:
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	case !fi.IsDir():
		return fmt.Errorf("data directory %s is not a directory", dataDir)
	}
	fi, err = os.Stat(filepath.Join(dataDir, server.LevelDBDir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("data directory %s holds no cairn store (no %s directory in it); is it the server's --data-dir?", dataDir, server.LevelDBDir)
	case err != nil:
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	case !fi.IsDir():
		return fmt.Errorf("data directory %s holds no cairn store (%s is not a directory)", dataDir, server.LevelDBDir)
	}
	// LevelDB creates its LOCK file at the first open and never removes it; a read-only
	// open would create it.
	lock := filepath.Join(dataDir, server.LevelDBDir, "LOCK")
	if _, err := os.Stat(lock); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s holds no cairn store (no %s: a server creates it when it first opens the store)", dataDir, lock)
	}
	return nil
}

// check runs `cairn check [--data-dir DIR]`: it opens a stopped server's store
// read-only (it creates and changes nothing; a directory without a store is an error) and
// verifies that every object record decodes, that object records, secondary-index
// postings, pending tombstone reaps and expiry-index entries agree, that stored bucket
// properties are in range, and that the S3 tables agree. It reports every problem it finds (one line each, then
// their count) and exits 1 if there is any, 0 when there is none.
func check(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("cairn check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "data directory (env CAIRN_DATA_DIR)")
	keyFile := flags.String("sse-master-key", envOr(getenv, "CAIRN_SSE_MASTER_KEY", ""), "SSE master key file (default <data-dir>/sse-master.key; env CAIRN_SSE_MASTER_KEY)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	svc, db, closeStore, err := openOfflineDB(*dataDir, true, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	defer closeStore()
	kvRep, err := svc.CheckStore()
	if err != nil {
		fmt.Fprintf(stderr, "cairn: check %s: %v\n", *dataDir, err)
		return 1
	}
	problems := kvRep.Count
	for _, p := range kvRep.Problems {
		fmt.Fprintf(stderr, "cairn: check %s: kv: %s\n", *dataDir, p)
	}
	if more := kvRep.Count - len(kvRep.Problems); more > 0 {
		fmt.Fprintf(stderr, "cairn: check %s: kv: (and %d more problems)\n", *dataDir, more)
	}
	fmt.Fprintf(stdout, "cairn: kv: %d objects, %d index postings, %d property records\n", kvRep.Objects, kvRep.Postings, kvRep.Props)
	var blobs storage.BlobStore // nil (not a nil *storage.Blobs) without a blob directory
	if _, err := os.Stat(filepath.Join(*dataDir, server.BlobsDir)); err == nil {
		b, err := storage.OpenBlobs(filepath.Join(*dataDir, server.BlobsDir))
		if err != nil {
			fmt.Fprintf(stderr, "cairn: %v\n", err)
			return 1
		}
		blobs = b
	}
	if _, err := os.Stat(filepath.Join(*dataDir, cluster.NATSDir)); err == nil && blobs == nil {
		// A cluster node's S3 bytes are in JetStream (the CAIRN_BLOBS stream), which
		// only a running cluster serves: the S3 tables are checked, not the bytes.
		fmt.Fprintf(stdout, "cairn: %s is a cluster node's replica: its S3 object bytes are in the cluster's JetStream and are not checked\n", *dataDir)
	}
	rep, err := s3.Check(db, blobs)
	if err != nil {
		problems += max(rep.Problems, 1) // a read failure has no count
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "cairn: check %s: %s\n", *dataDir, line)
		}
	}
	fmt.Fprintf(stdout, "cairn: s3: %d users, %d buckets, %d objects, %d chunks, %d blobs, %d chunk sets awaiting collection\n",
		rep.Users, rep.Buckets, rep.Objects, rep.Chunks, rep.Blobs, rep.Pending)
	problems += checkSSEKeys(db, *dataDir, *keyFile, stdout, stderr)
	if problems > 0 {
		fmt.Fprintf(stderr, "cairn: check %s: %d problems found\n", *dataDir, problems)
		return 1
	}
	fmt.Fprintf(stdout, "cairn: %s is consistent\n", *dataDir)
	return 0
}

// checkSSEKeys unwraps every SSE-S3 data key of db with the master key (keyFile, else
// the data directory's when it has one) and returns the number of problems. SSE-C
// objects' keys and contents cannot be checked: only their customers have the keys.
func checkSSEKeys(db storage.Store, dataDir, keyFile string, stdout, stderr io.Writer) int {
	path := server.MasterKeyPath(server.Config{DataDir: dataDir, SSEMasterKey: keyFile})
	if _, err := os.Stat(path); keyFile == "" && errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "cairn: s3: no SSE master key (%s): encrypted objects' keys are not checked\n", path)
		return 0
	}
	mk, err := sse.LoadMasterKey(path)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: check %s: %v\n", dataDir, err)
		return 1
	}
	rep, err := s3.CheckKeys(db, mk)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "cairn: check %s: %s\n", dataDir, line)
		}
		return max(rep.Problems, 1) // a read failure has no count
	}
	fmt.Fprintf(stdout, "cairn: s3: %d SSE-S3 data keys unwrap with master key %s; %d SSE-C objects and uploads (their keys and contents cannot be checked without their customers' keys)\n",
		rep.ServerKeys-rep.Problems, mk.ID(), rep.CustomerKeys)
	return rep.Problems
}
