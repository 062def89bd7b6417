package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// options are the command-line settings.
type options struct {
	Duration     time.Duration
	Warmup       time.Duration
	After        time.Duration
	Quick        bool
	Conns        int
	BurstWriters int
	Keys         int
	Burst        int
	ValueSize    int
	Loadgen      string
	WrkThreads   int
	DataDir      string
	KeepData     bool
	JSONPath     string
	CPUProfile   string
	// CacheSize is the server's LevelDB block cache in bytes (0: the server default).
	CacheSize int
	// ObjectCacheSize is the server's object cache in bytes (0: default, negative: none).
	ObjectCacheSize int64
	Phases          map[string]bool
	// SimFsync, if positive, adds a run of the sync phase on a disk whose fsync takes
	// that long (simulated in the storage layer).
	SimFsync time.Duration
	// HookModule and HookFunction are the hook phase's precommit with a target;
	// HookModuleHeavy is the Rust JSON-schema validator, measured for information.
	HookModule, HookFunction, HookModuleHeavy string
	// MRObjects is the number of objects of the plugin phase's MapReduce jobs; MRModule
	// the WebAssembly twin of the wordcount plugin.
	MRObjects int
	MRModule  string
	// MRFixture is the WebAssembly module whose map "values" does no work.
	MRFixture string
	SettleMax time.Duration
	// QueryKeys is the size of the query phase's bucket (listing and 2i).
	QueryKeys int
	Slices    int
	// PutRefs adds the store reference's two sides to the put phase.
	PutRefs bool
	// S3Duration is the measured time of each of the s3 phase's compared pairs.
	S3Duration time.Duration
	// S3Small and S3Large are the s3 phase's object sizes, each measured with its own
	// number of connections; S3Big is the size of its one streamed upload.
	S3Small, S3Large, S3Big byteSize
	// S3Multipart is the size of the s3 phase's multipart upload (0: none), in parts of
	// S3PartSize sent S3PartConns at a time.
	S3Multipart, S3PartSize    byteSize
	S3PartConns                int
	S3SmallConns, S3LargeConns int
	// S3V4Sizes are the object sizes of the s3 phase's signature V4 comparison, sent
	// from S3V4Conns connections, S3V4Work bytes per side and repetition, S3V4Reps times.
	S3V4Sizes sizeList
	S3V4Conns int
	S3V4Work  byteSize
	S3V4Reps  int
	// S3Versions is how many versions the s3 phase lists through GET ?versions (0: no
	// listing).
	S3Versions int
	// CairnBin is the cairn binary the cluster phase runs as processes ("": built with
	// go build into the temporary directory).
	CairnBin string
	// ClusterKeys is the number of objects the cluster phase writes before its GETs,
	// ClusterPartitions the nodes' --cluster-partitions.
	ClusterKeys       int
	ClusterPartitions int
}

var errHelp = errors.New("help requested")

var allPhases = []string{"get", "put", "sync", "burst", "hook", "query", "plugin", "s3", "cluster"}

