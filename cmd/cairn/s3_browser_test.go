package main

// End-to-end tests of S3 from a real browser (headless Chromium driven with chromedp)
// and through boto3: CORS (a page from another origin uploads and downloads with
// fetch and presigned URLs, allowed by a CORS rule and refused without one) and POST
// object (a real HTML form with a signed V4 policy and a file chosen in the browser).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cairnkv/cairn/core/s3api/sig"
)

// chromiumPath is Debian's chromium.
const chromiumPath = "/usr/bin/chromium"

// startChromium starts a headless Chromium for the test and returns a browser context
// (its first tab), cancelled and the browser stopped at the test's end. Without
// /usr/bin/chromium the test is skipped (failed under CAIRN_REQUIRE_TOOLCHAINS=1). The
// flags keep Chromium from reaching for the network (this machine's is closed) and
// let it run as root.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		msg := "chromium is not installed (Debian: apt-get install chromium)"
		if os.Getenv("CAIRN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal(msg + " and CAIRN_REQUIRE_TOOLCHAINS=1")
		}
		t.Skip(msg + "; skipping the browser test")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first call launches the browser, which lives as long as its context: no
	// timeout on it (chromedp's rule); the allocator's own start-up timeout bounds it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// pageServer is the web site a test's pages come from: another origin than Cairn's.
// It serves the HTML set for each path, and /done (a form's redirect target) shows
// its query.
type pageServer struct {
	*httptest.Server
	mu    sync.Mutex // guards pages
	pages map[string]string
}

func newPageServer(t *testing.T) *pageServer {
	p := &pageServer{pages: map[string]string{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/done" {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><p id="done">%s</p>`, template.HTMLEscapeString(r.URL.RawQuery))
			return
		}
		p.mu.Lock()
		page, ok := p.pages[r.URL.Path]
		p.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(p.Close)
	return p
}

// set serves page at path.
func (p *pageServer) set(path, page string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages[path] = page
}

// presign returns a presigned V4 URL of method on bucket/key, path style.
func presign(s *child, cred s3Cred, method, bucket, key string) string {
	path := "/" + bucket + "/" + s3Escape(key, true)
	sr := &sig.Request{Method: method, Host: s.S3Addr, RawPath: path, Header: http.Header{}}
	sig.PresignV4(sr, cred.KeyID, cred.Secret, "us-east-1", time.Now(), 10*time.Minute)
	return "http://" + s.S3Addr + path + "?" + sr.RawQuery
}

// fetchScript uploads body with a PUT to put, then downloads get, with fetch; it
// resolves to a JSON text: the statuses, the ETag the page could read and the body
// downloaded, or the error fetch rejected with.
const fetchScript = `(async () => {
  try {
    const put = await fetch(%q, {method: "PUT", body: %q, headers: {"Content-Type": "text/plain"}});
    const get = await fetch(%q);
    return JSON.stringify({put: put.status, etag: put.headers.get("ETag"), get: get.status, body: await get.text()});
  } catch (e) {
    return JSON.stringify({error: String(e)});
  }
})()`

// fetchResult is what fetchScript resolves to.
type fetchResult struct {
	Put  int    `json:"put"`
	Get  int    `json:"get"`
	ETag string `json:"etag"`
	Body string `json:"body"`
	Err  string `json:"error"`
}

// browserFetch runs fetchScript in the page at pageURL.
func browserFetch(t *testing.T, ctx context.Context, pageURL, put, body, get string) fetchResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(fetchScript, put, body, get), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch in the browser: %v", err)
	}
	var res fetchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("fetch result %q: %v", out, err)
	}
	return res
}

