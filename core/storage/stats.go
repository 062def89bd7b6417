package storage

import "github.com/syndtr/goleveldb/leveldb"

// Stats returns a snapshot of engine counters for /stats and metrics. Keys:
//
//	level_sizes        []int64  bytes per level (index = level)
//	level_tables       []int    table files per level
//	level0_tables      int      level-0 table count (writes slow down and pause as it grows)
//	total_size         int64    bytes in all tables
//	alive_snapshots    int      unreleased snapshots
//	alive_iterators    int      unreleased iterators
//	write_delay_count  int      writes delayed by compaction back-pressure since open
//	write_delay_ms     int64    total delay of those writes, milliseconds
//	write_paused       bool     writes are paused right now waiting for compaction
//	open_tables        int      table files held open by the cache
//	block_cache_bytes  int      bytes held by the block cache
//	io_read_bytes      uint64   bytes read from table files since open
//	io_write_bytes     uint64   bytes written to table files since open
//	compactions        map[string]uint32  memtable, level0, nonlevel0 and seek compaction counts
//	leveldb_stats      string   goleveldb's own "leveldb.stats" table
//	writes_suspended   bool     writes are refused after a failed write (a full disk)
//	write_recoveries   int64    times writes resumed on their own since open
//	key_filter_ready   bool     reads of absent keys are answered by the key filter
//	key_filter_bytes   int64    memory of that filter (0 while it is not ready)
//	key_filter_absent  int64    reads it answered without searching LevelDB since open
//	                            (the committer's reads for conditions included)
//
// On a closed DB it returns a map holding only "error".
func (db *DB) Stats() map[string]any {
	db.mu.RLock()
	defer db.mu.RUnlock()
	g, err := db.readableLocked("stats")
	if err != nil {
		return map[string]any{"error": err.Error(), "writes_suspended": db.fail.Load() != nil}
	}
	var s leveldb.DBStats
	if err := g.ldb.Stats(&s); err != nil {
		return map[string]any{"error": wrap("stats", err).Error()}
	}
	var total int64
	for _, n := range s.LevelSizes {
		total += n
	}
	l0 := 0
	if len(s.LevelTablesCounts) > 0 {
		l0 = s.LevelTablesCounts[0]
	}
	m := map[string]any{
		"level_sizes":       []int64(s.LevelSizes),
		"level_tables":      s.LevelTablesCounts,
		"level0_tables":     l0,
		"total_size":        total,
		"alive_snapshots":   int(s.AliveSnapshots),
		"alive_iterators":   int(s.AliveIterators),
		"write_delay_count": int(s.WriteDelayCount),
		"write_delay_ms":    s.WriteDelayDuration.Milliseconds(),
		"write_paused":      s.WritePaused,
		"open_tables":       s.OpenedTablesCount,
		"block_cache_bytes": s.BlockCacheSize,
		"io_read_bytes":     s.IORead,
		"io_write_bytes":    s.IOWrite,
		"compactions": map[string]uint32{
			"memtable":  s.MemComp,
			"level0":    s.Level0Comp,
			"nonlevel0": s.NonLevel0Comp,
			"seek":      s.SeekComp,
		},
		"writes_suspended":  db.fail.Load() != nil,
		"write_recoveries":  db.recoveries.Load(),
		"key_filter_absent": db.keys.hits.Load(),
	}
	f := db.keys.serving.Load()
	ready := f != nil && !f.full.Load()
	m["key_filter_ready"] = ready
	m["key_filter_bytes"] = int64(0)
	if ready {
		m["key_filter_bytes"] = f.size()
	}
	if p, err := g.ldb.GetProperty("leveldb.stats"); err == nil {
		m["leveldb_stats"] = p
	}
	return m
}
