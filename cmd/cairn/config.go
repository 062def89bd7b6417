package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/server"
)

// errHelp means the user asked for the flag list, which has been printed.
var errHelp = errors.New("help requested")

// option binds one setting to its flag, its CAIRN_* variable and its config-file key
// (the flag name).
type option struct {
	name  string
	usage string
	get   func(c *server.Config) string
	set   func(c *server.Config, v string) error
}

func strOpt(name, usage string, p func(c *server.Config) *string) option {
	return option{name, usage,
		func(c *server.Config) string { return *p(c) },
		func(c *server.Config, v string) error { *p(c) = v; return nil }}
}

func options() []option {
	return []option{
		strOpt("kv-listen", "address of the key-value HTTP interface", func(c *server.Config) *string { return &c.KVListen }),
		strOpt("s3-listen", "address of the object-storage (S3) interface; empty: not served", func(c *server.Config) *string { return &c.S3Listen }),
		strOpt("s3-data-host", "host name whose sub-domains name buckets ({bucket}.{host}); other hosts are path style", func(c *server.Config) *string { return &c.S3DataHost }),
		strOpt("s3-region", "region reported by buckets (?location)", func(c *server.Config) *string { return &c.S3Region }),
		{"s3-upload-ttl", "how long a multipart upload may stay incomplete before it is aborted",
			func(c *server.Config) string { return c.S3UploadTTL.String() },
			func(c *server.Config, v string) (err error) { c.S3UploadTTL, err = time.ParseDuration(v); return }},
		{"lifecycle-interval", "how often the S3 lifecycle worker applies the buckets' lifecycle rules",
			func(c *server.Config) string { return c.LifecycleInterval.String() },
			func(c *server.Config, v string) (err error) { c.LifecycleInterval, err = time.ParseDuration(v); return }},
		{"lifecycle-day", "length of a lifecycle rule's day (for tests: rules of days run in seconds)",
			func(c *server.Config) string { return c.LifecycleDay.String() },
			func(c *server.Config, v string) (err error) { c.LifecycleDay, err = time.ParseDuration(v); return }},
		{"s3-max-object-size", "largest object stored through the S3 interface, in bytes",
			func(c *server.Config) string { return strconv.FormatInt(c.S3MaxObjectSize, 10) },
			func(c *server.Config, v string) (err error) { c.S3MaxObjectSize, err = parseSize(v); return }},
		strOpt("data-dir", "directory of the store", func(c *server.Config) *string { return &c.DataDir }),
		strOpt("sse-master-key", "file of the master key of SSE-S3 objects (must exist; default: <data-dir>/sse-master.key, created at first start)", func(c *server.Config) *string { return &c.SSEMasterKey }),
		strOpt("dialect", "names the server writes: store (X-Store-*, /store) or riak (X-Riak-*, /riak)", func(c *server.Config) *string { return &c.Dialect }),
		strOpt("log-level", "debug, info, warn or error", func(c *server.Config) *string { return &c.LogLevel }),
		strOpt("log-format", "text or json", func(c *server.Config) *string { return &c.LogFormat }),
		strOpt("node-name", "node name shown in /stats; in a cluster unique per node (default there: cairn@ and --cluster-listen)", func(c *server.Config) *string { return &c.NodeName }),
		strOpt("cluster-name", "cluster mode: the cluster's name (empty: standalone, no NATS inside)", func(c *server.Config) *string { return &c.ClusterName }),
		strOpt("cluster-listen", "cluster mode: host:port of the embedded NATS routes", func(c *server.Config) *string { return &c.ClusterListen }),
		strOpt("cluster-peers", "cluster mode: the nodes' route addresses, host:port,... (this node's may be among them)", func(c *server.Config) *string { return &c.ClusterPeers }),
		strOpt("nats-url", "cluster mode: URL[,URL] of an existing NATS (JetStream on) instead of the embedded server", func(c *server.Config) *string { return &c.NATSURL }),
		{"cluster-partitions", "cluster mode: number of object partitions, a power of two; the same on every node",
			func(c *server.Config) string { return strconv.Itoa(c.ClusterPartitions) },
			func(c *server.Config, v string) (err error) { c.ClusterPartitions, err = strconv.Atoi(v); return }},
		{"wasm-memory-pages", "memory cap of each WebAssembly instance in 64 KiB pages (0: 256 = 16 MiB)",
			func(c *server.Config) string { return strconv.Itoa(c.WASMMemoryPages) },
			func(c *server.Config, v string) (err error) { c.WASMMemoryPages, err = strconv.Atoi(v); return }},
		strOpt("modules-dir", "directory of *.wasm modules registered at start under their file names", func(c *server.Config) *string { return &c.ModulesDir }),
		strOpt("plugins-dir", "directory of process plugins started at boot (each executable NAME must be listed in its SHA256SUMS)", func(c *server.Config) *string { return &c.PluginsDir }),
		strOpt("admin-key-id", "admin credential key id (default: from <data-dir>/admin-credentials.json, created at first start)", func(c *server.Config) *string { return &c.AdminKeyID }),
		strOpt("admin-key-secret", "admin credential secret (set together with --admin-key-id)", func(c *server.Config) *string { return &c.AdminKeySecret }),
		{"max-object-size", "largest value stored, in bytes",
			func(c *server.Config) string { return strconv.FormatInt(c.MaxObjectSize, 10) },
			func(c *server.Config, v string) (err error) { c.MaxObjectSize, err = parseSize(v); return }},
		{"cache-size", "LevelDB block cache in bytes (0: default)",
			func(c *server.Config) string { return strconv.Itoa(c.CacheSize) },
			func(c *server.Config, v string) error { n, err := parseSize(v); c.CacheSize = int(n); return err }},
		{"object-cache-size", "in-memory cache of object records in bytes (0: automatic, 1/16 of memory within 64 MiB..4 GiB; negative: none)",
			func(c *server.Config) string { return strconv.FormatInt(c.ObjectCacheSize, 10) },
			func(c *server.Config, v string) error {
				if strings.HasPrefix(v, "-") {
					n, err := strconv.ParseInt(v, 10, 64)
					c.ObjectCacheSize = n
					return err
				}
				n, err := parseSize(v)
				c.ObjectCacheSize = n
				return err
			}},
		{"delete-reap-delay", "how long tombstones stay visible after a delete",
			func(c *server.Config) string { return c.DeleteReapDelay.String() },
			func(c *server.Config, v string) (err error) { c.DeleteReapDelay, err = time.ParseDuration(v); return }},
		{"shutdown-timeout", "how long a graceful shutdown waits for in-flight requests",
			func(c *server.Config) string { return c.ShutdownTimeout.String() },
			func(c *server.Config, v string) (err error) { c.ShutdownTimeout, err = time.ParseDuration(v); return }},
		strOpt("js-source-dir", "directory of *.js files whose functions every JavaScript VM loads (named in phases and precommit hooks)",
			func(c *server.Config) *string { return &c.JSSourceDir }),
		{"js-memory-mb", "memory cap of each JavaScript VM, in MiB (0: 32)",
			func(c *server.Config) string { return strconv.Itoa(c.JSMemoryMB) },
			func(c *server.Config, v string) (err error) { c.JSMemoryMB, err = strconv.Atoi(v); return }},
		{"js-timeout", "time limit of one JavaScript map or reduce call (0: 5s)",
			func(c *server.Config) string { return c.JSTimeout.String() },
			func(c *server.Config, v string) (err error) { c.JSTimeout, err = time.ParseDuration(v); return }},
		{"js-hook-timeout", "time limit of one JavaScript precommit hook call (0: 100ms)",
			func(c *server.Config) string { return c.JSHookTimeout.String() },
			func(c *server.Config, v string) (err error) { c.JSHookTimeout, err = time.ParseDuration(v); return }},
		{"mapreduce-max-jobs", "MapReduce jobs that run at once; more wait for a slot (0: 16)",
			func(c *server.Config) string { return strconv.Itoa(c.MapReduceMaxJobs) },
			func(c *server.Config, v string) (err error) { c.MapReduceMaxJobs, err = strconv.Atoi(v); return }},
		{"mapreduce-max-result-size", "largest non-chunked MapReduce result and reduce-phase state (0: 32MiB)",
			func(c *server.Config) string { return strconv.FormatInt(c.MapReduceMaxResultSize, 10) },
			func(c *server.Config, v string) (err error) { c.MapReduceMaxResultSize, err = parseSize(v); return }},
		{"mapreduce-max-job-size", "largest MapReduce job body (0: 16MiB)",
			func(c *server.Config) string { return strconv.FormatInt(c.MapReduceMaxJobSize, 10) },
			func(c *server.Config, v string) (err error) { c.MapReduceMaxJobSize, err = parseSize(v); return }},
		{"max-object-meta-entries", "most user metadata entries (X-Riak-Meta-*) of one KV value (400 above)",
			func(c *server.Config) string { return strconv.Itoa(c.MaxObjectMetaEntries) },
			func(c *server.Config, v string) (err error) { c.MaxObjectMetaEntries, err = strconv.Atoi(v); return }},
		{"max-object-header-bytes", "most bytes of content type, user metadata, index entries and links of one KV value (400 above)",
			func(c *server.Config) string { return strconv.FormatInt(c.MaxObjectHeaderBytes, 10) },
			func(c *server.Config, v string) (err error) { c.MaxObjectHeaderBytes, err = parseSize(v); return }},

		{"header-timeout", "time limit to receive a request's headers (and a TLS handshake)",
			func(c *server.Config) string { return c.HeaderTimeout.String() },
			func(c *server.Config, v string) (err error) { c.HeaderTimeout, err = time.ParseDuration(v); return }},
		{"body-read-timeout", "longest a request body may keep the server waiting for its next bytes, and the grace before --body-min-rate applies (0: no limit)",
			func(c *server.Config) string { return c.BodyReadTimeout.String() },
			func(c *server.Config, v string) (err error) { c.BodyReadTimeout, err = time.ParseDuration(v); return }},
		{"body-min-rate", "slowest average rate of a request body after the grace, in bytes per second (0: no minimum)",
			func(c *server.Config) string { return strconv.FormatInt(c.BodyMinRate, 10) },
			func(c *server.Config, v string) (err error) { c.BodyMinRate, err = parseSize(v); return }},
		{"max-body-memory", "memory for KV request bodies held at once, in bytes; more is answered 503 (0: 256MiB, or twice --max-object-size if more)",
			func(c *server.Config) string { return strconv.FormatInt(c.MaxBodyMemory, 10) },
			func(c *server.Config, v string) (err error) { c.MaxBodyMemory, err = parseSize(v); return }},
		{"max-connections", "connections each listener keeps open; over it a new one displaces the longest idle or half-sent one, else gets 503 (lowered to fit ulimit -n)",
			func(c *server.Config) string { return strconv.Itoa(c.MaxConnections) },
			func(c *server.Config, v string) (err error) { c.MaxConnections, err = strconv.Atoi(v); return }},
		{"max-connections-per-ip", "connections each listener keeps open from one client address (0: no limit)",
			func(c *server.Config) string { return strconv.Itoa(c.MaxConnectionsPerIP) },
			func(c *server.Config, v string) (err error) { c.MaxConnectionsPerIP, err = strconv.Atoi(v); return }},
		strOpt("kv-tls-cert", "PEM certificate (chain) of the key-value interface: it then serves HTTPS only; reloaded on SIGHUP", func(c *server.Config) *string { return &c.KVTLSCert }),
		strOpt("kv-tls-key", "PEM private key of --kv-tls-cert", func(c *server.Config) *string { return &c.KVTLSKey }),
		strOpt("s3-tls-cert", "PEM certificate (chain) of the object-storage interface: it then serves HTTPS only; reloaded on SIGHUP", func(c *server.Config) *string { return &c.S3TLSCert }),
		strOpt("s3-tls-key", "PEM private key of --s3-tls-cert", func(c *server.Config) *string { return &c.S3TLSKey }),

		{"mapreduce-max-jobs-per-client", "MapReduce jobs one client (IP, IPv6 /64 or user) runs at once; more wait within their timeout, then 503 (0: 4)",
			func(c *server.Config) string { return strconv.Itoa(c.MapReduceMaxJobsPerClient) },
			func(c *server.Config, v string) (err error) {
				c.MapReduceMaxJobsPerClient, err = strconv.Atoi(v)
				return
			}},
		{"js-max-vms-per-client", "JavaScript VMs of each pool (MapReduce, precommit) one client uses at once (0: half of each pool, at least 1)",
			func(c *server.Config) string { return strconv.Itoa(c.JSMaxVMsPerClient) },
			func(c *server.Config, v string) (err error) { c.JSMaxVMsPerClient, err = strconv.Atoi(v); return }},

		boolOpt("kv-auth", "KV access control: requests need a user's HTTP Basic credentials (key id, secret) and permissions",
			func(c *server.Config) *bool { return &c.KVAuth }),
		boolOpt("kv-auth-allow-insecure", "with --kv-auth, accept credentials over plain HTTP (otherwise 426 without TLS)",
			func(c *server.Config) *bool { return &c.KVAuthAllowInsecure }),
	}
}

