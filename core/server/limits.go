package server

import (
	"github.com/cairnkv/cairn/core/httpx"
	"github.com/cairnkv/cairn/core/storage"
)

// defaultBodyMemory is the request-body memory budget when none is configured (or twice
// the largest value, when that is more).
const defaultBodyMemory = 256 << 20

// prepareHTTP loads the TLS certificates and sizes the request-body memory budget, and
// adds the HTTP limits' figures to /stats.
func (s *Server) prepareHTTP() error {
	var err error
	if s.kvCert, err = loadCertificate("kv", s.cfg.KVTLSCert, s.cfg.KVTLSKey); err != nil {
		return err
	}
	if s.s3Cert, err = loadCertificate("s3", s.cfg.S3TLSCert, s.cfg.S3TLSKey); err != nil {
		return err
	}
	if s.cfg.MaxBodyMemory == 0 {
		s.cfg.MaxBodyMemory = max(defaultBodyMemory, 2*s.cfg.MaxObjectSize)
	}
	s.bodyMemory = httpx.NewBodyMemory(s.cfg.MaxBodyMemory)
	s.stats.AddSource(s.httpStats)
	return nil
}

// httpStats are the figures of the HTTP limits for /stats.
func (s *Server) httpStats() map[string]any {
	m := map[string]any{"kv_body_memory_bytes": s.bodyMemory.Used()}
	for name, l := range map[string]*httpx.ConnLimiter{"kv": s.kvLn, "s3": s.s3Ln} {
		if l == nil {
			continue
		}
		m[name+"_connections"] = l.Open()
		m[name+"_connections_active"] = l.Active()
		m[name+"_connections_displaced_total"] = l.Displaced()
		m[name+"_connections_refused_total"] = l.Refused()
	}
	return m
}

// bodyLimits are the request-body limits of an interface whose ReadBody calls charge
// mem (nil: none).
func (s *Server) bodyLimits(mem *httpx.BodyMemory) httpx.BodyLimits {
	return httpx.BodyLimits{ReadTimeout: s.cfg.BodyReadTimeout, MinRate: s.cfg.BodyMinRate, Memory: mem}
}

// fdReserve is the part of the open-file limit kept for everything but client
// connections: LevelDB's table cache, its journal and logs, blobs, plugins, modules.
const fdReserve = storage.DefaultOpenFilesCacheCapacity + 256

// connLimits returns the connection limits of each of n listeners, lowered (with a
// warning) to fit the open-file limit; see fitConnections.
func (s *Server) connLimits(n int) httpx.ConnLimits {
	lim := httpx.ConnLimits{PerIP: s.cfg.MaxConnectionsPerIP}
	files := openFileLimit()
	var lowered bool
	lim.Max, lowered = fitConnections(s.cfg.MaxConnections, n, files)
	if lowered {
		s.log.Warn("max-connections lowered to fit the open-file limit (raise it with ulimit -n or LimitNOFILE)",
			"max_connections", lim.Max, "configured", s.cfg.MaxConnections, "open_file_limit", files)
	}
	return lim
}

// fitConnections returns the connection limit of each of n listeners: max (0: none),
// lowered so that the n listeners' connections fit in the open-file limit files beside
// fdReserve — or, when the limit is smaller than twice that, in half of it — and whether
// it was lowered. files <= 0 means the limit is unknown. Running out of descriptors is
// what let half-sent requests stall every new connection: accept fails, and new
// connections wait in the kernel's queue.
func fitConnections(max, n int, files int64) (int, bool) {
	if files <= 0 {
		return max, false
	}
	room := files - fdReserve
	if room < files/2 {
		room = files / 2
	}
	room = room / int64(n)
	if room < 1 {
		room = 1
	}
	if max == 0 || int64(max) > room {
		return int(room), true
	}
	return max, false
}
