package main

// End-to-end test harness. startServer runs Cairn on free ports and a fresh (or given)
// data directory: in this test process by default (run, the binary's own entry point
// after main, in a goroutine, with the flags, environment and output a process would
// get), or as a child process of the real binary (built once by TestMain) when the test
// asks for one with serverOpts.process, because it signals, kills or measures the
// process, or changes its working directory. CAIRN_E2E_PROCESS=1 runs every test
// against the binary.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/coretest"
)

// testVersion is linked into the test binary, so `cairn version` and the start-up line
// are predictable.
const testVersion = "0.0.0-e2e"

// cairnBin is the path of the binary under test.
var cairnBin string

// allProcesses is set by CAIRN_E2E_PROCESS=1: every server runs as a child process.
var allProcesses = os.Getenv("CAIRN_E2E_PROCESS") == "1"

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden")

func TestMain(m *testing.M) {
	flag.Parse()
	buildVersion = testVersion // what the binary is linked with, for in-process servers
	os.Exit(runTests(m))
}

// runTests builds the binary (plainly: the race detector runs in the test process, and
// in the servers that run there) for the tests that need a process, and runs the tests.
// CAIRN_E2E_BINARY=path uses a binary built elsewhere instead (with
// CAIRN_E2E_PROCESS=1, for every test).
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	cairnBin = filepath.Join(dir, "cairn") // the docs examples find it on PATH as cairn
	if bin := os.Getenv("CAIRN_E2E_BINARY"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err == nil {
			err = os.Symlink(abs, cairnBin)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: CAIRN_E2E_BINARY:", err)
			return 1
		}
		return m.Run()
	}
	cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.buildVersion="+testVersion, "-o", cairnBin, ".")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building cairn:", err)
		return 1
	}
	return m.Run()
}

// syncBuffer is a goroutine-safe output capture.
type syncBuffer = coretest.LogBuffer

// serverOpts describes how to run the child.
type serverOpts struct {
	// args are extra flags. Unless raw is set, --kv-listen 127.0.0.1:0 and --data-dir
	// (dataDir, or a fresh temporary directory) come first.
	args []string
	// env is added to the child's environment (which is otherwise cleared of CAIRN_*).
	env []string
	// dataDir, if set, is the data directory to use.
	dataDir string
	// raw passes args as they are (no --kv-listen / --data-dir).
	raw bool
	// dir is the child's working directory ("" = the test's).
	dir string
	// tlsRoots, when set, are the roots the harness trusts talking to a child that
	// serves TLS (started with --kv-tls-cert or --s3-tls-cert).
	tlsRoots *x509.CertPool
	// process runs the real binary as a child process instead of in the test's
	// process: for tests that signal (other than a graceful stop), kill or measure the
	// process, or compile WebAssembly modules under tight timeouts (see inProcess for
	// the cases that imply it).
	process bool
	// wrap, when set, is a command prefix the process runs under (e.g. `ip netns exec
	// NS`, which execs the binary in the same process).
	wrap []string
	// startTimeout bounds the wait for the server to say where it listens (default
	// 20 s; a cluster node waits for its peers first).
	startTimeout time.Duration
}

// inProcess says whether a server described by o runs in the test's process: unless
// the test asks for a process, gives a working directory, or sets variables other than
// CAIRN_* ones (which only the configuration reads; others reach the standard library,
// TLS roots for one, and plugin processes only through a process's environment).
func (o serverOpts) inProcess() bool {
	if o.process || o.dir != "" || o.wrap != nil || allProcesses {
		return false
	}
	for _, kv := range o.env {
		if !strings.HasPrefix(kv, "CAIRN_") {
			return false
		}
	}
	return true
}

// child is one running server process.
type child struct {
	t       testing.TB
	opts    serverOpts
	DataDir string
	Addr    string // host:port
	URL     string // http://host:port
	// S3Addr is where the object-storage interface listens (host:port; "" if not served),
	// S3URL its base URL (http:// or https://).
	S3Addr string
	S3URL  string

	// tlsClients are the TLS variants of the harness's clients (see client).
	tlsMu      sync.Mutex // guards tlsClients
	tlsClients map[*http.Client]*http.Client

	cmd     *exec.Cmd // the child process (nil in process)
	stdout  *syncBuffer
	stderr  *syncBuffer
	waited  chan struct{}
	waitErr error
	// stopRun ends an in-process server as SIGTERM ends the process (nil for a child
	// process); code is run's exit status, set before waited is closed.
	stopRun context.CancelFunc
	code    int
	copied  chan struct{} // closed once the server's standard output is drained
}

