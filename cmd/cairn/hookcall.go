package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/plugins/hookjson"
	"github.com/cairnkv/cairn/plugins/wasmhost"
	"github.com/cairnkv/cairn/sdk/abi"
)

const hookUsage = `Usage:
  cairn hook call FILE.wasm FUNCTION [flags] < input.json
      Run one function of a WebAssembly module locally, as the server would, and
      print the result: for a precommit "accept", "reject: REASON" or
      "replace: OBJECT"; for a postcommit "ok"; for a chash_keyfun the hash (1 to 20
      bytes) in hex; for a linkfun, map or reduce the JSON output.
      Exit status: 0 on success, 1 when a precommit rejects, 2 on any error.

Flags:
  --point P          precommit (default), postcommit, keyfun, linkfun, map or reduce
  --dialect D        metadata names of the object JSON: store (default) or riak
  --timeout D        the call's deadline (default: the point's, e.g. 100ms for precommit)
  --memory-pages N   memory cap in 64 KiB pages (default 256)
  --input FILE       read the input from FILE instead of stdin
  --raw              pass the input as it is and print the raw output bytes
`

// hookPoints maps the --point names to extension points.
var hookPoints = map[string]hooks.Point{
	"precommit": hooks.PointPrecommit, "postcommit": hooks.PointPostcommit,
	"keyfun": hooks.PointKeyFun, "chash_keyfun": hooks.PointKeyFun,
	"linkfun": hooks.PointLinkFun, "map": hooks.PointMap, "reduce": hooks.PointReduce,
}

// hookCmd runs `cairn hook call`.
func hookCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pointName := fs.String("point", "precommit", "")
	dialect := fs.String("dialect", "store", "")
	timeout := fs.Duration("timeout", 0, "")
	pages := fs.Uint("memory-pages", abi.DefaultMemoryPages, "")
	inputFile := fs.String("input", "", "")
	raw := fs.Bool("raw", false, "")
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "cairn hook: "+format+"\n", a...)
		fmt.Fprint(stderr, hookUsage)
		return 2
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, hookUsage)
		return 0
	}
	if err != nil {
		return usageErr("%v", err)
	}
	if len(pos) == 0 || pos[0] != "call" {
		return usageErr("the only command is: call FILE.wasm FUNCTION")
	}
	if len(pos) != 3 {
		return usageErr("call takes FILE.wasm and FUNCTION, got %d argument(s)", len(pos)-1)
	}
	file, fun := pos[1], pos[2]
	p, ok := hookPoints[*pointName]
	if !ok {
		return usageErr("unknown point %q", *pointName)
	}
	if *timeout < 0 || *pages == 0 || *pages > 65536 {
		return usageErr("--timeout must be positive and --memory-pages between 1 and 65536")
	}

	fail := func(err error) int {
		fmt.Fprintf(stderr, "cairn hook call: %v\n", err)
		return 2
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		return fail(err)
	}
	var input []byte
	if *inputFile != "" {
		input, err = os.ReadFile(*inputFile)
	} else {
		input, err = io.ReadAll(os.Stdin)
	}
	if err != nil {
		return fail(fmt.Errorf("read the input: %w", err))
	}
	cfg := wasmhost.Config{
		MemoryPages: uint32(*pages),
		PoolSize:    1,
		Dialect:     *dialect,
		Logger:      slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if *timeout > 0 {
		cfg.Timeouts = map[hooks.Point]time.Duration{p: *timeout}
	}
	h, err := wasmhost.New(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = h.Close(context.WithoutCancel(ctx)) }()
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if name == "" {
		name = "module"
	}
	if _, err := h.Load(ctx, name, wasm); err != nil {
		return fail(fmt.Errorf("%s: %w", file, err))
	}
	codec, _ := hookjson.NewCodec(*dialect) // checked by wasmhost.New
	c := hookCall{h: h, codec: codec, mod: name, fun: fun, p: p, stdout: stdout}
	if *raw {
		return c.raw(ctx, input, stderr)
	}
	code, err := c.typed(ctx, input)
	if err != nil {
		return fail(err)
	}
	return code
}

// hookCall is one `cairn hook call`.
type hookCall struct {
	h        *wasmhost.Host
	codec    hookjson.Codec
	mod, fun string
	p        hooks.Point
	stdout   io.Writer
}

