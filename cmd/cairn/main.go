// Command cairn is the Cairn server and its command-line tools.
//
//	cairn [serve] [flags]   run the server (the default command)
//	cairn bucket-type ...   create or show bucket types (on a stopped server's data dir)
//	cairn check             verify a stopped server's store
//	cairn module ...        manage a running server's WebAssembly modules
//	cairn version           print the version (also --version)
//	cairn help              list the commands (also -h, --help)
//
// Settings come from the embedded defaults, then an optional JSON config file
// (--config or CAIRN_CONFIG), then CAIRN_* environment variables, then flags.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd, args := commandOf(args)
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "bucket-type":
		return bucketType(ctx, args, getenv, stdout, stderr)
	case "check":
		return check(args, getenv, stdout, stderr)
	case "module":
		return moduleCmd(ctx, args, getenv, stdout, stderr)
	case "user":
		return userCmd(ctx, args, getenv, stdout, stderr)
	case "hook":
		return hookCmd(ctx, args, stdout, stderr)
	case "cluster":
		return clusterCmd(ctx, args, getenv, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "cairn %s\n", version())
		return 0
	case "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "cairn: unknown command %q\n\n", cmd)
		usage(stderr)
		return 2
	}
}

// commandOf splits the command name off args. No name runs serve with args as its
// flags, except the global flags -h/--help (help) and --version (version), which a new
// user tries first and which serve's flags do not know.
func commandOf(args []string) (cmd string, rest []string) {
	if len(args) == 0 {
		return "serve", args
	}
	switch a := args[0]; {
	case a == "-h" || a == "-help" || a == "--help":
		return "help", args[1:]
	case a == "-version" || a == "--version":
		return "version", args[1:]
	case a != "" && a[0] != '-':
		return a, args[1:]
	}
	return "serve", args
}

// usage lists the commands.
func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  cairn [serve] [flags]   run the server (default); "cairn serve -h" lists the flags
  cairn bucket-type create NAME [PROPS-JSON] [--data-dir DIR]
                          create a bucket type (server stopped)
  cairn bucket-type show NAME [--data-dir DIR]
  cairn check [--data-dir DIR]
                          verify a stopped server's store (objects, index postings, reaps, S3 chunks)
  cairn module put NAME FILE.wasm | list | get NAME [-o FILE] | rm NAME [--url URL]
                          manage a running server's WebAssembly modules (admin key)
  cairn user create --name N --email E | list [--status S] | disable|enable|rotate KEYID [--url URL]
                          manage the object-storage interface's users (admin key)
  cairn cluster status [--url URL] [--digest] [--json]
                          a cluster node's view: servers, streams, leaders, apply lag
  cairn cluster members | retire NODE [--wait S] | forget NODE [--url URL]
                          list the cluster's servers, move a server's replicas away, remove it (admin key)
  cairn hook call FILE.wasm FUNCTION [--point P] < INPUT.json   run a WebAssembly hook locally
  cairn version           print the version (also: cairn --version)
  cairn help              print this list (also: cairn -h, cairn --help)
`)
}
