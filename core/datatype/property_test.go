package datatype

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"sync"
	"testing"
)

// randomOp returns a random, valid operation body for kind k over a small element space
// (so removes often hit), taking the context from v half the time.
func randomOp(r *rand.Rand, k Kind, v Data) string {
	elem := func() string { return string(rune('a' + r.Intn(4))) }
	ctx := ""
	if r.Intn(2) == 0 && v.Context() != nil {
		ctx = `,"context":"` + EncodeContext(v) + `"`
	}
	switch k {
	case Counter:
		return itoa(r.Intn(21) - 10)
	case Set:
		if r.Intn(3) == 0 {
			return `{"remove":"` + elem() + `"` + ctx + `}`
		}
		return `{"add":"` + elem() + `"}`
	case GSet, HLL:
		return `{"add":"` + elem() + `"}`
	default:
		return randomMapOp(r, elem, 2) + ctx
	}
}

// randomMapOp returns a map operation body without its closing brace.
func randomMapOp(r *rand.Rand, elem func() string, depth int) string {
	name := elem()
	switch n := r.Intn(8); {
	case n == 0:
		return `{"remove":["` + name + `_` + []string{"counter", "set", "flag", "register", "map"}[r.Intn(5)] + `"]`
	case n == 1:
		return `{"update":{"` + name + `_counter":` + itoa(r.Intn(7)-3) + `}`
	case n == 2:
		return `{"update":{"` + name + `_set":{"add":"` + elem() + `"}}`
	case n == 3:
		return `{"update":{"` + name + `_set":{"remove":"` + elem() + `"}}`
	case n == 4:
		return `{"update":{"` + name + `_flag":"` + []string{"enable", "disable"}[r.Intn(2)] + `"}`
	case n == 5:
		return `{"update":{"` + name + `_register":{"assign":"` + elem() + `"}}`
	case depth > 0:
		return `{"update":{"` + name + `_map":` + randomMapOp(r, elem, depth-1) + `}}`
	default:
		return `{"update":{"` + name + `_counter":1}`
	}
}

// closeOp completes a body randomOp built (map bodies lack their closing brace).
func closeOp(k Kind, body string) string {
	if k == Map {
		return body + "}"
	}
	return body
}

// step applies a random operation on replica i; preconditions are skipped as a client
// would see them refused.
func step(t *testing.T, r *rand.Rand, k Kind, v Data, actor string, clock *int64) Data {
	t.Helper()
	body := closeOp(k, randomOp(r, k, v))
	op, err := ParseOp(k, []byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	*clock++
	out, err := Apply(v, op, Writer{Actor: actor, Micros: *clock})
	var pe *PreconditionError
	if errors.As(err, &pe) {
		return v
	}
	if err != nil {
		t.Fatalf("apply %s: %v", body, err)
	}
	return out
}

var allKinds = []Kind{Counter, Set, Map, HLL, GSet}

// TestConvergence: three replicas apply random operations and merge with one another
// in random order, with duplicated merges; afterwards every order of merging all three
// gives the same value and the same bytes.
func TestConvergence(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.String(), func(t *testing.T) {
			for seed := int64(1); seed <= 40; seed++ {
				r := rand.New(rand.NewSource(seed))
				reps := []Data{New(k), New(k), New(k)}
				actors := []string{"n1", "n2", "n3"}
				var clock int64
				for i := 0; i < 60; i++ {
					a := r.Intn(3)
					if r.Intn(3) == 0 {
						b := r.Intn(3)
						reps[a] = mustMerge(t, reps[a], reps[b])
						continue
					}
					reps[a] = step(t, r, k, reps[a], actors[a], &clock)
				}
				want := Marshal(mustMerge(t, mustMerge(t, reps[0], reps[1]), reps[2]))
				for _, p := range [][3]int{{2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}} {
					x := mustMerge(t, reps[p[0]], reps[p[1]])
					x = mustMerge(t, x, reps[p[1]]) // duplicated
					x = mustMerge(t, x, reps[p[2]])
					if got := Marshal(x); !bytes.Equal(got, want) {
						t.Fatalf("seed %d: order %v gives %s, want %s", seed, p, jsonOf(t, x), jsonOf(t, mustUnmarshal(t, want)))
					}
				}
			}
		})
	}
}

