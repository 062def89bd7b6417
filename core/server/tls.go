package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// certificate is a listener's TLS certificate and key, read from PEM files at start
// and again by reload; connections get the one current at their handshake.
type certificate struct {
	name              string // the interface: kv or s3
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// loadCertificate reads an interface's certificate; nil (no TLS) when certFile is
// empty.
func loadCertificate(name, certFile, keyFile string) (*certificate, error) {
	if certFile == "" {
		return nil, nil
	}
	c := &certificate{name: name, certFile: certFile, keyFile: keyFile}
	if _, err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads the files again and, when they hold a valid pair, makes it current;
// otherwise the current certificate stays. It returns the new certificate's leaf.
func (c *certificate) reload() (*x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, fmt.Errorf("server: %s TLS certificate %s / key %s: %w", c.name, c.certFile, c.keyFile, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("server: %s TLS certificate %s: %w", c.name, c.certFile, err)
		}
	}
	c.cur.Store(&pair)
	return pair.Leaf, nil
}

// config returns the TLS configuration of a listener serving c (nil when c is nil):
// TLS 1.2 at least, HTTP/1.1, the current certificate at each handshake.
func (c *certificate) config() *tls.Config {
	if c == nil {
		return nil
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}
}

// ReloadTLS reads the TLS certificates and keys again (cmd/cairn calls it on SIGHUP).
// New connections get the new certificate; established ones keep theirs. A pair that
// cannot be loaded is logged and the current one kept; the errors are returned.
func (s *Server) ReloadTLS() error {
	var errs []error
	for _, c := range []*certificate{s.kvCert, s.s3Cert} {
		if c == nil {
			continue
		}
		leaf, err := c.reload()
		if err != nil {
			s.log.Error("TLS certificate not reloaded; the current one stays in use", "interface", c.name, "err", err)
			errs = append(errs, err)
			continue
		}
		s.log.Info("TLS certificate reloaded", "interface", c.name, "subject", leaf.Subject.String(),
			"serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter.Format(time.RFC3339))
		if time.Now().After(leaf.NotAfter) {
			s.log.Warn("the TLS certificate has expired", "interface", c.name, "not_after", leaf.NotAfter.Format(time.RFC3339))
		}
	}
	return errors.Join(errs...)
}