var (
	listenRE   = regexp.MustCompile(`key-value interface listening on (https?://(\S+))`)
	s3ListenRE = regexp.MustCompile(`object-storage interface listening on (https?://(\S+))`)
)

// startServer runs a server in the test's process with free ports, a fresh data
// directory and args, and waits until it says where it listens. It is stopped at the end
// of the test if the test did not stop it.
func startServer(t testing.TB, args ...string) *child {
	t.Helper()
	return startServerOpts(t, serverOpts{args: args})
}

// startProcess is startServer with the real binary as a child process, killed at the
// end of the test if the test did not stop it.
func startProcess(t testing.TB, args ...string) *child {
	t.Helper()
	return startServerOpts(t, serverOpts{args: args, process: true})
}

// privateTempDir is a fresh temporary directory, 0700 as docs/operating.md asks of a
// data directory (t.TempDir's follow the umask, and cairn serve warns about 0755).
func privateTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startServerOpts(t testing.TB, o serverOpts) *child {
	t.Helper()
	if o.dataDir == "" && !o.raw {
		o.dataDir = privateTempDir(t)
	}
	s := &child{t: t, opts: o, DataDir: o.dataDir}
	if err := s.start(); err != nil {
		t.Fatalf("starting cairn: %v", err)
	}
	return s
}

// argvFor is the command line (without the program name) of a server described by o.
func argvFor(o serverOpts) []string {
	var argv []string
	if !o.raw {
		argv = append(argv, "--kv-listen", "127.0.0.1:0", "--s3-listen", "127.0.0.1:0", "--data-dir", o.dataDir)
	}
	return append(argv, o.args...)
}

// commandFor builds the child's command line and environment.
func commandFor(o serverOpts) *exec.Cmd {
	argv := append(append(append([]string(nil), o.wrap...), cairnBin), argvFor(o)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = childEnv(o.env)
	cmd.Dir = o.dir
	return cmd
}

// childEnv is the test's environment without CAIRN_* variables, plus env.
func childEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// getenvFor is the environment an in-process run sees: childEnv's, as a lookup.
func getenvFor(env []string) func(string) string {
	return func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v
			}
		}
		if strings.HasPrefix(name, "CAIRN_") {
			return ""
		}
		return os.Getenv(name)
	}
}

// runCairn runs a command to completion (for commands that exit by themselves) and
// returns its exit code and output. It runs in process unless o asks for a process or
// the command is hook (which may read the standard input).
func runCairn(t testing.TB, o serverOpts) (code int, stdout, stderr string) {
	t.Helper()
	o.raw = true
	if o.inProcess() && (len(o.args) == 0 || o.args[0] != "hook") {
		return runInProcess(t, o)
	}
	cmd := commandFor(o)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("running cairn: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("cairn %v did not exit within 20s\n%s%s", o.args, out.String(), errb.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("cairn %v: %v", o.args, err)
	}
	return code, out.String(), errb.String()
}

// runInProcess is runCairn in the test's process: run with a context cancelled after
// 20 s, as the process would be killed.
func runInProcess(t testing.TB, o serverOpts) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, argvFor(o), getenvFor(o.env), &out, &errb) }()
	select {
	case code = <-done:
	case <-ctx.Done():
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("cairn %v did not return within 20s of its cancellation\n%s%s", o.args, out.String(), errb.String())
		}
	}
	return code, out.String(), errb.String()
}

