package goplugin_test

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"

	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// buildTestPlugin builds testdata/NAME with the go command into a temporary directory
// of the test and returns its path.
func buildTestPlugin(t testing.TB, name string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the test plugin:", err)
	}
	path := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(testContext(t), goBin, "build", "-o", path, "./testdata/"+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return path
}

// startPlugin starts the plugin at path through go-plugin, as the server does, and
// returns its Hooks client.
func startPlugin(t testing.TB, path string) hookspb.HooksClient {
	t.Helper()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  goplugin.Handshake,
		Plugins:          goplugin.PluginSet(nil),
		Cmd:              exec.Command(path),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  goplugin.GRPCDialOptions(),
		Logger:           hclog.NewNullLogger(),
		Stderr:           io.Discard,
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(goplugin.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	hc, ok := raw.(hookspb.HooksClient)
	if !ok {
		t.Fatalf("dispensed %T, want a hookspb.HooksClient", raw)
	}
	return hc
}

// TestPluginProcess builds a plugin binary and talks to it through go-plugin: the
// handshake, Describe, every kind of answer, a panic the process survives, and a map
// stream. Run by hand, the binary refuses to start.
func TestPluginProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a plugin binary")
	}
	path := buildTestPlugin(t, "testplugin")
	ctx := testContext(t)

	// Run by hand, without go-plugin's handshake, the plugin refuses with a message.
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = []string{}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(out) == 0 {
		t.Fatalf("run by hand: %v, output %q; want exit status 1 with a message", err, out)
	}

	hc := startPlugin(t, path)

	caps, err := hc.Describe(ctx, &hookspb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if caps.GetAbiVersion() != goplugin.ABIVersion || len(caps.GetPoints()) != 3 || len(caps.GetFunctions()) != 4 {
		t.Fatalf("described %v", caps)
	}

	obj := &hookspb.Object{Bucket: []byte("shout"), Key: []byte("k\xff"), Contents: []*hookspb.Content{{Value: []byte("hello\x00")}}}
	tests := []struct {
		fun   string
		op    hookspb.Op
		check func(*hookspb.PrecommitResponse) bool
		code  codes.Code
	}{
		{"check", hookspb.Op_PUT, func(r *hookspb.PrecommitResponse) bool {
			return string(r.GetReplace().GetContents()[0].GetValue()) == "HELLO\x00" && string(r.GetReplace().GetKey()) == "k\xff"
		}, codes.OK},
		{"check", hookspb.Op_DELETE, func(r *hookspb.PrecommitResponse) bool { return r.GetReject() == "no deletes of k\uFFFD" }, codes.OK},
		{"panic", hookspb.Op_PUT, nil, codes.Internal},
		{"check", hookspb.Op_DELETE, func(r *hookspb.PrecommitResponse) bool { return r.GetReject() != "" }, codes.OK},
		{"size", hookspb.Op_PUT, nil, codes.NotFound},
	}
	for i, tt := range tests {
		resp, err := hc.Precommit(ctx, &hookspb.HookRequest{Fun: tt.fun, Op: tt.op, Object: obj})
		if tt.code != codes.OK {
			wantCode(t, callErr(err), tt.code, "")
			continue
		}
		if err != nil {
			t.Fatalf("%d: %s: %v", i, tt.fun, err)
		}
		if !tt.check(resp) {
			t.Fatalf("%d: %s: got %v", i, tt.fun, resp)
		}
	}
	if _, err := hc.KeyHash(ctx, &hookspb.KeyHashRequest{Fun: "check"}); err == nil {
		t.Fatal("an unoffered point answered")
	} else {
		wantCode(t, callErr(err), codes.Unimplemented, "")
	}

	// A map stream: the size of each value; every 10th input is missing.
	const n = 2000
	reqs := make([]*hookspb.MapRequest, n)
	for i := range reqs {
		reqs[i] = &hookspb.MapRequest{Object: &hookspb.Object{Key: []byte(strconv.Itoa(i))}, NotFound: i%10 == 9}
		if !reqs[i].NotFound {
			reqs[i].Object.Contents = []*hookspb.Content{{Value: make([]byte, i)}}
		}
	}
	reqs[0].Fun = "size"
	stream, err := hc.Map(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		for _, r := range reqs {
			if err := stream.Send(r); err != nil {
				sent <- err
				return
			}
		}
		sent <- stream.CloseSend()
	}()
	for i := 0; ; i++ {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if i != n {
				t.Fatalf("%d answers for %d inputs", i, n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i%10 == 9 && resp.GetError() != "not found: "+strconv.Itoa(i):
			t.Fatalf("answer %d: %v", i, resp)
		case i%10 != 9 && (len(resp.GetValuesJson()) != 1 || string(resp.GetValuesJson()[0]) != strconv.Itoa(i)):
			t.Fatalf("answer %d: %v", i, resp)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}

	red, err := hc.Reduce(ctx, &hookspb.ReduceRequest{Fun: "sum", ValuesJson: [][]byte{[]byte("40"), []byte("2")}})
	if err != nil || len(red.GetValuesJson()) != 1 || string(red.GetValuesJson()[0]) != "42" {
		t.Fatalf("reduce: %v, %v", red, err)
	}
}

// TestServeRefuses checks that Serve refuses an implementation that offers nothing,
// before the handshake, with a message on standard error and exit status 1.
func TestServeRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a plugin binary")
	}
	cmd := exec.CommandContext(testContext(t), buildTestPlugin(t, "emptyplugin"))
	cmd.Env = []string{goplugin.Handshake.MagicCookieKey + "=" + goplugin.Handshake.MagicCookieValue}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("got %v, want exit status 1", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "lists no functions") {
		t.Fatalf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