// switches are the options that are switches: a bare --name means true.
var switches = map[string]bool{"kv-auth": true, "kv-auth-allow-insecure": true}

// boolOpt binds a switch (list its name in switches): true, false, 1, 0 and the other
// forms of strconv.ParseBool.
func boolOpt(name, usage string, p func(c *server.Config) *bool) option {
	return option{name, usage,
		func(c *server.Config) string { return strconv.FormatBool(*p(c)) },
		func(c *server.Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			*p(c) = b
			return nil
		}}
}

// parseSize accepts a byte count with an optional KiB/MiB/GiB suffix.
func parseSize(v string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suf) {
			v, mult = strings.TrimSuffix(v, suf), m
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size in bytes (e.g. 1048576 or 50MiB)", v)
	}
	return n * mult, nil
}

func envName(flagName string) string {
	return "CAIRN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// loadConfig builds the configuration: defaults, config file, environment, flags. -h
// prints the flag list to stdout and returns errHelp; a flag error is returned with a
// pointer to -h (the caller prints it), not followed by the whole list.
func loadConfig(args []string, getenv func(string) string, stdout io.Writer) (server.Config, error) {
	cfg := server.DefaultConfig()
	opts := options()

	path := getenv("CAIRN_CONFIG")
	for i, a := range args {
		switch {
		case a == "--config" || a == "-config":
			if i+1 < len(args) {
				path = args[i+1]
			}
		case strings.HasPrefix(a, "--config="), strings.HasPrefix(a, "-config="):
			path = a[strings.Index(a, "=")+1:]
		}
	}
	if path != "" {
		if err := applyFile(&cfg, path, opts); err != nil {
			return cfg, err
		}
	}
	for _, o := range opts {
		if v, ok := lookupEnv(getenv, envName(o.name)); ok {
			if err := o.set(&cfg, v); err != nil {
				return cfg, fmt.Errorf("%s: %w", envName(o.name), err)
			}
		}
	}
	fs := flag.NewFlagSet("cairn serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the flag package's own messages; see below
	fs.Usage = func() {}
	fs.String("config", path, "JSON config file whose keys are the flag names (env CAIRN_CONFIG)")
	for _, o := range opts {
		o := o
		usage := fmt.Sprintf("%s (env %s, default %q)", o.usage, envName(o.name), o.get(&cfg))
		set := func(v string) error { return o.set(&cfg, v) }
		if switches[o.name] {
			fs.BoolFunc(o.name, usage, set) // --name alone is --name=true
			continue
		}
		fs.Func(o.name, usage, set)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: cairn [serve] [flags]\n\nFlags (each also a CAIRN_* variable and a config-file key):")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return cfg, errHelp
		}
		return cfg, fmt.Errorf("%w (\"cairn serve -h\" lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return cfg, cfg.Validate()
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

func applyFile(cfg *server.Config, path string, opts []option) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	known := map[string]option{}
	for _, o := range opts {
		known[o.name] = o
	}
	for k, raw := range m {
		if k == "plugins" { // a list, not a flag
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg.Plugins); err != nil {
				return fmt.Errorf("config file %s: plugins: %w", path, err)
			}
			continue
		}
		o, ok := known[k]
		if !ok {
			return fmt.Errorf("config file %s: unknown setting %q", path, k)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			s = string(raw) // numbers are accepted unquoted
		}
		if err := o.set(cfg, s); err != nil {
			return fmt.Errorf("config file %s: %s: %w", path, k, err)
		}
	}
	return nil
}
