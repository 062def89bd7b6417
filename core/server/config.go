package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/cluster"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/kv"
)

// Config is the whole server configuration: one struct, filled from defaults, then an
// optional config file, then CAIRN_* environment variables, then flags (cmd/cairn).
type Config struct {
	// KVListen is the address of the key-value HTTP interface.
	KVListen string `json:"kv-listen"`
	// S3Listen is the address of the object-storage interface ("" serves none).
	S3Listen string `json:"s3-listen"`
	// S3DataHost is the host name buckets are sub-domains of in host-style addressing
	// ({bucket}.{data host}); every other Host is path style.
	S3DataHost string `json:"s3-data-host"`
	// S3Region is the region buckets report (?location) and the default region.
	S3Region string `json:"s3-region"`
	// S3MaxObjectSize bounds an object stored through the object-storage interface.
	S3MaxObjectSize int64 `json:"s3-max-object-size"`
	// S3UploadTTL is how long a multipart upload may stay incomplete before it is
	// aborted and its parts collected.
	S3UploadTTL time.Duration `json:"s3-upload-ttl"`
	// DataDir holds the LevelDB store and the server's files.
	DataDir string `json:"data-dir"`
	// Dialect chooses the names the server writes: "store" (X-Store-*, /store, storetag)
	// or "riak" (X-Riak-*, /riak, riaktag). Both are always accepted on input.
	Dialect string `json:"dialect"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `json:"log-level"`
	// LogFormat is text or json.
	LogFormat string `json:"log-format"`
	// NodeName is the node's name in /stats and bucket-type properties.
	NodeName string `json:"node-name"`
	// MaxObjectSize bounds a stored value, in bytes (413 above).
	MaxObjectSize int64 `json:"max-object-size"`

	// ClusterName turns cluster mode on (docs/cluster.md); empty: standalone.
	ClusterName string `json:"cluster-name"`
	// ClusterListen is the host:port of the embedded NATS server's routes.
	ClusterListen string `json:"cluster-listen"`
	// ClusterPeers are the other nodes' route addresses, comma-separated (this node's
	// own may be among them).
	ClusterPeers string `json:"cluster-peers"`
	// NATSURL, comma-separated URLs, makes the node use an existing NATS (JetStream
	// on) instead of an embedded server.
	NATSURL string `json:"nats-url"`
	// ClusterPartitions is the number of object partitions (a power of two).
	ClusterPartitions int `json:"cluster-partitions"`
	// DeleteReapDelay is how long tombstones stay visible after a delete.
	DeleteReapDelay time.Duration `json:"delete-reap-delay"`
	// ShutdownTimeout bounds the graceful shutdown of in-flight requests.
	ShutdownTimeout time.Duration `json:"shutdown-timeout"`
	// CacheSize is LevelDB's block cache, in bytes (0 = the storage default).
	CacheSize int `json:"cache-size"`
	// ObjectCacheSize is the in-memory cache of object records in front of LevelDB, in
	// bytes (0 = automatic: a sixteenth of the memory available, between 64 MiB and
	// 4 GiB; negative = none).
	ObjectCacheSize int64 `json:"object-cache-size"`
	// WASMMemoryPages caps the memory of each WebAssembly instance, in 64 KiB pages
	// (0: the ABI default, 256 pages = 16 MiB).
	WASMMemoryPages int `json:"wasm-memory-pages"`
	// ModulesDir, if set, is a directory of *.wasm files registered at start under their
	// file names (without .wasm), replacing stored modules of the same name.
	ModulesDir string `json:"modules-dir"`
	// MapReduceMaxJobs is the most MapReduce jobs that run at once; more wait for a
	// slot within their own timeout (0: mapreduce.DefaultMaxJobs).
	MapReduceMaxJobs int `json:"mapreduce-max-jobs"`
	// MapReduceMaxResultSize bounds, in bytes, the results of a MapReduce job answered
	// in one body (chunked results are not bounded) and the values one reduce phase
	// holds (0: mapreduce.DefaultMaxResultBytes).
	MapReduceMaxResultSize int64 `json:"mapreduce-max-result-size"`
	// MapReduceMaxJobSize bounds the JSON of a MapReduce job, in bytes (0:
	// mapreduce.DefaultMaxJobBytes).
	MapReduceMaxJobSize int64 `json:"mapreduce-max-job-size"`
	// JSSourceDir, if set, is a directory of *.js files every JavaScript VM loads: the
	// functions they define can be named in MapReduce phases and precommit hooks.
	JSSourceDir string `json:"js-source-dir"`
	// JSMemoryMB caps the memory of each JavaScript VM, in MiB (0: the runtime's
	// default, 32).
	JSMemoryMB int `json:"js-memory-mb"`
	// JSTimeout bounds one JavaScript map or reduce call, JSHookTimeout one precommit
	// call (0: the runtime's defaults, 5s and 100ms).
	JSTimeout     time.Duration `json:"js-timeout"`
	JSHookTimeout time.Duration `json:"js-hook-timeout"`
	// PluginsDir, if set, is a directory of process plugins started at boot: every
	// executable file NAME in it is plugin NAME, and must be listed with its SHA-256 in
	// the directory's SHA256SUMS file (the output of sha256sum).
	PluginsDir string `json:"plugins-dir"`
	// Plugins are process plugins named in the config file (key "plugins"), started at
	// boot beside those of PluginsDir.
	Plugins []PluginSpec `json:"plugins"`
	// AdminKeyID and AdminKeySecret set the admin credential; when empty it is read from
	// (or created at first start in) <data-dir>/admin-credentials.json.
	AdminKeyID     string `json:"admin-key-id"`
	AdminKeySecret string `json:"admin-key-secret"`
	// MaxObjectMetaEntries bounds the user metadata entries of one KV value;
	// MaxObjectHeaderBytes bounds the bytes of its content type, charset, encoding,
	// user metadata, index entries and links (400 above either).
	MaxObjectMetaEntries int   `json:"max-object-meta-entries"`
	MaxObjectHeaderBytes int64 `json:"max-object-header-bytes"`

	// HeaderTimeout bounds the reading of a request's headers, and of a TLS handshake.
	HeaderTimeout time.Duration `json:"header-timeout"`
	// BodyReadTimeout is the longest a request body may keep the server waiting for its
	// next bytes, and the grace period before BodyMinRate applies (0: no deadline).
	BodyReadTimeout time.Duration `json:"body-read-timeout"`
	// BodyMinRate is the slowest a request body may arrive once the grace period is
	// spent, in bytes per second on average over the time the server waits for it (0:
	// no minimum).
	BodyMinRate int64 `json:"body-min-rate"`
	// MaxBodyMemory bounds the bytes of KV request bodies (values, MapReduce jobs,
	// properties) held in memory at once; a request over it is answered 503 (0: 256 MiB,
	// or twice MaxObjectSize when that is more).
	MaxBodyMemory int64 `json:"max-body-memory"`
	// MaxConnections bounds the connections each listener keeps open (lowered to fit
	// the open-file limit; 0: only that limit), MaxConnectionsPerIP those from one
	// client address (0: no limit). A connection over a limit displaces the one that
	// has waited longest without a request in progress, or is refused with a 503.
	MaxConnections      int `json:"max-connections"`
	MaxConnectionsPerIP int `json:"max-connections-per-ip"`
	// KVTLSCert and KVTLSKey (PEM files), when set, make the key-value interface serve
	// HTTPS only; S3TLSCert and S3TLSKey the same for the object-storage interface. The
	// files are read again by ReloadTLS (SIGHUP).
	KVTLSCert string `json:"kv-tls-cert"`
	KVTLSKey  string `json:"kv-tls-key"`
	S3TLSCert string `json:"s3-tls-cert"`
	S3TLSKey  string `json:"s3-tls-key"`

	// MapReduceMaxJobsPerClient is the most MapReduce jobs one client (its IP address,
	// an IPv6 /64, or its user name when authenticated) runs at once; its next ones wait
	// within their own timeout, then answer 503 (0: mapreduce.DefaultMaxJobsPerClient).
	MapReduceMaxJobsPerClient int `json:"mapreduce-max-jobs-per-client"`
	// JSMaxVMsPerClient is the most JavaScript VMs of each pool (MapReduce, precommit
	// hooks) one client uses at once (0: half of each pool, at least 1).
	JSMaxVMsPerClient int `json:"js-max-vms-per-client"`

	// KVAuth turns KV access control on: every request but /ping, /stats, /metrics and /
	// needs the HTTP Basic credentials (key id, secret) of an enabled user, or of the
	// admin credential, and the permission its route names (docs/kv-security.md).
	KVAuth bool `json:"kv-auth"`
	// KVAuthAllowInsecure lets KVAuth accept credentials over plain HTTP; without it a
	// request that is not over TLS is refused with 426.
	KVAuthAllowInsecure bool `json:"kv-auth-allow-insecure"`

	// SyncLatency simulates a slower disk: every storage sync waits this long first. For
	// benchmarks only (no flag).
	SyncLatency time.Duration `json:"-"`

	// Extensions are the extension runtimes (injected by cmd/cairn; core never imports
	// plugins). Nil: hooks are stored and shape-checked but not run.
	Extensions *Extensions `json:"-"`

	// LifecycleInterval is how often the S3 lifecycle worker applies the buckets'
	// lifecycle rules (0: 1h).
	LifecycleInterval time.Duration `json:"lifecycle-interval"`
	// LifecycleDay is the length of a lifecycle rule's day (0: 24h; tests shorten it
	// so that rules of days run in seconds).
	LifecycleDay time.Duration `json:"lifecycle-day"`
	// SSEMasterKey is the file of the master key that wraps SSE-S3 objects' data keys;
	// empty: <data-dir>/sse-master.key, created at first start. A file named here must
	// exist (a cluster's nodes share one key: copy the file).
	SSEMasterKey string `json:"sse-master-key"`
}

// PluginSpec configures one process plugin (a hashicorp/go-plugin program).
type PluginSpec struct {
	// Name is the module name bucket properties call it by ({"mod": NAME}).
	Name string `json:"name"`
	// Command is the program and its arguments; the program's SHA-256 must be SHA256.
	Command []string `json:"command"`
	// SHA256 is the lower-case hex SHA-256 of the program, checked before every start.
	SHA256 string `json:"sha256"`
	// Env adds variables to the plugin's environment (which is otherwise the server's).
	Env map[string]string `json:"env,omitempty"`
}

func (p PluginSpec) validate() error {
	switch {
	case p.Name == "":
		return fmt.Errorf("a plugin needs a name")
	case len(p.Command) == 0 || p.Command[0] == "":
		return fmt.Errorf("plugin %q needs a command", p.Name)
	case len(p.SHA256) != 64 || strings.Trim(strings.ToLower(p.SHA256), "0123456789abcdef") != "":
		return fmt.Errorf("plugin %q: sha256 must be the program's SHA-256 in 64 hex digits", p.Name)
	}
	return nil
}

// Extensions are the extension runtimes the server runs hooks with.
type Extensions struct {
	// Providers resolve hook specs, in resolution order (native, WASM, plugins).
	Providers []hooks.Provider
	// Loader installs registered modules (the WebAssembly host); nil: no module registry.
	Loader hooks.Loader
	// Stats, if set, adds the runtimes' figures to /stats.
	Stats func() map[string]any
	// Close stops the runtimes after the services.
	Close func(ctx context.Context) error
}

// DefaultConfig returns the embedded defaults that `make run` uses.
func DefaultConfig() Config {
	return Config{
		KVListen:        "127.0.0.1:8098",
		S3Listen:        "127.0.0.1:8080",
		S3DataHost:      "s3.localhost",
		S3Region:        "us-east-1",
		S3MaxObjectSize: 5 << 30,
		S3UploadTTL:     7 * 24 * time.Hour,
		DataDir:         "./data",
		Dialect:         "store",
		LogLevel:        "info",
		LogFormat:       "text",
		NodeName:        DefaultNodeName,
		MaxObjectSize:   50 << 20,
		DeleteReapDelay: 3 * time.Second,

		ClusterPartitions: cluster.DefaultPartitions,
		ShutdownTimeout:   10 * time.Second,

		MaxObjectMetaEntries: kv.DefaultMaxMetaEntries,
		MaxObjectHeaderBytes: kv.DefaultMaxHeaderBytes,

		HeaderTimeout:       10 * time.Second,
		BodyReadTimeout:     30 * time.Second,
		BodyMinRate:         1 << 10,
		MaxConnections:      4096,
		MaxConnectionsPerIP: 512,

		LifecycleInterval: time.Hour,
		LifecycleDay:      24 * time.Hour,
	}
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	if err := c.validateCluster(); err != nil {
		return err
	}
	switch {
	case c.KVListen == "":
		return fmt.Errorf("kv-listen must be set")
	case c.DataDir == "":
		return fmt.Errorf("data-dir must be set")
	case c.Dialect != "store" && c.Dialect != "riak":
		return fmt.Errorf("dialect must be store or riak, not %q", c.Dialect)
	case c.S3Listen != "" && (c.S3DataHost == "" || strings.ContainsAny(c.S3DataHost, ":/ ")):
		return fmt.Errorf("s3-data-host must be a host name without port, not %q", c.S3DataHost)
	case c.S3MaxObjectSize <= 0:
		return fmt.Errorf("s3-max-object-size must be positive")
	case c.S3UploadTTL <= 0:
		return fmt.Errorf("s3-upload-ttl must be positive")
	case c.LifecycleInterval != 0 && c.LifecycleInterval < 100*time.Millisecond:
		return fmt.Errorf("lifecycle-interval must be at least 100ms (0: the default, 1h)")
	case c.LifecycleDay < 0:
		return fmt.Errorf("lifecycle-day must be positive (0: the default, 24h)")
	case c.MaxObjectSize <= 0:
		return fmt.Errorf("max-object-size must be positive")
	case c.DeleteReapDelay <= 0:
		return fmt.Errorf("delete-reap-delay must be positive")
	case c.WASMMemoryPages < 0 || c.WASMMemoryPages > 65536:
		return fmt.Errorf("wasm-memory-pages must be between 0 and 65536")
	case c.MapReduceMaxJobs < 0 || c.MapReduceMaxResultSize < 0 || c.MapReduceMaxJobSize < 0:
		return fmt.Errorf("mapreduce-max-jobs, mapreduce-max-result-size and mapreduce-max-job-size must not be negative")
	case c.JSMemoryMB < 0 || c.JSMemoryMB > 4096:
		return fmt.Errorf("js-memory-mb must be between 0 and 4096")
	case c.JSTimeout < 0 || c.JSHookTimeout < 0:
		return fmt.Errorf("js-timeout and js-hook-timeout must not be negative")
	case (c.AdminKeyID == "") != (c.AdminKeySecret == ""):
		return fmt.Errorf("admin-key-id and admin-key-secret must be set together")
	case c.MaxObjectMetaEntries < 1 || c.MaxObjectMetaEntries > 1_000_000:
		return fmt.Errorf("max-object-meta-entries must be between 1 and 1000000")
	case c.MaxObjectHeaderBytes < 1 || c.MaxObjectHeaderBytes > 1<<30:
		return fmt.Errorf("max-object-header-bytes must be between 1 and 1GiB")
	case c.MapReduceMaxJobsPerClient < 0 || c.JSMaxVMsPerClient < 0:
		return fmt.Errorf("mapreduce-max-jobs-per-client and js-max-vms-per-client must not be negative")
	}
	if err := c.validateHTTP(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, p := range c.Plugins {
		if err := p.validate(); err != nil {
			return fmt.Errorf("plugins[%d]: %w", i, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("plugins[%d]: the name %q is given twice", i, p.Name)
		}
		seen[p.Name] = true
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log-level must be debug, info, warn or error, not %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log-format must be text or json, not %q", c.LogFormat)
	}
	return nil
}

// validateHTTP checks the HTTP limits and TLS settings.
func (c Config) validateHTTP() error {
	switch {
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("shutdown-timeout must be positive")
	case c.HeaderTimeout <= 0:
		return fmt.Errorf("header-timeout must be positive")
	case c.BodyReadTimeout < 0 || c.BodyMinRate < 0:
		return fmt.Errorf("body-read-timeout and body-min-rate must not be negative")
	case c.MaxBodyMemory < 0:
		return fmt.Errorf("max-body-memory must not be negative")
	case c.MaxBodyMemory > 0 && c.MaxBodyMemory < c.MaxObjectSize:
		return fmt.Errorf("max-body-memory (%d) must be at least max-object-size (%d), or no value could be stored", c.MaxBodyMemory, c.MaxObjectSize)
	case c.MaxConnections < 0 || c.MaxConnectionsPerIP < 0:
		return fmt.Errorf("max-connections and max-connections-per-ip must not be negative")
	case (c.KVTLSCert == "") != (c.KVTLSKey == ""):
		return fmt.Errorf("kv-tls-cert and kv-tls-key must be set together")
	case (c.S3TLSCert == "") != (c.S3TLSKey == ""):
		return fmt.Errorf("s3-tls-cert and s3-tls-key must be set together")
	}
	return nil
}

// DefaultNodeName is the default of NodeName; in cluster mode a node left with it is
// named after its route address instead (ClusterNodeName).
const DefaultNodeName = "cairn@127.0.0.1"

// ClusterNodeName returns the node's name in the cluster: NodeName, or when that is
// the default, "cairn@" and the route address (with --nats-url: the host name and the
// KV address), so that nodes started with defaults get distinct names.
func (c Config) ClusterNodeName() string {
	if c.NodeName != DefaultNodeName && c.NodeName != "" {
		return c.NodeName
	}
	if c.NATSURL == "" {
		return "cairn@" + c.ClusterListen
	}
	host, _ := os.Hostname()
	return "cairn@" + host + "-" + c.KVListen
}

// clusterConfig returns the cluster node's configuration.
func (c Config) clusterConfig() cluster.Config {
	cc := cluster.Config{Name: c.ClusterName, NodeName: c.ClusterNodeName(), DataDir: c.DataDir,
		Listen: c.ClusterListen, Partitions: c.ClusterPartitions, Peers: splitList(c.ClusterPeers),
		NATSURLs: splitList(c.NATSURL)}
	return cc
}

// splitList splits a comma-separated list, dropping empty items and spaces.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// validateCluster checks the cluster settings: none at all (standalone), or a
// cluster name with a route address or NATS URLs.
func (c Config) validateCluster() error {
	if c.ClusterName == "" {
		if c.ClusterListen != "" || c.ClusterPeers != "" || c.NATSURL != "" {
			return fmt.Errorf("cluster-listen, cluster-peers and nats-url need cluster-name (cluster mode)")
		}
		return nil
	}
	if c.NATSURL == "" && c.ClusterListen == "" {
		return fmt.Errorf("cluster mode needs cluster-listen (the embedded NATS routes) or nats-url")
	}
	return c.clusterConfig().Validate()
}
