package kvapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestWriteProduced(t *testing.T) {
	a := &API{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	piece := bytes.Repeat([]byte("x"), 1000)
	for _, tc := range []struct {
		name   string
		pieces int
	}{{"empty", 0}, {"small", 3}, {"at the limit", bufferedBodyLimit / 1000}, {"over the limit", 3*bufferedBodyLimit/1000 + 7}} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			rec := httptest.NewRecorder()
			a.writeProduced(rec, httptest.NewRequest("GET", "/", nil), http.StatusOK, "application/json", func(emit func([]byte) error) error {
				calls++
				for i := 0; i < tc.pieces; i++ {
					if err := emit(piece); err != nil {
						return err
					}
				}
				return nil
			})
			want := tc.pieces * len(piece)
			if rec.Code != 200 || rec.Body.Len() != want || rec.Header().Get("Content-Length") != strconv.Itoa(want) {
				t.Fatalf("status %d, body %d bytes, Content-Length %q; want %d", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"), want)
			}
			wantCalls := 1
			if want > bufferedBodyLimit {
				wantCalls = 2
			}
			if calls != wantCalls {
				t.Errorf("produced %d times, want %d", calls, wantCalls)
			}
		})
	}

	t.Run("error before the headers", func(t *testing.T) {
		rec := httptest.NewRecorder()
		want := badRequest("nope\n")
		err := a.writeProduced(rec, httptest.NewRequest("GET", "/", nil), http.StatusOK, "application/json", func(emit func([]byte) error) error {
			return want
		})
		if !errors.Is(err, want) || rec.Body.Len() != 0 || len(rec.Header()) != 0 {
			t.Errorf("got %v, %d header fields and %q written; want the error returned and nothing written", err, len(rec.Header()), rec.Body)
		}
	})

	// A second pass that differs from the first cannot be sent as is: the connection is
	// aborted (the panic net/http turns into a dropped connection).
	for name, second := range map[string]int{"longer": 1, "shorter": -1} {
		t.Run("second pass "+name, func(t *testing.T) {
			calls := 0
			defer func() {
				if v := recover(); v == nil || !errors.Is(v.(error), http.ErrAbortHandler) {
					t.Errorf("recovered %v, want http.ErrAbortHandler", v)
				}
			}()
			a.writeProduced(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), http.StatusOK, "application/json", func(emit func([]byte) error) error {
				calls++
				n := bufferedBodyLimit/1000 + 10
				if calls == 2 {
					n += second
				}
				for i := 0; i < n; i++ {
					if err := emit(piece); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}
