package gopluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// benchObject is a typical small object (the one the WASM host's benchmarks use).
func benchObject(key string) *core.Object {
	return &core.Object{Type: "default", Bucket: "users", Key: key, VClock: []byte("a85hYGBgzGDKBVIcypz/fgaUHjmdwZTImMfKwNR1/gxfFgA="),
		Siblings: []core.Sibling{{
			Value: []byte(`{"name":"alice","email":"alice@example.com"}`), ContentType: "application/json",
			Meta:    []core.MetaEntry{{Name: "Owner", Value: "bob"}},
			Indexes: []core.IndexEntry{{Field: "email_bin", Value: "alice@example.com"}},
		}}}
}

// benchHost starts the test plugin with long deadlines: a busy machine must not fail
// the run.
func benchHost(b *testing.B) *Host {
	cfg := testConfig(nil, tp(b, "tp"))
	cfg.Timeouts = map[hooks.Point]time.Duration{hooks.PointPrecommit: time.Minute, hooks.PointMap: time.Minute}
	return newHost(b, cfg)
}

// BenchmarkPrecommit is one precommit call whose plugin accepts at once: converting
// the object, the gRPC round trip to the plugin process and back, under a deadline.
func BenchmarkPrecommit(b *testing.B) {
	h := benchHost(b)
	pc := lookup[hooks.Precommit](b, h, "tp", "accept", hooks.PointPrecommit)
	obj := benchObject("alice")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil || v.Reject || v.Replace != nil {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkPrecommitParallel is the same call from 64 goroutines at once (as the WASM
// host's benchmark): gRPC multiplexes them over the plugin's one connection.
func BenchmarkPrecommitParallel(b *testing.B) {
	h := benchHost(b)
	pc := lookup[hooks.Precommit](b, h, "tp", "accept", hooks.PointPrecommit)
	obj := benchObject("alice")
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := pc.Precommit(ctx, hooks.OpPut, obj); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuTime returns the CPU time (user and system) process pid has used, in
// nanoseconds, from /proc; -1 where there is no /proc.
func cpuTime(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	// pid (comm) state ppid ... utime (14th field) stime (15th): count after the ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return (utime + stime) * int64(time.Second) / ticksPerSecond
}

// BenchmarkMapStream maps b.N inputs (small objects; the plugin answers each with its
// key as a JSON string) over one map stream, sending on one goroutine and receiving
// on another as a MapReduce phase does. It reports inputs per second.
func BenchmarkMapStream(b *testing.B) {
	for _, k := range []int{1, 2, 4} {
		b.Run("streams="+string(rune('0'+k)), func(b *testing.B) {
			cfg := testConfig(nil, tp(b, "tp"))
			cfg.MapStreams = k
			cfg.Timeouts = map[hooks.Point]time.Duration{hooks.PointMap: time.Minute}
			h := newHost(b, cfg)
			objs := make([]*core.Object, 1024)
			for i := range objs {
				objs[i] = benchObject(streamKey(i))
			}
			ms, err := lookup[hooks.MapStreamer](b, h, "tp", "echo", hooks.PointMap).OpenMapStream(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer ms.Close()
			pid := statsOf(b, h, "tp").PID
			hostCPU0, pluginCPU0 := cpuTime(os.Getpid()), cpuTime(pid)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			sent := make(chan error, 1)
			go func() {
				for i := range b.N {
					if err := ms.Send(hooks.MapInput{Object: objs[i%len(objs)]}); err != nil {
						sent <- err
						return
					}
				}
				sent <- ms.CloseSend()
			}()
			for n := 0; ; n++ {
				vals, err := ms.Recv()
				if errors.Is(err, io.EOF) {
					if n != b.N {
						b.Fatalf("%d outputs for %d inputs", n, b.N)
					}
					break
				}
				if err != nil || len(vals) != 1 {
					b.Fatal(vals, err)
				}
			}
			if err := <-sent; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "inputs/s")
			if hostCPU0 >= 0 && pluginCPU0 >= 0 {
				// CPU time per input in each process: what bounds the rate on an idle
				// machine, whatever else runs on this one.
				b.ReportMetric(float64(cpuTime(os.Getpid())-hostCPU0)/float64(b.N)/1e3, "host-µs/input")
				b.ReportMetric(float64(cpuTime(pid)-pluginCPU0)/float64(b.N)/1e3, "plugin-µs/input")
			}
		})
	}
}
