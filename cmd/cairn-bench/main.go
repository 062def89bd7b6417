// Command cairn-bench is the load benchmark behind `make bench`. It starts Cairn
// in-process on a loopback port, and a bare net/http server on another, and measures
// in one run, with the same load generator, how Cairn compares with the bare server
// and with itself:
//
//  1. GET of 1 KiB objects, Cairn / bare (target >= 0.7);
//  2. PUT of 1 KiB objects with dw=0, Cairn / bare (target >= 0.5), beside (with
//     --put-refs, the default) the store reference: the same net/http server writing
//     each body blindly into a core/storage DB of its own, or reading the key first
//     (ratios to bare and Cairn / store, no target);
//  3. PUT with dw=1: 64 concurrent writers / one writer (target >= 10: group commit);
//  4. GET during and right after a burst of random PUTs, / the settled GET rate before
//     it (target >= 0.3 for both);
//  5. process plugins (the plugin phase): the cost of a precommit call through a
//     plugin beside WebAssembly, PUT with a plugin precommit, and MapReduce over
//     --mr-objects objects with the plugin's streamed map / WebAssembly (target >=
//     0.25); it builds its plugins with `go build`;
//  6. with --phases ...,s3 (not a default phase: `make bench` asks for it), the
//     object-storage interface: PUT and GET of 4 KiB and 4 MiB objects, Cairn / a bare
//     net/http server writing each object to a file (ratios, no target); PUT and GET of
//     1 MiB and 64 MiB objects signed V4 with a hex payload hash from 16 connections,
//     median Cairn/bare of 3 repetitions (targets: PUT >= 0.5, GET >= 0.8); and the peak
//     RSS above idle during one streamed 1 GiB upload (target < 64 MiB).
//  7. with --phases ...,cluster (not a default phase: `make bench` asks for it), three
//     `cairn serve` processes of one cluster against one standalone process of the
//     same binary (--cairn-bin, or built with go build): GET and PUT (w=quorum)
//     throughput and latency over --cluster-keys objects (targets: GET >= 0.7, PUT >=
//     0.25 of standalone), and the extra cost of a conditional write per conflict.
//
// A benchmark reports; it never fails: the exit status is non-zero only when the
// benchmark could not run. See docs/benchmarks.md.
//
// Usage:
//
//	cairn-bench [--quick] [--duration 5s] [--loadgen auto|wrk|builtin] [--json FILE]
//	            [--cpuprofile PREFIX] [--phases get,put,sync,burst,hook,query,plugin,s3,cluster] ...
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the benchmark and returns the exit status: 0 when it ran (whatever the
// numbers), 2 for bad flags, 1 when it could not run.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "cairn-bench: %v\n", err)
		return 2
	}
	b, err := newBench(o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "cairn-bench: %v\n", err)
		return 1
	}
	err = b.run(ctx)
	if cerr := b.close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "cairn-bench: %v\n", err)
		return 1
	}
	return 0
}
