package main

// Concurrency: 32 writers on one key under allow_mult=true. Writes without a clock must
// all survive as siblings; writes with the clock they read may only replace what they
// read. Both with and without dotted version vectors.

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

const concWriters = 32

// valuesOf reads a key and returns its values: none (404), one (200) or every sibling
// (300 multipart), and the clock to write with.
func valuesOf(t testing.TB, s *child, path string, d dialect) (values []string, clock string, err error) {
	r, err := s.tryGet(t, path, "Accept", "multipart/mixed, */*;q=0.1")
	if err != nil {
		return nil, "", err
	}
	clock = r.Header.Get(d.hdr + "Vclock")
	switch r.StatusCode {
	case http.StatusNotFound:
		return nil, clock, nil
	case http.StatusOK:
		return []string{string(r.Body)}, clock, nil
	case http.StatusMultipleChoices:
		parts, err := siblingParts(r)
		if err != nil {
			return nil, "", err
		}
		for _, p := range parts {
			values = append(values, p.body)
		}
		return values, clock, nil
	}
	return nil, "", fmt.Errorf("GET %s: %s", path, r)
}

// putValue stores value with an optional clock and reports whether it was acknowledged.
func putValue(t testing.TB, s *child, path, value, clock string, d dialect) error {
	req, err := http.NewRequest("PUT", s.URL+path, strings.NewReader(value))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain")
	if clock != "" {
		req.Header.Set(d.hdr+"Vclock", clock)
	}
	r, err := s.trySend(t, req)
	if err != nil {
		return err
	}
	if r.StatusCode != http.StatusNoContent {
		return fmt.Errorf("PUT %s: %s", path, r)
	}
	return nil
}

func TestConcurrentWritersKeepEverySibling(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	d := dStore
	buckets := map[string]string{
		"classic": `{"allow_mult":true}`,
		"dvv":     `{"allow_mult":true,"dvv_enabled":true}`,
	}
	for name, props := range buckets {
		s.setProps(t, "conc-"+name, props)
	}
	for name := range buckets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("blind", func(t *testing.T) {
				t.Parallel()
				const rounds = 2
				path := "/buckets/conc-" + name + "/keys/blind"
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := make(chan error, concWriters*rounds)
				var want []string
				for w := 0; w < concWriters; w++ {
					for r := 0; r < rounds; r++ {
						want = append(want, fmt.Sprintf("writer %02d round %d", w, r))
					}
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						<-start
						for r := 0; r < rounds; r++ {
							errs <- putValue(t, s, path, fmt.Sprintf("writer %02d round %d", w, r), "", d)
						}
					}(w)
				}
				close(start)
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				got, _, err := valuesOf(t, s, path, d)
				if err != nil {
					t.Fatal(err)
				}
				sort.Strings(got)
				sort.Strings(want)
				if strings.Join(got, "|") != strings.Join(want, "|") {
					t.Fatalf("siblings after %d blind writes: %d values\n got %q\nwant %q", len(want), len(got), got, want)
				}
				// The text/plain list names as many distinct vtags.
				r := s.get(t, path)
				expect(t, r, 300, nil)
				tags := siblingVTags(t, r)
				uniq := map[string]bool{}
				for _, v := range tags {
					uniq[v] = true
				}
				if len(tags) != len(want) || len(uniq) != len(want) {
					t.Errorf("%d vtags (%d distinct), want %d", len(tags), len(uniq), len(want))
				}
			})

			t.Run("read-modify-write", func(t *testing.T) {
				t.Parallel()
				// Every writer reads, then writes with the clock it read. A value may be
				// missing at the end only if an acknowledged write had read it.
				const rounds = 3
				path := "/buckets/conc-" + name + "/keys/rmw"
				type write struct {
					value string
					seen  []string
				}
				var (
					wg    sync.WaitGroup
					mu    sync.Mutex
					acked []write
				)
				start := make(chan struct{})
				errs := make(chan error, concWriters)
				for w := 0; w < concWriters; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						<-start
						for r := 0; r < rounds; r++ {
							seen, clock, err := valuesOf(t, s, path, d)
							if err != nil {
								errs <- err
								return
							}
							v := fmt.Sprintf("writer %02d round %d", w, r)
							if err := putValue(t, s, path, v, clock, d); err != nil {
								errs <- err
								return
							}
							mu.Lock()
							acked = append(acked, write{v, seen})
							mu.Unlock()
						}
					}(w)
				}
				close(start)
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				final, _, err := valuesOf(t, s, path, d)
				if err != nil {
					t.Fatal(err)
				}
				present := map[string]bool{}
				for _, v := range final {
					if present[v] {
						t.Errorf("value %q twice among the siblings", v)
					}
					present[v] = true
				}
				written, seenBy := map[string]bool{}, map[string]bool{}
				for _, w := range acked {
					written[w.value] = true
					for _, v := range w.seen {
						seenBy[v] = true
					}
				}
				for v := range present {
					if !written[v] {
						t.Errorf("sibling %q was never written", v)
					}
				}
				lost := 0
				for _, w := range acked {
					if !present[w.value] && !seenBy[w.value] {
						t.Errorf("acknowledged write %q is neither a sibling nor descended by a later write", w.value)
						lost++
					}
				}
				t.Logf("%d writes, %d siblings at the end, %d lost", len(acked), len(final), lost)
			})
		})
	}
}
