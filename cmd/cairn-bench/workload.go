package main

import (
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// workload is the request stream of a phase, described once and turned into either
// raw requests for the built-in generator or a wrk Lua script, so both send the same
// bytes.
type workload struct {
	Method string // GET or PUT
	Bucket string
	// KeyPrefix starts every key. With Keys > 0 a key is KeyPrefix and a random index
	// in [0, Keys) as 8 decimal digits (the populated keys); with Keys == 0 it is
	// KeyPrefix and 16 random hex digits (a new key each time).
	KeyPrefix string
	Keys      int
	// Sequential makes the built-in generator use the run's sequence number as the key
	// index instead of a random one (to populate keys 0..N-1 exactly once).
	Sequential bool
	DW         int // the dw query parameter, or -1 for none
	// Query holds further query parameters ("w=quorum"), after dw; "" for none.
	Query string
	// Bodies are the PUT bodies, all of one length; each request takes a random one, so
	// that neighbouring objects differ and LevelDB's block compression sees realistic
	// data rather than one value repeated.
	Bodies [][]byte
}

// raw returns the built-in generator's request function for w, sending Host: host.
func (w workload) raw(host string) RequestFunc {
	head := []byte(w.Method + " /buckets/" + w.Bucket + "/keys/" + w.KeyPrefix)
	tail := []byte(w.query())
	tail = append(tail, " HTTP/1.1\r\nHost: "+host+"\r\n"...)
	tails := [][]byte{append(tail, "\r\n"...)}
	if w.Method == http.MethodPut {
		tails = tails[:0]
		for _, body := range w.Bodies {
			t := append([]byte(nil), tail...)
			t = append(t, "Content-Type: application/octet-stream\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"...)
			tails = append(tails, append(t, body...))
		}
	}
	keys, seqKeys := w.Keys, w.Sequential
	return func(dst []byte, r *rand.Rand, seq int64) []byte {
		dst = append(dst, head...)
		switch {
		case seqKeys:
			dst = appendPadded(dst, uint64(seq), 8)
		case keys > 0:
			dst = appendPadded(dst, uint64(r.IntN(keys)), 8)
		default:
			dst = appendHex16(dst, r.Uint64()&0x7fffffff7fffffff)
		}
		if len(tails) == 1 {
			return append(dst, tails[0]...)
		}
		return append(dst, tails[r.IntN(len(tails))]...)
	}
}

// query is the request's query string with its "?" ("" without parameters).
func (w workload) query() string {
	var q []string
	if w.DW >= 0 {
		q = append(q, "dw="+strconv.Itoa(w.DW))
	}
	if w.Query != "" {
		q = append(q, w.Query)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + strings.Join(q, "&")
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	for n := len(b) - i; n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, b[i:]...)
}

func appendHex16(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[(v>>uint(shift))&0xf])
	}
	return dst
}

// makeValue returns n bytes of deterministic pseudo-random printable text (the
// base64 alphabet): it compresses about as badly as typical encoded data, and it can be
// embedded in a Lua string literal as is.
func makeValue(n int) []byte { return makeValues(1, n)[0] }

// makeValues returns count different values of n bytes each, as makeValue.
func makeValues(count, n int) [][]byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([][]byte, count)
	for i := range vs {
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		vs[i] = b
	}
	return vs
}

// bareHandler is the baseline: the least a net/http server can do for the same
// requests. GET answers 200 with body (Content-Type application/octet-stream and
// Content-Length, as large as Cairn's GET answer's body); PUT and POST read the whole
// request body and answer 204.
func bareHandler(body []byte) http.Handler {
	ct := []string{"application/octet-stream"}
	cl := []string{strconv.Itoa(len(body))}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			h := w.Header()
			h["Content-Type"] = ct
			h["Content-Length"] = cl
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body)
		case http.MethodPut, http.MethodPost:
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
}
