package s3

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

// TestCheckCountsEveryProblem: Check lists its first maxCheckErrors problems and counts
// them all, so `cairn check` can say how damaged a store is (issue 15).
func TestCheckCountsEveryProblem(t *testing.T) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const leaks = maxCheckErrors + 5
	for i := range leaks {
		id := bytes.Repeat([]byte{byte(i)}, 16)
		if err := db.Put(chunkKey(id, 0), []byte("x"), false); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Check(db, nil)
	if err == nil || rep.Problems != leaks || rep.Chunks != leaks {
		t.Fatalf("%d problems, %d chunks: %v", rep.Problems, rep.Chunks, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxCheckErrors+1 || lines[len(lines)-1] != "s3: (and 5 more problems)" || strings.Count(err.Error(), "leaked") != maxCheckErrors {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