// start runs the server (in process or as a child) and waits until it says where it
// listens.
func (s *child) start() error {
	s.stdout, s.stderr = &syncBuffer{}, &syncBuffer{}
	s.waited = make(chan struct{})
	addr := make(chan string, 1)
	var pipe io.Reader
	if s.opts.inProcess() {
		pipe = s.runInProcess()
	} else {
		var err error
		if pipe, err = s.startProcess(); err != nil {
			return err
		}
	}
	var s3addr, kvURL, s3URL string // written by the scanner before it sends on addr
	copied := s.copied
	go func() {
		// The server is ready once it has printed both where it listens and where it
		// stores.
		sc := bufio.NewScanner(pipe)
		listen, sent := "", false
		for sc.Scan() {
			line := sc.Text()
			s.stdout.Write([]byte(line + "\n"))
			if m := listenRE.FindStringSubmatch(line); m != nil && listen == "" {
				listen, kvURL = m[2], m[1]
			}
			if m := s3ListenRE.FindStringSubmatch(line); m != nil && s3addr == "" {
				s3addr, s3URL = m[2], m[1]
			}
			if listen != "" && !sent && strings.HasPrefix(line, "cairn: data directory ") {
				addr <- listen
				sent = true
			}
		}
		_, _ = io.Copy(s.stdout, pipe)
		close(copied)
	}()
	startTimeout := cmp.Or(s.opts.startTimeout, 20*time.Second)
	waited := s.waited
	s.t.Cleanup(func() {
		select {
		case <-waited:
		default:
			s.end()
			<-waited
		}
	})
	select {
	case a := <-addr:
		s.Addr, s.S3Addr = a, s3addr
		s.URL, s.S3URL = kvURL, s3URL
		return nil
	case <-s.waited:
		err := s.waitErr // a process's
		if s.cmd == nil {
			err = fmt.Errorf("exit status %d", s.code)
		}
		return fmt.Errorf("exited before listening (%w)\n%s", err, s.output())
	case <-time.After(startTimeout):
		s.end()
		<-s.waited
		return fmt.Errorf("did not print its address within %v\n%s", startTimeout, s.output())
	}
}

// startProcess starts the child process and returns its standard output. A goroutine
// waits for the process once the output is drained, then closes waited.
func (s *child) startProcess() (io.Reader, error) {
	s.cmd = commandFor(s.opts)
	s.cmd.Stderr = s.stderr
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.stopRun = nil
	copied := make(chan struct{})
	s.copied = copied
	go func() {
		<-copied // Wait must not run before the pipe is drained
		s.waitErr = s.cmd.Wait()
		close(s.waited)
	}()
	return pipe, nil
}

// runInProcess runs the server in a goroutine of the test's process and returns its
// standard output. Cancelling stopRun stops it as SIGTERM stops the process; waited is
// closed once run has returned and its output is drained.
func (s *child) runInProcess() io.Reader {
	ctx, cancel := context.WithCancel(context.Background())
	s.cmd, s.stopRun = nil, cancel
	pr, pw := io.Pipe()
	copied := make(chan struct{})
	s.copied = copied
	argv, getenv := append([]string{"serve"}, argvFor(s.opts)...), getenvFor(s.opts.env)
	go func() {
		code := run(ctx, argv, getenv, pw, s.stderr)
		pw.Close()
		<-copied
		s.code = code
		cancel()
		close(s.waited)
	}()
	return pr
}

// end stops the server at once: SIGKILL for a process, cancellation in process.
func (s *child) end() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		return
	}
	s.stopRun()
}

// output returns the child's stdout and stderr so far, for failure messages.
func (s *child) output() string {
	return "--- stdout:\n" + s.stdout.String() + "--- stderr:\n" + s.stderr.String()
}

// wait waits for the child to exit and returns its exit code.
func (s *child) wait(timeout time.Duration) (int, error) {
	select {
	case <-s.waited:
	case <-time.After(timeout):
		s.end()
		<-s.waited
		return -1, fmt.Errorf("did not exit within %v", timeout)
	}
	if s.cmd == nil {
		return s.code, nil
	}
	var ee *exec.ExitError
	if errors.As(s.waitErr, &ee) {
		return ee.ExitCode(), nil
	}
	if s.waitErr != nil {
		return -1, s.waitErr
	}
	return 0, nil
}

