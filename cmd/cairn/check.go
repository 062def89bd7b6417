package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cairnkv/cairn/core/kv"
	"github.com/cairnkv/cairn/core/storage"
)

// check runs `cairn check [--data-dir DIR]`: it opens a stopped server's store and
// verifies that every object record decodes and that object records, secondary-index
// postings and pending tombstone reaps agree. Exit 0 when they do, 1 otherwise.
func check(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "data directory (env CAIRN_DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	db, err := storage.Open(filepath.Join(*dataDir, "leveldb"), storage.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	defer db.Close()
	svc, err := kv.New(db, kv.Config{Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	defer svc.Close()
	if err := svc.CheckInvariants(); err != nil {
		fmt.Fprintf(stderr, "cairn: check %s: %v\n", *dataDir, err)
		return 1
	}
	fmt.Fprintf(stdout, "cairn: %s is consistent\n", *dataDir)
	return 0
}