// TestMergeACI: merge is associative, commutative and idempotent on random states.
func TestMergeACI(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.String(), func(t *testing.T) {
			for seed := int64(1); seed <= 40; seed++ {
				r := rand.New(rand.NewSource(seed))
				var clock int64
				st := []Data{New(k), New(k), New(k)}
				for i := 0; i < 30; i++ {
					j := r.Intn(3)
					st[j] = step(t, r, k, st[j], []string{"x", "y", "z"}[j], &clock)
					if r.Intn(5) == 0 {
						st[j] = mustMerge(t, st[j], st[r.Intn(3)])
					}
				}
				a, b, c := st[0], st[1], st[2]
				eq := func(what string, x, y Data) {
					if !bytes.Equal(Marshal(x), Marshal(y)) {
						t.Fatalf("seed %d: %s: %s vs %s", seed, what, jsonOf(t, x), jsonOf(t, y))
					}
				}
				eq("commutative", mustMerge(t, a, b), mustMerge(t, b, a))
				eq("associative", mustMerge(t, mustMerge(t, a, b), c), mustMerge(t, a, mustMerge(t, b, c)))
				eq("idempotent", mustMerge(t, a, a), a)
				ab := mustMerge(t, a, b)
				eq("absorbs", mustMerge(t, ab, a), ab)
			}
		})
	}
}

// TestRoundTrip: every random state survives Marshal and Unmarshal byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, k := range allKinds {
		r := rand.New(rand.NewSource(7))
		var clock int64
		v := New(k)
		for i := 0; i < 200; i++ {
			v = step(t, r, k, v, []string{"p", "q"}[i%2], &clock)
			b := Marshal(v)
			back := mustUnmarshal(t, b)
			if !bytes.Equal(Marshal(back), b) {
				t.Fatalf("%s: round trip changed the bytes", k)
			}
		}
	}
}

func mustUnmarshal(t *testing.T, b []byte) Data {
	t.Helper()
	v, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// casStore is a single stored value with a revision, committed only if the revision
// read is current: the shape of core/storage's conditional commit.
type casStore struct {
	mu  sync.Mutex // guards b and rev
	b   []byte
	rev int
}

func (s *casStore) read() ([]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b, s.rev
}

func (s *casStore) commit(b []byte, rev int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev != s.rev {
		return false
	}
	s.b, s.rev = b, s.rev+1
	return true
}

// TestConcurrentClientsModel: 32 clients × 100 mixed operations on one map, each a read →
// apply → conditional commit retried on conflict, end with the value a sequential model
// predicts: counters sum, each client's set holds what it added, flags hold their last
// write per client, and the register holds the latest-stamped assignment.
func TestConcurrentClientsModel(t *testing.T) {
	const clients, ops = 32, 100
	store := &casStore{b: Marshal(New(Map))}
	var stamp sync.Mutex // guards next
	next := int64(0)
	var wg sync.WaitGroup
	type result struct {
		count   int64
		set     []string
		flag    bool
		flagged bool
		lastReg int64
		regVal  string
	}
	results := make([]result, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(c)))
			res := &results[c]
			for i := 0; i < ops; i++ {
				var body, assigned string
				switch r.Intn(4) {
				case 0:
					d := int64(r.Intn(11) - 5)
					res.count += d
					body = `{"update":{"total_counter":` + itoa(int(d)) + `}}`
				case 1:
					e := "c" + itoa(c) + "-" + itoa(i)
					res.set = append(res.set, e)
					body = `{"update":{"s` + itoa(c) + `_set":{"add":"` + e + `"}}}`
				case 2:
					res.flag, res.flagged = r.Intn(2) == 0, true
					body = `{"update":{"f` + itoa(c) + `_flag":"` + map[bool]string{true: "enable", false: "disable"}[res.flag] + `"}}`
				default:
					assigned = "c" + itoa(c) + "-" + itoa(i)
					body = `{"update":{"latest_register":{"assign":"` + assigned + `"}}}`
				}
				op, err := ParseOp(Map, []byte(body))
				if err != nil {
					t.Error(err)
					return
				}
				for {
					b, rev := store.read()
					v, err := Unmarshal(b)
					if err != nil {
						t.Error(err)
						return
					}
					stamp.Lock()
					next++
					ts := next
					stamp.Unlock()
					nv, err := Apply(v, op, Writer{Actor: "node" + itoa(c%3), Micros: ts})
					if err != nil {
						t.Error(err)
						return
					}
					if store.commit(Marshal(nv), rev) {
						if assigned != "" {
							res.lastReg, res.regVal = ts, assigned
						}
						break
					}
				}
			}
		}(c)
	}
	wg.Wait()
	b, _ := store.read()
	got := mustUnmarshal(t, b).Value().(map[string]any)
	var total, bestTS int64
	want := map[string]any{}
	for c, res := range results {
		total += res.count
		if res.set != nil {
			sorted := append([]string(nil), res.set...)
			sortStrings(sorted)
			want["s"+itoa(c)+"_set"] = sorted
		}
		if res.lastReg > bestTS {
			bestTS, want["latest_register"] = res.lastReg, res.regVal
		}
	}
	for c, res := range results {
		if res.flagged {
			want["f"+itoa(c)+"_flag"] = res.flag
		}
	}
	want["total_counter"] = total
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(wb, gb) {
		t.Errorf("final value\n%s\nwant\n%s", gb, wb)
	}
}