// Signal sends sig to the child and waits for it to exit, returning the exit code. In
// process, SIGTERM and SIGINT cancel run's context, as main does on those signals; other
// signals need a process (serverOpts.process).
func (s *child) Signal(sig os.Signal) int {
	s.t.Helper()
	switch {
	case s.cmd != nil:
		if err := s.cmd.Process.Signal(sig); err != nil {
			s.t.Fatalf("signal %v: %v", sig, err)
		}
	case sig == syscall.SIGTERM || sig == os.Interrupt:
		s.stopRun()
	default:
		s.t.Fatalf("signal %v needs a server process (serverOpts.process)", sig)
	}
	code, err := s.wait(20 * time.Second)
	if err != nil {
		s.t.Fatalf("after %v: %v\n%s", sig, err, s.output())
	}
	return code
}

// Stop shuts the child down with SIGTERM and checks the graceful exit: status 0 and
// "cairn: stopped".
func (s *child) Stop() {
	s.t.Helper()
	if code := s.Signal(syscall.SIGTERM); code != 0 {
		s.t.Fatalf("exit status %d after SIGTERM, want 0\n%s", code, s.output())
	}
	if !strings.Contains(s.stdout.String(), "cairn: stopped\n") {
		s.t.Fatalf("no \"cairn: stopped\" after SIGTERM\n%s", s.output())
	}
}

// Kill ends the child with SIGKILL (no chance to close the store). It needs a process
// (serverOpts.process).
func (s *child) Kill() {
	s.t.Helper()
	if s.cmd == nil {
		s.t.Fatal("Kill needs a server process (serverOpts.process)")
	}
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatalf("kill: %v", err)
	}
	_, _ = s.wait(20 * time.Second)
}

// Restart starts a new child on the same data directory and flags (on a new free port).
// The current child must have exited.
func (s *child) Restart() {
	s.t.Helper()
	select {
	case <-s.waited:
	default:
		s.t.Fatal("Restart: the server is still running")
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("restarting cairn: %v", err)
	}
}

// ---------------------------------------------------------------------------------------
// HTTP helpers

// httpClient does not ask for gzip, so responses are seen as the server framed them.
var httpClient = &http.Client{
	Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64},
	Timeout:   30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// client returns c, or for a child serving TLS a client like c (its own connection
// pool) that trusts the child's certificates.
func (s *child) client(c *http.Client) *http.Client {
	if s.opts.tlsRoots == nil {
		return c
	}
	s.tlsMu.Lock()
	defer s.tlsMu.Unlock()
	if s.tlsClients == nil {
		s.tlsClients = map[*http.Client]*http.Client{}
	}
	if tc, ok := s.tlsClients[c]; ok {
		return tc
	}
	tc := *c
	tr := c.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = s.tlsConfig()
	tc.Transport = tr
	s.tlsClients[c] = &tc
	return &tc
}

// tlsConfig is the client TLS configuration trusting the child's certificates.
func (s *child) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: s.opts.tlsRoots, MinVersion: tls.VersionTLS12}
}

// resp is a completed response.
type resp = coretest.Response

// hdr is a list of request headers: name, value, name, value...
type hdr = coretest.Hdr

// do sends a request and reads the whole response. Every response is checked for the
// framing rule of the interface: a non-streamed response carries Content-Length (204 and
// 304 excepted), never chunked encoding.
func (s *child) do(t testing.TB, method, path string, h hdr, body string) *resp {
	t.Helper()
	return s.send(t, coretest.NewRequest(t, method, s.URL+path, h, body))
}

func (s *child) send(t testing.TB, req *http.Request) *resp {
	t.Helper()
	r, err := s.trySend(t, req)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.output())
	}
	return r
}

// trySend is send without t.Fatal, for use from other goroutines than the test's.
func (s *child) trySend(t testing.TB, req *http.Request) (*resp, error) {
	return coretest.Send(t, s.client(httpClient), req)
}

// tryGet is a GET that reports transport errors instead of failing the test (for
// goroutines).
func (s *child) tryGet(t testing.TB, path string, h ...string) (*resp, error) {
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Add(h[i], h[i+1])
	}
	return s.trySend(t, req)
}

func (s *child) get(t testing.TB, path string, h ...string) *resp {
	t.Helper()
	return s.do(t, http.MethodGet, path, h, "")
}

// mustPut stores body with Content-Type text/plain (unless h sets one) and requires a 2xx.
func (s *child) mustPut(t testing.TB, path, body string, h ...string) *resp {
	t.Helper()
	if !coretest.HasHeader(h, "Content-Type") {
		h = append(h, "Content-Type", "text/plain")
	}
	r := s.do(t, http.MethodPut, path, h, body)
	if r.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: want 2xx, got\n%s", path, r)
	}
	return r
}