// raw passes the input unchanged and prints the output bytes.
func (c hookCall) raw(ctx context.Context, input []byte, stderr io.Writer) int {
	status, out, err := c.h.Call(ctx, c.mod, c.fun, c.p, input)
	if err != nil {
		fmt.Fprintf(stderr, "cairn hook call: %v\n", err)
		return 2
	}
	_, _ = c.stdout.Write(out)
	switch status {
	case abi.StatusOK:
		return 0
	case abi.StatusReject:
		fmt.Fprintf(stderr, "cairn hook call: status 1 (reject)\n")
		return 1
	}
	fmt.Fprintf(stderr, "cairn hook call: status 2 (error)\n")
	return 2
}

// object decodes an object of an input, which must be present.
func (c hookCall) object(raw json.RawMessage) (*core.Object, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New(`the input has no "object"`)
	}
	return c.codec.DecodeObject(raw)
}

// typed decodes the input for the point, makes the call the way the server does, and
// prints the outcome. It returns the exit status.
func (c hookCall) typed(ctx context.Context, input []byte) (int, error) {
	impl, err := c.h.Lookup(c.mod, c.fun, c.p)
	if err != nil {
		return 0, err
	}
	var in struct {
		Op         hooks.Op        `json:"op"`
		Object     json.RawMessage `json:"object"`
		BucketType string          `json:"bucket_type"`
		Bucket     string          `json:"bucket"`
		Key        string          `json:"key"`
		Spec       struct {
			Bucket string `json:"bucket"`
			Tag    string `json:"tag"`
		} `json:"spec"`
		NotFound *struct {
			BucketType string `json:"bucket_type"`
			Bucket     string `json:"bucket"`
			Key        string `json:"key"`
		} `json:"not_found"`
		KeyData json.RawMessage   `json:"keydata"`
		Arg     json.RawMessage   `json:"arg"`
		Values  []json.RawMessage `json:"values"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return 0, fmt.Errorf("the input is not a %s input object: %w", c.p, err)
	}
	decodeObject := func() (*core.Object, error) {
		obj, err := c.object(in.Object)
		if err != nil {
			return nil, fmt.Errorf("the input: %w", err)
		}
		return obj, nil
	}
	commitOp := func() (hooks.Op, error) {
		if in.Op != hooks.OpPut && in.Op != hooks.OpDelete {
			return "", fmt.Errorf(`the input's "op" is %q; want "put" or "delete"`, in.Op)
		}
		return in.Op, nil
	}
	var result any
	switch c.p {
	case hooks.PointPrecommit:
		op, err := commitOp()
		if err != nil {
			return 0, err
		}
		obj, err := decodeObject()
		if err != nil {
			return 0, err
		}
		v, err := impl.(hooks.Precommit).Precommit(ctx, op, obj)
		switch {
		case err != nil:
			return 0, err
		case v.Reject:
			fmt.Fprintf(c.stdout, "reject: %s\n", v.Reason)
			return 1, nil
		case v.Replace != nil:
			fmt.Fprintf(c.stdout, "replace: %s\n", c.codec.AppendObject(nil, v.Replace))
		default:
			fmt.Fprintln(c.stdout, "accept")
		}
		return 0, nil
	case hooks.PointPostcommit:
		op, err := commitOp()
		if err != nil {
			return 0, err
		}
		obj, err := decodeObject()
		if err != nil {
			return 0, err
		}
		if err := impl.(hooks.Postcommit).Postcommit(ctx, op, obj); err != nil {
			return 0, err
		}
		fmt.Fprintln(c.stdout, "ok")
		return 0, nil
	case hooks.PointKeyFun:
		hash, err := impl.(hooks.KeyFun).KeyHash(ctx, in.BucketType, in.Bucket, in.Key)
		if err != nil {
			return 0, err
		}
		fmt.Fprintln(c.stdout, hex.EncodeToString(hash))
		return 0, nil
	case hooks.PointLinkFun:
		obj, err := decodeObject()
		if err != nil {
			return 0, err
		}
		links, err := impl.(hooks.LinkFun).Links(ctx, obj, in.Spec.Bucket, in.Spec.Tag)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(c.stdout, "%s\n", hookjson.AppendLinks(nil, links))
		return 0, nil
	case hooks.PointMap:
		mi := hooks.MapInput{KeyData: in.KeyData, Arg: in.Arg}
		if in.NotFound != nil {
			mi.NotFound = &hooks.Place{Type: in.NotFound.BucketType, Bucket: in.NotFound.Bucket, Key: in.NotFound.Key}
		} else if mi.Object, err = decodeObject(); err != nil {
			return 0, err
		}
		result, err = impl.(hooks.Map).Map(ctx, mi)
	case hooks.PointReduce:
		result, err = impl.(hooks.Reduce).Reduce(ctx, in.Values, in.Arg)
	}
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(result)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(c.stdout, "%s\n", b)
	return 0, nil
}