// TestS3Browser drives headless Chromium against Cairn from a page of another origin.
//
// fetch: with no CORS rule, and with a rule for another origin only, the page's
// cross-origin PUT is refused (fetch rejects: the preflight fails) and nothing is
// stored; with a rule for the page's origin (GET and PUT, any header, ETag exposed)
// the page uploads with a presigned PUT, reads the ETag, and downloads the object
// with a presigned GET.
//
// form: a real HTML form with a V4-signed policy (key prefix, ACL, metadata,
// redirect, size range) and a file chosen through chromedp's SetUploadFiles is
// submitted: the object lands under uploads/<file name> with the file's bytes and
// the form's Content-Type and metadata, and the browser follows the 303 to the page's /done
// with bucket, key and ETag. The same form with a file over the policy's
// content-length-range shows EntityTooLarge and stores nothing.
func TestS3Browser(t *testing.T) {
	ctx := startChromium(t)
	s := startS3Server(t)
	u := s3CreateUser(t, s, "browser@example.com", "Browser")
	owner := s3c{s: s, cred: u.cred(), sign: s3V4}
	pages := newPageServer(t)
	pages.set("/app", `<!doctype html><title>app</title>`)
	origin := pages.URL // http://127.0.0.1:<port>: another origin than Cairn's port

	t.Run("fetch", func(t *testing.T) {
		const b = "browser-cors"
		owner.mkBucket(t, b)
		cors := func(origin string) string {
			return `<CORSConfiguration><CORSRule><AllowedOrigin>` + origin + `</AllowedOrigin><AllowedMethod>GET</AllowedMethod>` +
				`<AllowedMethod>PUT</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader></CORSRule></CORSConfiguration>`
		}
		for _, c := range []struct{ name, rule string }{{"no rule", ""}, {"other origin", cors("http://elsewhere.example")}} {
			if c.rule != "" {
				owner.must(t, http.StatusOK, http.MethodPut, b, "", "cors", nil, c.rule)
			}
			key := "refused-" + strings.ReplaceAll(c.name, " ", "-")
			r := browserFetch(t, ctx, origin+"/app", presign(s, u.cred(), "PUT", b, key), "nope", presign(s, u.cred(), "GET", b, key))
			if r.Err == "" {
				t.Errorf("%s: fetch succeeded: %+v", c.name, r)
			}
			owner.must(t, http.StatusNotFound, http.MethodHead, b, key, "", nil, "")
		}
		owner.must(t, http.StatusOK, http.MethodPut, b, "", "cors", nil, cors(origin))
		const body = "uploaded by the browser"
		r := browserFetch(t, ctx, origin+"/app", presign(s, u.cred(), "PUT", b, "from-browser.txt"), body,
			presign(s, u.cred(), "GET", b, "from-browser.txt"))
		if r.Err != "" || r.Put != 200 || r.Get != 200 || r.Body != body || r.ETag != `"`+s3MD5Hex([]byte(body))+`"` {
			t.Fatalf("allowed fetch: %+v", r)
		}
		if got := owner.must(t, http.StatusOK, http.MethodGet, b, "from-browser.txt", "", nil, ""); string(got.Body) != body {
			t.Errorf("stored %q", got.Body)
		}
	})

	t.Run("form", func(t *testing.T) {
		const b = "browser-form"
		owner.mkBucket(t, b)
		dir := t.TempDir()
		small, large := filepath.Join(dir, "photo.txt"), filepath.Join(dir, "large.txt")
		const content = "bytes chosen in the browser\n"
		if err := os.WriteFile(small, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(large, bytes.Repeat([]byte("x"), 2048), 0o600); err != nil {
			t.Fatal(err)
		}
		pages.set("/form", uploadForm(t, s, u.cred(), b, origin+"/done", 1024))
		submit := func(file string) {
			t.Helper()
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			err := chromedp.Do(rctx, chromedp.Navigate(origin+"/form"), chromedp.WaitReady(chromedp.ID("file")),
				chromedp.SetUploadFiles(chromedp.ID("file"), []string{file}), chromedp.Click(chromedp.ID("go")))
			if err != nil {
				t.Fatalf("submit the form: %v", err)
			}
		}
		submit(small)
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(rctx, chromedp.WaitVisible(chromedp.ID("done"))); err != nil {
			t.Fatalf("the redirect after the upload: %v", err)
		}
		done, err := chromedp.Run(rctx, chromedp.Text(chromedp.ID("done")))
		if err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(rctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		q, qerr := url.ParseQuery(done)
		etag := `"` + s3MD5Hex([]byte(content)) + `"`
		if qerr != nil || !strings.HasPrefix(loc, origin+"/done?") || q.Get("bucket") != b || q.Get("key") != "uploads/photo.txt" || q.Get("etag") != etag {
			t.Fatalf("redirected to %s (query %q), want bucket, key uploads/photo.txt and etag %s", loc, done, etag)
		}
		got := owner.must(t, http.StatusOK, http.MethodGet, b, "uploads/photo.txt", "", nil, "")
		if string(got.Body) != content || got.Header.Get("X-Amz-Meta-Uploaded-By") != "chromium" ||
			!strings.HasPrefix(got.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("stored object:\n%s", got)
		}

		submit(large)
		var text string
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(text, "EntityTooLarge") && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			text, _ = chromedp.Run(rctx, chromedp.Evaluate[string](`document.documentElement ? document.documentElement.textContent : ""`))
		}
		if !strings.Contains(text, "EntityTooLarge") {
			t.Fatalf("the form over its content-length-range: page shows %q, want EntityTooLarge", text)
		}
		owner.must(t, http.StatusNotFound, http.MethodHead, b, "uploads/large.txt", "", nil, "")
	})
}

// uploadForm returns an HTML page with a POST object form for bucket, signed by cred
// (V4) with a policy allowing keys under uploads/, the private ACL, Content-Type
// text/plain, the x-amz-meta-uploaded-by field, the redirect and files of at most
// maxSize bytes.
func uploadForm(t *testing.T, s *child, cred s3Cred, bucket, redirect string, maxSize int) string {
	t.Helper()
	now := time.Now().UTC()
	credential := sig.Credential{KeyID: cred.KeyID, Date: now.Format("20060102"), Region: "us-east-1", Service: "s3"}
	fields := [][2]string{{"key", "uploads/${filename}"}, {"acl", "private"}, {"Content-Type", "text/plain"}, {"x-amz-meta-uploaded-by", "chromium"},
		{"success_action_redirect", redirect}, {"x-amz-algorithm", sig.AlgorithmV4}, {"x-amz-credential", credential.String()},
		{"x-amz-date", now.Format(sig.ISO8601Basic)}}
	conds := []any{map[string]string{"bucket": bucket}, []string{"starts-with", "$key", "uploads/"}, []any{"content-length-range", 0, maxSize}}
	for _, f := range fields[1:] {
		conds = append(conds, map[string]string{f[0]: f[1]})
	}
	doc, err := json.Marshal(map[string]any{"expiration": now.Add(10 * time.Minute).Format("2006-01-02T15:04:05.000Z"), "conditions": conds})
	if err != nil {
		t.Fatal(err)
	}
	policy := base64.StdEncoding.EncodeToString(doc)
	fields = append(fields, [2]string{"policy", policy}, [2]string{"x-amz-signature", sig.SignPostV4(cred.Secret, credential, policy)})
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><form id="f" method="post" enctype="multipart/form-data" action="http://%s/%s">`, s.S3Addr, bucket)
	for _, f := range fields {
		fmt.Fprintf(&b, `<input type="hidden" name="%s" value="%s">`, template.HTMLEscapeString(f[0]), template.HTMLEscapeString(f[1]))
	}
	b.WriteString(`<input type="file" id="file" name="file"><input type="submit" id="go" value="Upload"></form>`)
	return b.String()
}

// TestS3BrowserBoto3 runs testdata/boto3/browser.py (put/get/delete_bucket_cors, a
// preflight, generate_presigned_post posted with urllib3 under V4 and V2, a policy
// violation; see the script) against the server.
func TestS3BrowserBoto3(t *testing.T) {
	t.Parallel()
	py := boto3Python(t)
	s := startS3Server(t)
	u := s3CreateUser(t, s, "boto3-browser@example.com", "Boto3 Browser")
	runBoto3Script(t, py, s, u, "browser.py", "boto3-browser", "PASS boto3-browser")
}