// setProps sets bucket properties (new URL form) and requires 204.
func (s *child) setProps(t testing.TB, bucket, propsJSON string) {
	t.Helper()
	r := s.do(t, http.MethodPut, "/buckets/"+bucket+"/props", hdr{"Content-Type", "application/json"}, `{"props":`+propsJSON+`}`)
	if r.StatusCode != http.StatusNoContent {
		t.Fatalf("set props of %s: %s", bucket, r)
	}
}

// expect checks a response's status and, when body is not nil, its exact body.
func expect(t testing.TB, r *resp, status int, body *string) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("want status %d, got\n%s", status, r)
	}
	if body != nil && string(r.Body) != *body {
		t.Fatalf("want body %q, got\n%s", *body, r)
	}
}

func ptr(s string) *string { return &s }

// expectHeader checks one response header's exact value ("" means absent).
func expectHeader(t testing.TB, r *resp, name, want string) {
	t.Helper()
	vs := r.Header.Values(name)
	got := strings.Join(vs, "\n")
	if got != want {
		t.Errorf("%s %s: header %s = %q, want %q", r.Request.Method, r.Request.URL.Path, name, got, want)
	}
}

// rawExchange sends request bytes as they are on a new connection and returns the
// response bytes as the server wrote them (the request should say Connection: close).
func rawExchange(t testing.TB, s *child, request string) string {
	t.Helper()
	return coretest.RawExchange(t, s.Addr, request)
}

// waitFor polls cond until it is true or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------------------------------
// Dialects and URL forms

// dialect is the name set a server writes.
type dialect struct {
	name   string // store or riak
	prefix string // /store or /riak
	hdr    string // X-Store- or X-Riak-
	tag    string // storetag or riaktag
}

var (
	dStore = dialect{"store", "/store", "X-Store-", "storetag"}
	dRiak  = dialect{"riak", "/riak", "X-Riak-", "riaktag"}
)

// other is the dialect the server does not write; requests use it to show that both name
// sets are accepted.
func (d dialect) other() dialect {
	if d.name == "riak" {
		return dStore
	}
	return dRiak
}

// form is one URL form of object and bucket-props addresses. Old forms exist with either
// prefix, and are answered in the prefix's names (see answer). The typed form addresses
// buckets of the bucket type e2eType, which servers started by forEachDialect have.
type form struct {
	name string
	old  bool
	in   string // old-form input prefix (/store or /riak)
	typ  string // typed form: the bucket type
}

// e2eType is a bucket type that behaves like the default type (allow_mult and
// dvv_enabled false), so that every object case runs unchanged in the typed form.
const (
	e2eType      = "e2e"
	e2eTypeProps = `{"allow_mult":false,"dvv_enabled":false}`
)

// answer is the dialect a request in form f with no other hint is answered in by a
// server whose --dialect is d: an old form's prefix names it, the other forms give no hint.
func (f form) answer(d dialect) dialect {
	switch f.in {
	case dStore.prefix:
		return dStore
	case dRiak.prefix:
		return dRiak
	}
	return d
}

var forms = []form{{name: "old-store", old: true, in: "/store"}, {name: "old-riak", old: true, in: "/riak"}, {name: "new"}, {name: "typed", typ: e2eType}}

// bucketBase is the path of a bucket in the new and typed forms.
func (f form) bucketBase(b string) string {
	if f.typ != "" {
		return "/types/" + f.typ + "/buckets/" + b
	}
	return "/buckets/" + b
}

// obj is the path of an object (bucket and key already encoded).
func (f form) obj(b, k string) string {
	if f.old {
		return f.in + "/" + b + "/" + k
	}
	return f.bucketBase(b) + "/keys/" + k
}

// bucketPost is where a keyless store POSTs.
func (f form) bucketPost(b string) string {
	if f.old {
		return f.in + "/" + b
	}
	return f.bucketBase(b) + "/keys"
}

func (f form) props(b string) string {
	if f.old {
		return f.in + "/" + b
	}
	return f.bucketBase(b) + "/props"
}

