package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// WrkResult is what cairn-bench reads from wrk's report.
type WrkResult struct {
	Requests     int64         // "N requests in D"
	Elapsed      time.Duration // D
	RPS          float64       // "Requests/sec:"
	P50, P99     time.Duration // from --latency's distribution; zero when absent
	HasLatency   bool
	Non2xx       int64 // "Non-2xx or 3xx responses:"
	SocketErrors int64 // connect + read + write + timeout
}

var (
	wrkRequestsRe = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)\b`)
	wrkRPSRe      = regexp.MustCompile(`(?m)^Requests/sec:\s*([\d.]+)`)
	wrkPctRe      = regexp.MustCompile(`(?m)^\s*(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$`)
	wrkNon2xxRe   = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses:\s*(\d+)`)
	wrkSocketRe   = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk 4's text report. Requests/sec is required; the other lines are
// used when present.
func parseWrk(out string) (WrkResult, error) {
	var r WrkResult
	m := wrkRPSRe.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("wrk: no Requests/sec line in its output")
	}
	rps, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return r, fmt.Errorf("wrk: Requests/sec %q: %w", m[1], err)
	}
	r.RPS = rps
	if m := wrkRequestsRe.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
		r.Elapsed = wrkDuration(m[2], m[3])
	}
	for _, m := range wrkPctRe.FindAllStringSubmatch(out, -1) {
		d := wrkDuration(m[2], m[3])
		switch m[1] {
		case "50":
			r.P50 = d
		case "99":
			r.P99 = d
		}
		r.HasLatency = true
	}
	if m := wrkNon2xxRe.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSocketRe.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.SocketErrors += n
		}
	}
	return r, nil
}

// wrkDuration converts one of wrk's printed times ("812.00us", "1.23ms", "5.00s",
// "1.00m").
func wrkDuration(num, unit string) time.Duration {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	scale := map[string]float64{"us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}[unit]
	return time.Duration(f * scale)
}

// wrkVersion returns wrk's version line ("wrk 4.1.0 ..."), or "" when it cannot run.
func wrkVersion(path string) string {
	out, _ := exec.Command(path, "--version").CombinedOutput() // exits 1 after printing
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "wrk") {
		return ""
	}
	if i := strings.Index(line, " Copyright"); i > 0 {
		line = line[:i]
	}
	return line
}

// wrkMinRun is how long wrk runs at least before it is interrupted.
const wrkMinRun = 300 * time.Millisecond

// Wrk runs the wrk binary.
type Wrk struct {
	Path    string // the wrk executable
	Threads int    // wrk -t (at most the connection count)
	Dir     string // where scripts are written
}

// WrkRun is one wrk invocation.
type WrkRun struct {
	URL    string
	Conns  int
	Script string // Lua source
	// Duration is wrk's -d, rounded up to whole seconds (wrk takes integers). When Stop is
	// set, Duration is only an upper bound: closing Stop interrupts wrk (SIGINT), which
	// then reports the time it actually ran.
	Duration time.Duration
	Stop     <-chan struct{}
}

// Run runs wrk and parses its report.
func (w *Wrk) Run(ctx context.Context, run WrkRun) (WrkResult, error) {
	f, err := os.CreateTemp(w.Dir, "cairn-bench-*.lua")
	if err != nil {
		return WrkResult{}, err
	}
	script := f.Name()
	defer os.Remove(script)
	if _, err := f.WriteString(run.Script); err != nil {
		f.Close()
		return WrkResult{}, err
	}
	if err := f.Close(); err != nil {
		return WrkResult{}, err
	}
	threads := max(1, min(w.Threads, run.Conns))
	secs := int64((run.Duration + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(run.Conns),
		"-d", strconv.FormatInt(secs, 10) + "s", "--timeout", "10s", "--latency",
		"-s", script, run.URL}
	cmd := exec.CommandContext(ctx, w.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return WrkResult{}, fmt.Errorf("wrk: %w", err)
	}
	started := time.Now()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	if run.Stop != nil {
		select {
		case err = <-waitErr:
		case <-run.Stop:
			// wrk installs its SIGINT handler (which ends the run and prints the report)
			// once it has started; a signal before that would kill it silently.
			time.Sleep(wrkMinRun - time.Since(started))
			_ = cmd.Process.Signal(os.Interrupt)
			err = <-waitErr
		}
	} else {
		err = <-waitErr
	}
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk %s: %w: %s%s", strings.Join(args, " "), err,
			stderr.String(), lastLines(stdout.String(), 5))
	}
	res, err := parseWrk(stdout.String())
	if err != nil {
		return res, fmt.Errorf("%w: %s", err, lastLines(stdout.String(), 5))
	}
	return res, nil
}

func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// wrkScript returns a wrk Lua script that sends w's requests: the same method, path,
// headers and body as the built-in generator's requests for w.
func wrkScript(w workload) string {
	var b strings.Builder
	b.WriteString("-- generated by cairn-bench\n")
	fmt.Fprintf(&b, "wrk.method = %q\n", w.Method)
	body := "nil"
	if w.Method == "PUT" {
		b.WriteString("wrk.headers[\"Content-Type\"] = \"application/octet-stream\"\n")
		// The bodies are printable ASCII (random text or JSON documents): quoting
		// backslashes and double quotes makes them Lua string literals.
		b.WriteString("local bodies = {\n")
		for _, v := range w.Bodies {
			fmt.Fprintf(&b, "  \"%s\",\n", luaQuote.Replace(string(v)))
		}
		b.WriteString("}\n")
		body = "bodies[math.random(1, #bodies)]"
	}
	b.WriteString(`local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end
function init(args)
  math.randomseed(id * 7919 + os.time())
end
`)
	path := "/buckets/" + w.Bucket + "/keys/" + w.KeyPrefix
	query := w.query()
	if w.Keys > 0 {
		fmt.Fprintf(&b, `function request()
  return wrk.format(nil, string.format("%s%%08d%s", math.random(0, %d)), nil, %s)
end
`, path, query, w.Keys-1, body)
	} else {
		fmt.Fprintf(&b, `function request()
  return wrk.format(nil, string.format("%s%%08x%%08x%s", math.random(0, 2147483647), math.random(0, 2147483647)), nil, %s)
end
`, path, query, body)
	}
	return b.String()
}

// luaQuote escapes printable ASCII for a double-quoted Lua string.
var luaQuote = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// findWrk returns the path of wrk, or "" when it is not installed.
func findWrk() string {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