// defaultPhases run when --phases is not given: all but s3 and cluster, which `make
// bench` asks for.
var defaultPhases = allPhases[:len(allPhases)-2]

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("cairn-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.Duration, "duration", 5*time.Second, "measured time of each phase")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured warm-up before each phase")
	fs.DurationVar(&o.After, "after", 3*time.Second, "the \"right after the burst\" window")
	fs.BoolVar(&o.Quick, "quick", false, "smoke test: 1 s phases, 10k keys, 20k-PUT burst (ratios are rough)")
	fs.IntVar(&o.Conns, "conns", 64, "connections of the measured load")
	fs.IntVar(&o.BurstWriters, "burst-writers", 16, "connections sending the PUT burst (besides the readers)")
	fs.IntVar(&o.Keys, "keys", 200000, "objects written before the phases; GETs read random ones of them")
	fs.IntVar(&o.Burst, "burst", 200000, "PUTs (random new keys, dw=0) in the burst phase")
	fs.IntVar(&o.ValueSize, "value-size", 1024, "object size in bytes (also the bare GET's body)")
	fs.StringVar(&o.Loadgen, "loadgen", "auto", "load generator: auto (wrk when installed), wrk or builtin")
	fs.IntVar(&o.WrkThreads, "wrk-threads", runtime.NumCPU(), "wrk -t (capped at the connection count)")
	fs.StringVar(&o.DataDir, "data-dir", "", "Cairn's data directory (default: a new temporary one, removed at the end)")
	fs.BoolVar(&o.KeepData, "keep-data", false, "keep the temporary data directory")
	fs.StringVar(&o.JSONPath, "json", "", "also write the JSON result line to this file")
	fs.IntVar(&o.CacheSize, "cache-size", 0, "Cairn's LevelDB block cache in bytes (0: the server's default)")
	fs.Int64Var(&o.ObjectCacheSize, "object-cache-size", 0, "Cairn's object cache in bytes (0: the server's default, negative: none)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of each measured phase to PREFIX.PHASE.pprof")
	phases := fs.String("phases", strings.Join(defaultPhases, ","), "phases to run, a comma-separated subset of "+strings.Join(allPhases, ","))
	fs.DurationVar(&o.SimFsync, "sim-fsync", 2*time.Millisecond, "also run the sync phase on a simulated disk whose fsync takes this long (0: skip)")
	fs.StringVar(&o.HookModule, "hook-module", "wasm-examples/c/malicious/malicious.wasm", "WebAssembly module of the hook phase's precommit with the 0.85 target")
	fs.StringVar(&o.HookFunction, "hook-function", "ok", "that precommit's function")
	fs.StringVar(&o.HookModuleHeavy, "hook-module-heavy", "wasm-examples/rust/json-schema-precommit/json-schema-precommit.wasm", "a precommit doing real work, measured without a target (function validate; values are JSON documents its schema accepts; empty: skip)")
	fs.IntVar(&o.MRObjects, "mr-objects", 100000, "objects the plugin phase's MapReduce jobs read")
	fs.StringVar(&o.MRFixture, "mr-fixture", "plugins/wasmhost/testdata/hooks.wasm", "WebAssembly module whose map \"values\" does no work (the plugin phase's target comparison)")
	fs.StringVar(&o.MRModule, "mr-module", "wasm-examples/go/wordcount-map/wordcount-map.wasm", "WebAssembly twin of the wordcount plugin (functions wordcount and sum_counts)")
	fs.IntVar(&o.QueryKeys, "query-keys", 1_000_000, "objects (each with one _int and one _bin index entry) listed and queried in the query phase")
	fs.BoolVar(&o.PutRefs, "put-refs", true, "also measure the put phase's store reference: net/http over a storage DB of its own, blind writes and a read before each write")
	fs.IntVar(&o.Slices, "slices", 5, "measure each compared pair in this many alternating slices (1: one after the other)")
	o.S3Small, o.S3Large, o.S3Big = 4<<10, 4<<20, 1<<30
	o.S3Multipart, o.S3PartSize = 5<<30, 16<<20
	fs.Var(&o.S3Multipart, "s3-multipart", "size of the s3 phase's multipart upload whose RSS is measured (0: none)")
	fs.Var(&o.S3PartSize, "s3-part-size", "part size of the s3 phase's multipart upload")
	fs.IntVar(&o.S3PartConns, "s3-part-conns", 4, "parts of the s3 phase's multipart upload sent at once")
	fs.DurationVar(&o.S3Duration, "s3-duration", 3*time.Second, "measured time of each of the s3 phase's compared pairs")
	fs.Var(&o.S3Small, "s3-small", "the s3 phase's small object size")
	fs.IntVar(&o.S3SmallConns, "s3-small-conns", 16, "connections of the s3 phase's small-object load")
	fs.Var(&o.S3Large, "s3-large", "the s3 phase's large object size")
	fs.IntVar(&o.S3LargeConns, "s3-large-conns", 4, "connections of the s3 phase's large-object load")
	fs.Var(&o.S3Big, "s3-big", "size of the s3 phase's one streamed upload whose RSS is measured")
	o.S3V4Sizes, o.S3V4Work = sizeList{1 << 20, 64 << 20}, 1<<30
	fs.Var(&o.S3V4Sizes, "s3-v4-sizes", "object sizes of the s3 phase's signature V4 comparison (comma-separated; empty: none)")
	fs.IntVar(&o.S3V4Conns, "s3-v4-conns", 16, "connections of the s3 phase's signature V4 comparison")
	fs.Var(&o.S3V4Work, "s3-v4-work", "bytes each server receives per repetition of a V4 PUT case, 4 times as much for GETs (at least one object per connection)")
	fs.IntVar(&o.S3V4Reps, "s3-v4-reps", 3, "repetitions of each V4 case (the median ratio is quoted)")
	fs.IntVar(&o.S3Versions, "s3-versions", 1_000_000, "versions (10 per key) the s3 phase writes in-process and lists through GET ?versions (0: no listing)")
	fs.StringVar(&o.CairnBin, "cairn-bin", "", "cairn binary the cluster phase runs (default: built with go build)")
	fs.IntVar(&o.ClusterKeys, "cluster-keys", 20000, "objects the cluster phase writes to the cluster and to its standalone node before the GETs")
	fs.IntVar(&o.ClusterPartitions, "cluster-partitions", 64, "the cluster phase's --cluster-partitions")
	fs.DurationVar(&o.SettleMax, "settle-max", 60*time.Second, "longest wait for LevelDB compactions to finish before a phase")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, errHelp
		}
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.Quick {
		quick := map[string]func(){
			"duration":     func() { o.Duration = time.Second },
			"warmup":       func() { o.Warmup = 500 * time.Millisecond },
			"after":        func() { o.After = time.Second },
			"keys":         func() { o.Keys = 10000 },
			"burst":        func() { o.Burst = 20000 },
			"slices":       func() { o.Slices = 1 },
			"query-keys":   func() { o.QueryKeys = 20000 },
			"mr-objects":   func() { o.MRObjects = 10000 },
			"s3-duration":  func() { o.S3Duration = time.Second },
			"s3-big":       func() { o.S3Big = 256 << 20 },
			"s3-multipart": func() { o.S3Multipart = 512 << 20 },
			"s3-v4-sizes":  func() { o.S3V4Sizes = sizeList{1 << 20, 8 << 20} },
			"s3-v4-work":   func() { o.S3V4Work = 128 << 20 },
			"s3-versions":  func() { o.S3Versions = 50000 },
			"cluster-keys": func() { o.ClusterKeys = 2000 },
		}
		for name, apply := range quick {
			if !set[name] {
				apply()
			}
		}
	}
	o.Phases = map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		known := false
		for _, a := range allPhases {
			known = known || a == p
		}
		if !known {
			return o, fmt.Errorf("unknown phase %q (known: %s)", p, strings.Join(allPhases, ","))
		}
		o.Phases[p] = true
	}
	switch {
	case o.Duration <= 0:
		return o, errors.New("--duration must be positive")
	case o.Warmup < 0 || o.After <= 0:
		return o, errors.New("--warmup must not be negative and --after must be positive")
	case o.Conns < 1 || o.BurstWriters < 1:
		return o, errors.New("--conns and --burst-writers must be at least 1")
	case o.Keys < 1 || o.Burst < 1:
		return o, errors.New("--keys and --burst must be at least 1")
	case o.Keys > 99999999:
		return o, errors.New("--keys must be below 100000000 (keys have 8 digits)")
	case o.ValueSize < 1:
		return o, errors.New("--value-size must be at least 1")
	case o.Loadgen != "auto" && o.Loadgen != "wrk" && o.Loadgen != "builtin":
		return o, fmt.Errorf("--loadgen must be auto, wrk or builtin, not %q", o.Loadgen)
	case o.Slices < 1:
		return o, errors.New("--slices must be at least 1")
	case o.WrkThreads < 1:
		return o, errors.New("--wrk-threads must be at least 1")
	case o.S3Duration <= 0 || o.S3SmallConns < 1 || o.S3LargeConns < 1:
		return o, errors.New("--s3-duration must be positive, --s3-small-conns and --s3-large-conns at least 1")
	case o.S3Multipart < 0 || o.S3PartSize < 5<<20 || o.S3PartConns < 1:
		return o, errors.New("--s3-multipart must not be negative, --s3-part-size at least 5MiB, --s3-part-conns at least 1")
	case o.S3Small < 1 || o.S3Large < 1 || o.S3Big < 1 || o.S3Small > 1<<30 || o.S3Large > 1<<30:
		return o, errors.New("--s3-small, --s3-large and --s3-big must be at least 1 byte (the first two at most 1GiB)")
	case o.S3V4Conns < 1 || o.S3V4Conns > 256 || o.S3V4Reps < 1 || o.S3V4Reps > 99 || o.S3V4Work < 1:
		return o, errors.New("--s3-v4-conns must be 1-256, --s3-v4-reps 1-99 and --s3-v4-work at least 1 byte")
	case o.ClusterKeys < 1 || o.ClusterKeys > 99999999:
		return o, errors.New("--cluster-keys must be between 1 and 99999999 (keys have 8 digits)")
	case o.ClusterPartitions < 1 || o.ClusterPartitions&(o.ClusterPartitions-1) != 0 || o.ClusterPartitions > 1024:
		return o, errors.New("--cluster-partitions must be a power of two, at most 1024")
	case slices.ContainsFunc(o.S3V4Sizes, func(n int64) bool { return n < 1 || n > 1<<30 }):
		return o, errors.New("--s3-v4-sizes must be between 1 byte and 1GiB")
	}
	return o, nil
}
