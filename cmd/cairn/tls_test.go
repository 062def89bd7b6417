package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test: its pool is what the harness
// trusts, and it issues server certificates for 127.0.0.1.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cairn e2e CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue writes a server certificate for 127.0.0.1 with the given serial, and its key,
// as PEM files.
func (ca *testCA) issue(t *testing.T, certFile, keyFile string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kb)
}

// writePEM replaces path (through a rename, as a certificate renewal would) with one
// PEM block.
func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// servedSerial dials addr over TLS, offering HTTP/2 and HTTP/1.1, and returns the serial
// of the certificate served and the protocol chosen.
func servedSerial(t *testing.T, addr string, roots *x509.CertPool) (int64, string) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	defer c.Close()
	st := c.ConnectionState()
	return st.PeerCertificates[0].SerialNumber.Int64(), st.NegotiatedProtocol
}

// TestTLSListeners serves both interfaces over TLS: a KV PUT and GET and a signed S3
// request over HTTPS, plain HTTP refused, HTTP/1.1 only, the certificates reloaded on
// SIGHUP for new connections while an established one keeps working, and a bad
// certificate on reload logged and the current one kept.
func TestTLSListeners(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	dir := t.TempDir()
	kvCert, kvKey := filepath.Join(dir, "kv.pem"), filepath.Join(dir, "kv.key")
	s3Cert, s3Key := filepath.Join(dir, "s3.pem"), filepath.Join(dir, "s3.key")
	ca.issue(t, kvCert, kvKey, 101)
	ca.issue(t, s3Cert, s3Key, 201)
	s := startServerOpts(t, serverOpts{process: true /* SIGHUP */, tlsRoots: ca.pool, args: []string{"--dialect", "riak",
		"--kv-tls-cert", kvCert, "--kv-tls-key", kvKey, "--s3-tls-cert", s3Cert, "--s3-tls-key", s3Key}})
	if !strings.HasPrefix(s.URL, "https://") || !strings.HasPrefix(s.S3URL, "https://") {
		t.Fatalf("start-up lines: want https URLs\n%s", s.stdout.String())
	}

	// Both interfaces work over TLS.
	s.mustPut(t, "/buckets/tls/keys/k", "over tls")
	expect(t, s.get(t, "/buckets/tls/keys/k"), http.StatusOK, ptr("over tls"))
	admin := s3c{s: s, cred: s3AdminCred(t, s), sign: s3V4}
	admin.mkBucket(t, "tlsb")
	admin.put(t, "tlsb", "obj", "hello over tls")
	expect(t, admin.must(t, http.StatusOK, http.MethodGet, "tlsb", "obj", "", nil, ""), http.StatusOK, ptr("hello over tls"))

	// Plain HTTP is not served on a TLS listener; HTTP/2 is not negotiated.
	for _, addr := range []string{s.Addr, s.S3Addr} {
		if r, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/ping"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				t.Errorf("plain HTTP to %s answered 200", addr)
			}
		}
		if _, proto := servedSerial(t, addr, ca.pool); proto != "http/1.1" {
			t.Errorf("%s negotiated %q, want http/1.1", addr, proto)
		}
	}
	if n, _ := servedSerial(t, s.Addr, ca.pool); n != 101 {
		t.Fatalf("KV serves serial %d, want 101", n)
	}

	// An established connection, opened before the renewal.
	old, err := tls.Dial("tcp", s.Addr, &tls.Config{RootCAs: ca.pool})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	pingOn := func(c *tls.Conn) int {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatalf("ping on an established connection: %v", err)
		}
		r, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("ping on an established connection: %v", err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	if st := pingOn(old); st != http.StatusOK {
		t.Fatalf("ping: %d", st)
	}

	// Renewal: new files, SIGHUP, new connections get the new certificates.
	ca.issue(t, kvCert, kvKey, 102)
	ca.issue(t, s3Cert, s3Key, 202)
	hangup(t, s, "TLS certificate reloaded", 2)
	if n, _ := servedSerial(t, s.Addr, ca.pool); n != 102 {
		t.Errorf("KV serves serial %d after the reload, want 102", n)
	}
	if n, _ := servedSerial(t, s.S3Addr, ca.pool); n != 202 {
		t.Errorf("S3 serves serial %d after the reload, want 202", n)
	}
	if st := pingOn(old); st != http.StatusOK || old.ConnectionState().PeerCertificates[0].SerialNumber.Int64() != 101 {
		t.Errorf("the established connection: ping %d, serial %v", st, old.ConnectionState().PeerCertificates[0].SerialNumber)
	}

	// A bad certificate on reload: logged, the current one kept.
	if err := os.WriteFile(kvCert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	hangup(t, s, "TLS certificate not reloaded", 1)
	if n, _ := servedSerial(t, s.Addr, ca.pool); n != 102 {
		t.Errorf("KV serves serial %d after a bad reload, want 102 still", n)
	}
	expect(t, s.get(t, "/buckets/tls/keys/k"), http.StatusOK, ptr("over tls"))
	assertServing(t, s)

	// A certificate that cannot be loaded at start stops the server with a message.
	code, _, errOut := runCairn(t, serverOpts{args: []string{"--data-dir", t.TempDir(), "--kv-listen", "127.0.0.1:0",
		"--s3-listen", "", "--kv-tls-cert", kvCert, "--kv-tls-key", kvKey}})
	if code != 1 || !strings.Contains(errOut, "kv TLS certificate") {
		t.Errorf("start with a bad certificate: exit %d, %q", code, errOut)
	}
}

// hangup sends SIGHUP and waits until the log has n more lines containing what.
func hangup(t *testing.T, s *child, what string, n int) {
	t.Helper()
	before := strings.Count(s.stderr.String(), what)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the log to say "+what, func() bool {
		return strings.Count(s.stderr.String(), what) >= before+n
	})
}