// outObj is the object path the server writes (Location, links) in dialect d.
func (f form) outObj(d dialect, b, k string) string {
	if f.old {
		return d.prefix + "/" + b + "/" + k
	}
	return f.bucketBase(b) + "/keys/" + k
}

// upLink is the rel="up" link of bucket b as the server writes it.
func (f form) upLink(d dialect, b string) string {
	if f.old {
		return "<" + d.prefix + "/" + b + `>; rel="up"`
	}
	return "<" + f.bucketBase(b) + `>; rel="up"`
}

// createType runs `cairn bucket-type create` on a data directory no server uses.
func createType(t testing.TB, dataDir, name, props string) {
	t.Helper()
	args := []string{"bucket-type", "create", name}
	if props != "" {
		args = append(args, props)
	}
	args = append(args, "--data-dir", dataDir)
	code, out, errOut := runCairn(t, serverOpts{args: args})
	if code != 0 || out != "bucket type "+name+" created\n" {
		t.Fatalf("cairn %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
	}
}

// startServerWithTypes creates bucket types (name → props JSON) in a fresh data
// directory, then starts a server on it with args.
func startServerWithTypes(t testing.TB, types map[string]string, args ...string) *child {
	t.Helper()
	dir := t.TempDir()
	for name, props := range types {
		createType(t, dir, name, props)
	}
	return startServerOpts(t, serverOpts{dataDir: dir, args: args})
}

// forEachDialect starts one server per dialect (with args and the bucket type e2eType)
// and runs fn for each as a parallel subtest.
func forEachDialect(t *testing.T, args []string, fn func(t *testing.T, s *child, d dialect)) {
	t.Helper()
	for _, d := range []dialect{dStore, dRiak} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			s := startServerWithTypes(t, map[string]string{e2eType: e2eTypeProps}, append([]string{"--dialect", d.name}, args...)...)
			fn(t, s, d)
		})
	}
}

// ---------------------------------------------------------------------------------------
// Streamed responses

// streamResp is a response read off the wire with its HTTP chunks kept apart, for the
// streamed formats whose clients parse each chunk on its own.
type streamResp struct {
	StatusCode int
	Header     http.Header
	// Chunks are the chunk payloads in order (without the terminating empty chunk);
	// nil when the response was not chunked.
	Chunks []string
	// Body is the whole decoded body.
	Body string
}

// stream sends a request over a fresh connection and reads the response, decoding
// chunked transfer encoding by hand so that chunk boundaries stay visible.
func (s *child) stream(t testing.TB, method, path string, h hdr) *streamResp {
	t.Helper()
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: " + s.Addr + "\r\n")
	for i := 0; i+1 < len(h); i += 2 {
		b.WriteString(h[i] + ": " + h[i+1] + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	raw := rawExchange(t, s, b.String())
	out, err := parseStreamResponse(raw, method == http.MethodHead)
	if err != nil {
		t.Fatalf("%s %s: %v\n%q", method, path, err, raw)
	}
	return out
}

// parseStreamResponse parses one raw HTTP/1.1 response.
func parseStreamResponse(raw string, head bool) (*streamResp, error) {
	br := bufio.NewReader(strings.NewReader(raw))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	var proto string
	out := &streamResp{}
	if _, err := fmt.Sscanf(line, "%s %d", &proto, &out.StatusCode); err != nil {
		return nil, fmt.Errorf("status line %q: %w", line, err)
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	out.Header = http.Header(mh)
	if head {
		return out, nil
	}
	if !strings.EqualFold(out.Header.Get("Transfer-Encoding"), "chunked") {
		rest, err := io.ReadAll(br)
		out.Body = string(rest)
		return out, err
	}
	out.Chunks = []string{}
	for {
		sz, err := tp.ReadLine()
		if err != nil {
			return nil, fmt.Errorf("chunk size: %w", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(sz, ";", 2)[0]), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("chunk size %q: %w", sz, err)
		}
		if n == 0 {
			return out, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("chunk body: %w", err)
		}
		if string(buf[n:]) != "\r\n" {
			return nil, fmt.Errorf("chunk not followed by CRLF")
		}
		out.Chunks = append(out.Chunks, string(buf[:n]))
		out.Body += string(buf[:n])
	}
}
