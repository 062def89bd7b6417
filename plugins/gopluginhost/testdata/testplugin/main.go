// Command testplugin is the process plugin the tests of gopluginhost run. It serves
// the Hooks service directly (no SDK helpers) and behaves as its function names and
// environment say:
//
//	TP_EXIT_AT_START=N      exit with status N before serving
//	TP_EXIT_UNLESS_FILE=P   exit with status 4 before serving unless file P exists
//	TP_HANG_AT_START=1      never serve (no handshake)
//	TP_STDERR_AT_START=S    write S (with \n as line breaks) to standard error first
//	TP_POINTS=a,b           the points Describe lists (default: all)
//	TP_FUNCTIONS=f:a,b;g    the functions Describe names, each with its points
//	TP_ABI=N                the ABI version Describe reports (default 1)
//
// See each method for its functions.
package main

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/status"

	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

func main() {
	if s := os.Getenv("TP_STDERR_AT_START"); s != "" {
		fmt.Fprint(os.Stderr, strings.ReplaceAll(s, `\n`, "\n"))
	}
	if s := os.Getenv("TP_EXIT_AT_START"); s != "" {
		code, _ := strconv.Atoi(s)
		fmt.Fprintln(os.Stderr, "testplugin: exiting at start as asked")
		os.Exit(code)
	}
	if p := os.Getenv("TP_EXIT_UNLESS_FILE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintln(os.Stderr, "testplugin: no", p, "yet")
			os.Exit(4)
		}
	}
	if os.Getenv("TP_HANG_AT_START") != "" {
		select {}
	}
	goplugin.ServeHooks(&server{})
}

type server struct {
	hookspb.UnimplementedHooksServer
}

var pointNames = map[string]hookspb.Point{
	"precommit": hookspb.Point_PRECOMMIT, "postcommit": hookspb.Point_POSTCOMMIT,
	"chash_keyfun": hookspb.Point_KEYFUN, "linkfun": hookspb.Point_LINKFUN,
	"map": hookspb.Point_MAP, "reduce": hookspb.Point_REDUCE,
}

func points(list string) []hookspb.Point {
	var out []hookspb.Point
	for _, name := range strings.Split(list, ",") {
		if p, ok := pointNames[strings.TrimSpace(name)]; ok {
			out = append(out, p)
		}
	}
	return out
}

// Describe lists TP_POINTS (default: all) and TP_FUNCTIONS.
func (s *server) Describe(context.Context, *hookspb.Empty) (*hookspb.Capabilities, error) {
	c := &hookspb.Capabilities{AbiVersion: uint32(goplugin.ABIVersion)}
	if v := os.Getenv("TP_ABI"); v != "" {
		n, _ := strconv.Atoi(v)
		c.AbiVersion = uint32(n)
	}
	if v, ok := os.LookupEnv("TP_POINTS"); ok {
		c.Points = points(v)
	} else {
		c.Points = points("precommit,postcommit,chash_keyfun,linkfun,map,reduce")
	}
	if v := os.Getenv("TP_FUNCTIONS"); v != "" {
		for _, f := range strings.Split(v, ";") {
			name, ps, _ := strings.Cut(f, ":")
			c.Functions = append(c.Functions, &hookspb.Function{Name: name, Points: points(ps)})
		}
	}
	return c, nil
}

// common handles the functions every point has: error, crash, panic, sleep (until
// the call's context ends), hang (forever, ignoring the context).
func common(ctx context.Context, fun, key string) (bool, error) {
	switch fun {
	case "error":
		return true, errors.New("boom: " + key)
	case "crash":
		os.Exit(2)
	case "panic":
		panic("test panic")
	case "sleep":
		select {
		case <-ctx.Done():
			return true, status.FromContextError(ctx.Err()).Err()
		case <-time.After(30 * time.Second):
		}
		return true, nil
	case "hang":
		select {} // a stuck process: only a kill ends this
	}
	return false, nil
}

