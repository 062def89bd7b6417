package server

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/cairnkv/cairn/core/storage"
)

// PrepareDataDir readies the data directory before a server starts on it: it creates
// it (0700, with any missing parent) if it does not exist, warns when other users may
// read, write or enter it (what Cairn creates in it is private anyway, but the
// operator should know), and takes group and other permissions away from what older
// builds created in it (storage.MakeTreePrivate). It fails only when the directory
// cannot be created or examined.
func PrepareDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("server: data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("server: data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("server: data directory %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		log.Warn("the data directory is open to other users: make it private with chmod 700 "+
			"(the files Cairn creates in it are private already)", "dir", dir, "mode", fmt.Sprintf("%#o", perm))
	}
	n, err := storage.MakeTreePrivate(dir)
	if n > 0 {
		log.Info("made private the files and directories an older build left open to other users", "dir", dir, "changed", n)
	}
	if err != nil {
		log.Warn("could not make everything in the data directory private", "dir", dir, "err", err)
	}
	return nil
}
