package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/server"
	"github.com/cairnkv/cairn/plugins/gopluginhost"
	"github.com/cairnkv/cairn/plugins/native"
	"github.com/cairnkv/cairn/plugins/wasmhost"
)

// hookBucket is the bucket whose PUTs run the WebAssembly precommit.
const hookBucket = "bench_hook"

// benchExtensions gives the benchmarked server the runtimes cmd/cairn gives it: the
// built-ins, the WebAssembly host and the process plugins pcs.
func benchExtensions(ctx context.Context, dataDir string, pcs []gopluginhost.PluginConfig, log *slog.Logger) (
	*server.Extensions, *wasmhost.Host, *gopluginhost.Host, error) {
	host, err := wasmhost.New(ctx, wasmhost.Config{CacheDir: filepath.Join(dataDir, "wasm-cache")})
	if err != nil {
		return nil, nil, nil, err
	}
	plugins, err := gopluginhost.New(ctx, gopluginhost.Config{Plugins: pcs, Logger: log})
	if err != nil {
		_ = host.Close(ctx)
		return nil, nil, nil, err
	}
	return &server.Extensions{
		Providers: []hooks.Provider{native.New(), host, plugins},
		Loader:    host,
		Close: func(ctx context.Context) error {
			return errors.Join(host.Close(ctx), plugins.Close(ctx))
		},
	}, host, plugins, nil
}

// userValues returns count JSON documents of about n bytes that satisfy the schema of
// the json-schema-precommit example (name, email, age, role, short tags).
func userValues(count, n int) [][]byte {
	vs := make([][]byte, count)
	for i := range vs {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"name":"user-%06d","email":"user%d@example.com","age":%d,"role":"member","tags":[`, i, i, 20+i%60)
		for t := 0; b.Len() < n-20; t++ {
			if t > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"tag-%d-%d"`, i%97, t)
		}
		b.WriteString("]}")
		vs[i] = b.Bytes()
	}
	return vs
}

// adminRequest sends an admin API request with the server's credential.
func (b *bench) adminRequest(method, path string, body []byte) error {
	raw, err := os.ReadFile(filepath.Join(b.srv.Config().DataDir, server.AdminCredentialsFile))
	if err != nil {
		return err
	}
	var cred server.Credential
	if err := json.Unmarshal(raw, &cred); err != nil {
		return err
	}
	req, err := http.NewRequest(method, "http://"+b.cairnAddr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(cred.KeyID, cred.KeySecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// hookCase is one precommit the hook phase measures.
type hookCase struct {
	name, module, function string
	target                 float64 // 0: no target (reported for information)
}

// phaseHook: PUT (dw=0) of JSON documents into buckets whose precommit is a WebAssembly
// function, each against the same PUTs into a bucket without hooks: the C example's
// accepting precommit (the host's cost: encoding, the call, the pool) with the target,
// and the Rust JSON-schema validator (a realistic guest doing real work) for information.
// Then the instance pools' sizes after 64 concurrent writers.
func (b *bench) phaseHook(ctx context.Context) error {
	cases := []hookCase{
		{"c", b.o.HookModule, b.o.HookFunction, 0.85},
		{"rust", b.o.HookModuleHeavy, "validate", 0},
	}
	values := userValues(putBodies, b.o.ValueSize)
	plain := workload{Method: http.MethodPut, Bucket: benchBucket, KeyPrefix: "h", DW: 0, Bodies: values}
	for _, c := range cases {
		if c.module == "" {
			continue
		}
		code, err := os.ReadFile(c.module)
		if err != nil {
			return fmt.Errorf("hook module: %w", err)
		}
		mod, bucket := "bench_"+c.name, hookBucket+"_"+c.name
		if err := b.adminRequest(http.MethodPut, "/admin/modules/"+mod, code); err != nil {
			return err
		}
		props := `{"props":{"precommit":[{"mod":"` + mod + `","fun":"` + c.function + `"}]}}`
		if err := b.adminRequest(http.MethodPut, "/buckets/"+bucket+"/props", []byte(props)); err != nil {
			return err
		}
		hooked := plain
		hooked.Bucket = bucket
		without, with, err := b.measurePair(ctx,
			side{name: "put-nohook", server: "cairn", addr: b.cairnAddr, w: plain, conns: b.o.Conns},
			side{name: "put-precommit-" + c.name, server: "cairn", addr: b.cairnAddr, w: hooked, conns: b.o.Conns})
		if err != nil {
			return err
		}
		name := fmt.Sprintf("PUT with WASM precommit (%s %s) / without", c.name, filepath.Base(c.module))
		if c.target > 0 {
			b.ratio(name, with, without, c.target)
		} else {
			b.info(name, with, without)
		}
		if with.Errors > 0 {
			return fmt.Errorf("the %s precommit refused %d of the benchmark's PUTs", c.name, with.Errors)
		}
		b.poolNote(mod)
	}
	return nil
}

// poolNote records how the instance pool of module mod behaved.
func (b *bench) poolNote(mod string) {
	for _, m := range b.host.Stats().Modules {
		if m.Name != mod {
			continue
		}
		pool := 2 * runtime.GOMAXPROCS(0)
		verdict := "bounded"
		if m.MaxLive > int64(pool) {
			verdict = "UNBOUNDED: above the pool size"
		}
		fails := make([]string, 0, len(m.Failures))
		for k, n := range m.Failures {
			fails = append(fails, k.String()+"="+strconv.FormatInt(n, 10))
		}
		b.notes = append(b.notes, fmt.Sprintf("instance pool of %s under %d writers: %d calls, %d instances created, "+
			"at most %d alive at once (pool size %d: %s), failures [%s]",
			mod, b.o.Conns, m.Calls, m.Created, m.MaxLive, pool, verdict, strings.Join(fails, " ")))
	}
}