// Precommit: accept, accept_nil (an empty answer), accept_false, reject (with a
// reason naming the key), reject_empty, replace (uppercased value, text/plain, a meta
// entry, an index entry "Seen_INT"="+007" and a link; it also changes the place and
// clock, which the host must ignore), identity (the object as received), bad_replace
// (an index field without suffix), empty_replace (no contents), stderr (writes a line
// to os.Stderr and one to os.Stdout, both synced over gRPC, and one with the log
// package, to the raw standard error), getenv_NAME
// (rejects with "env:" and the variable's value), plus error, crash, panic, sleep,
// hang.
func (s *server) Precommit(ctx context.Context, req *hookspb.HookRequest) (*hookspb.PrecommitResponse, error) {
	obj := req.GetObject()
	key := string(obj.GetKey())
	if done, err := common(ctx, req.GetFun(), key); done {
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Accept{Accept: true}}, err
	}
	accept := &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Accept{Accept: true}}
	reject := func(r string) *hookspb.PrecommitResponse {
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Reject{Reject: r}}
	}
	replace := func(o *hookspb.Object) *hookspb.PrecommitResponse {
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Replace{Replace: o}}
	}
	switch fun := req.GetFun(); {
	case fun == "accept":
		return accept, nil
	case fun == "accept_nil":
		return &hookspb.PrecommitResponse{}, nil
	case fun == "accept_false":
		return &hookspb.PrecommitResponse{Result: &hookspb.PrecommitResponse_Accept{}}, nil
	case fun == "reject":
		return reject("no thanks: " + key + " " + req.GetOp().String()), nil
	case fun == "reject_empty":
		return reject(""), nil
	case fun == "identity":
		return replace(obj), nil
	case fun == "replace":
		c := obj.GetContents()[0]
		return replace(&hookspb.Object{
			BucketType: []byte("other"), Bucket: []byte("elsewhere"), Key: []byte("k2"), Vclock: []byte("fake"),
			Contents: []*hookspb.Content{{
				Value: []byte(strings.ToUpper(string(c.GetValue()))), ContentType: "text/plain", Charset: "utf-8",
				Usermeta: append(c.GetUsermeta(), &hookspb.Pair{Key: []byte("Plugin"), Value: []byte("yes")}),
				Indexes:  append(c.GetIndexes(), &hookspb.Pair{Key: []byte("Seen_INT"), Value: []byte("+007")}),
				Links:    append(c.GetLinks(), &hookspb.Link{Bucket: []byte("b"), Key: []byte("k"), Tag: []byte("t")}),
				Vtag:     "ignored", LastModUsecs: 42,
			}},
		}), nil
	case fun == "bad_replace":
		return replace(&hookspb.Object{Contents: []*hookspb.Content{{Indexes: []*hookspb.Pair{{Key: []byte("foo"), Value: []byte("x")}}}}}), nil
	case fun == "empty_replace":
		return replace(&hookspb.Object{}), nil
	case fun == "stderr":
		fmt.Fprintln(os.Stderr, "synced line for "+key)
		fmt.Println("stdout line for " + key) // go-plugin redirects os.Stdout once serving
		log.Print("raw line for " + key)
		return accept, nil
	case strings.HasPrefix(fun, "getenv_"):
		return reject("env:" + os.Getenv(strings.TrimPrefix(fun, "getenv_"))), nil
	}
	return nil, fmt.Errorf("unknown precommit function %q", req.GetFun())
}

// Postcommit: ok, plus error, crash, panic, sleep, hang.
func (s *server) Postcommit(ctx context.Context, req *hookspb.HookRequest) (*hookspb.Empty, error) {
	if done, err := common(ctx, req.GetFun(), string(req.GetObject().GetKey())); done {
		return &hookspb.Empty{}, err
	}
	if req.GetFun() == "ok" {
		return &hookspb.Empty{}, nil
	}
	return nil, fmt.Errorf("unknown postcommit function %q", req.GetFun())
}

// KeyHash: sha1 (of type/bucket/key), one (a single byte 0x7f), empty (no bytes),
// long (21 bytes), plus error, crash, panic, sleep, hang.
func (s *server) KeyHash(ctx context.Context, req *hookspb.KeyHashRequest) (*hookspb.KeyHashResponse, error) {
	if done, err := common(ctx, req.GetFun(), string(req.GetKey())); done {
		return &hookspb.KeyHashResponse{Hash: []byte{1}}, err
	}
	switch req.GetFun() {
	case "sha1":
		h := sha1.Sum([]byte(string(req.GetBucketType()) + "/" + string(req.GetBucket()) + "/" + string(req.GetKey())))
		return &hookspb.KeyHashResponse{Hash: h[:]}, nil
	case "one":
		return &hookspb.KeyHashResponse{Hash: []byte{0x7f}}, nil
	case "empty":
		return &hookspb.KeyHashResponse{}, nil
	case "long":
		return &hookspb.KeyHashResponse{Hash: make([]byte, 21)}, nil
	}
	return nil, fmt.Errorf("unknown keyfun %q", req.GetFun())
}

// Links: all (the links of every content matching bucket and tag, "_" for any),
// fixed (one link b/k/t), plus error, crash, panic, sleep, hang.
func (s *server) Links(ctx context.Context, req *hookspb.LinkRequest) (*hookspb.LinkResponse, error) {
	if done, err := common(ctx, req.GetFun(), string(req.GetObject().GetKey())); done {
		return &hookspb.LinkResponse{}, err
	}
	switch req.GetFun() {
	case "all":
		var out []*hookspb.Link
		b, t := string(req.GetBucket()), string(req.GetTag())
		for _, c := range req.GetObject().GetContents() {
			for _, l := range c.GetLinks() {
				if (b == "_" || string(l.GetBucket()) == b) && (t == "_" || string(l.GetTag()) == t) {
					out = append(out, l)
				}
			}
		}
		return &hookspb.LinkResponse{Links: out}, nil
	case "fixed":
		return &hookspb.LinkResponse{Links: []*hookspb.Link{{Bucket: []byte("b"), Key: []byte("k"), Tag: []byte("t")}}}, nil
	}
	return nil, fmt.Errorf("unknown linkfun %q", req.GetFun())
}

// Map answers each input of the stream. Functions: echo (the key as a JSON string;
// an input whose key data is "fail" fails on its own), value (the object's value,
// which must be JSON), notfound (echo, or {"not_found":KEY} for a missing input),
// arg (the phase's argument), crash_after (echo; the process exits after as many
// inputs as the argument says), badjson (a value that is not JSON), error_stream (the
// stream ends with an error), sleep (no answer until the stream ends), hang (no
// answer ever, the stream's end ignored), crash, panic.
func (s *server) Map(stream hookspb.Hooks_MapServer) error {
	var fun string
	var arg []byte
	for n := 0; ; n++ {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n == 0 {
			fun, arg = req.GetFun(), req.GetArgJson()
		}
		key := string(req.GetObject().GetKey())
		resp := &hookspb.ValuesResponse{}
		switch fun {
		case "echo", "crash_after":
			if fun == "crash_after" {
				limit, _ := strconv.Atoi(string(arg))
				if n >= limit {
					os.Exit(3)
				}
			}
			if string(req.GetKeydataJson()) == `"fail"` {
				resp.Error = "failed on " + key
			} else {
				resp.ValuesJson = [][]byte{strconv.AppendQuote(nil, key)}
			}
		case "value":
			resp.ValuesJson = [][]byte{req.GetObject().GetContents()[0].GetValue()}
		case "notfound":
			if req.GetNotFound() {
				resp.ValuesJson = [][]byte{[]byte(`{"not_found":` + strconv.Quote(key) + `}`)}
			} else {
				resp.ValuesJson = [][]byte{strconv.AppendQuote(nil, key)}
			}
		case "arg":
			resp.ValuesJson = [][]byte{arg}
		case "badjson":
			resp.ValuesJson = [][]byte{[]byte("{not json")}
		case "error_stream":
			return errors.New("the map stream failed")
		case "sleep":
			<-stream.Context().Done()
			return stream.Context().Err()
		case "hang":
			select {} // a stuck process: only a kill ends this
		case "crash":
			os.Exit(2)
		case "panic":
			panic("test panic")
		default:
			return fmt.Errorf("unknown map function %q", fun)
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// Reduce: sum (the sum of the numbers), badjson, plus error, crash, panic, sleep,
// hang.
func (s *server) Reduce(ctx context.Context, req *hookspb.ReduceRequest) (*hookspb.ValuesResponse, error) {
	if done, err := common(ctx, req.GetFun(), ""); done {
		return &hookspb.ValuesResponse{}, err
	}
	switch req.GetFun() {
	case "sum":
		var sum float64
		for _, v := range req.GetValuesJson() {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return nil, fmt.Errorf("not a number: %s", v)
			}
			sum += f
		}
		return &hookspb.ValuesResponse{ValuesJson: [][]byte{strconv.AppendFloat(nil, sum, 'g', -1, 64)}}, nil
	case "badjson":
		return &hookspb.ValuesResponse{ValuesJson: [][]byte{[]byte("nope")}}, nil
	}
	return nil, fmt.Errorf("unknown reduce function %q", req.GetFun())
}
