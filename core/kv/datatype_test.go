package kv

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/datatype"
)

// dtService returns a service with a type per bucket-level kind ("maps", "sets", ...)
// and a plain type "plain".
func dtService(t *testing.T) *Service {
	t.Helper()
	s := newTestService(t, Config{})
	for _, k := range []string{"counter", "set", "map", "hll", "gset"} {
		if err := s.CreateType(ctx, k+"s", props(t, `{"datatype":"`+k+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateType(ctx, "plain", nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// dtUpdate parses body for the bucket's kind and applies it.
func dtUpdate(t *testing.T, s *Service, typ, key, body string) (DatatypeResult, error) {
	t.Helper()
	k, err := s.DatatypeKind(ctx, typ, "b")
	if err != nil {
		return DatatypeResult{}, err
	}
	op, err := datatype.ParseOp(k, []byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return s.DatatypeUpdate(ctx, typ, "b", key, op, PutOptions{})
}

func valueJSON(t *testing.T, r DatatypeResult) string {
	t.Helper()
	b, err := json.Marshal(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDatatypeUpdateFetch: updates through the write path, fetches, preconditions with
// Riak's status and text, and the refusals between plain and datatype buckets.
func TestDatatypeUpdateFetch(t *testing.T) {
	s := dtService(t)
	tests := []struct {
		typ, body, want string
		code            string // error code, "" for success
	}{
		{"counters", `5`, `5`, ""},
		{"counters", `{"decrement":2}`, `3`, ""},
		{"sets", `{"add_all":["b","a"]}`, `["a","b"]`, ""},
		{"sets", `{"remove":"a"}`, `["b"]`, ""},
		{"sets", `{"remove":"zz"}`, "Error:\n{precondition,{not_present,<<\"zz\">>}}\n", core.EPRECONDITION},
		{"maps", `{"update":{"n_counter":1,"t_set":{"add":"x"}}}`, `{"n_counter":1,"t_set":["x"]}`, ""},
		{"maps", `{"remove":["n_counter"]}`, `{"t_set":["x"]}`, ""},
		{"maps", `{"remove":["n_counter"]}`, "Error:\n{precondition,{not_present,{<<\"n\">>,riak_dt_emcntr}}}\n", core.EPRECONDITION},
		{"hlls", `{"add_all":["a","b","a"]}`, `2`, ""},
		{"gsets", `{"add":"g"}`, `["g"]`, ""},
		{"counters", `9223372036854775807`, "Counter value out of range: a counter holds a signed 64-bit integer\n", core.EINVALID},
	}
	for _, tt := range tests {
		r, err := dtUpdate(t, s, tt.typ, "k", tt.body)
		if tt.code != "" {
			if core.ErrorCode(err) != tt.code || core.ErrorMessage(err) != tt.want {
				t.Errorf("%s %s: error %q (%s), want %q (%s)", tt.typ, tt.body, core.ErrorMessage(err), core.ErrorCode(err), tt.want, tt.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tt.typ, tt.body, err)
		}
		if got := valueJSON(t, r); got != tt.want {
			t.Errorf("%s %s: value %s, want %s", tt.typ, tt.body, got, tt.want)
		}
		f, err := s.DatatypeFetch(ctx, tt.typ, "b", "k", GetOptions{})
		if err != nil || valueJSON(t, f) != tt.want || f.Context != r.Context {
			t.Errorf("%s: fetch %v %v, want %s", tt.typ, f, err, tt.want)
		}
	}
	if _, err := s.DatatypeFetch(ctx, "maps", "b", "missing", GetOptions{}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("missing key: %v", err)
	}
	if _, err := s.DatatypeKind(ctx, "plain", "b"); core.ErrorMessage(err) != "Bucket datatype 'undefined' is not a supported type.\n" {
		t.Errorf("datatype op into a plain bucket: %v", err)
	}
	_, err := s.Put(ctx, &PutRequest{Type: "maps", Bucket: "b", Key: "k", Value: core.Sibling{Value: []byte("x"), ContentType: "text/plain"}})
	if core.ErrorCode(err) != core.EINVALID {
		t.Errorf("plain write into a datatype bucket: %v", err)
	}
}

// TestDatatypeSiblingsMergeOnRead: a record holding two datatype siblings (as a cluster
// partition can leave) reads as their merge, and the next update replaces both.
func TestDatatypeSiblingsMergeOnRead(t *testing.T) {
	a, b := datatype.New(datatype.Set), datatype.New(datatype.Set)
	for i, v := range []*datatype.Data{&a, &b} {
		op, _ := datatype.ParseOp(datatype.Set, []byte(`{"add":"e`+strconv.Itoa(i)+`"}`))
		*v, _ = datatype.Apply(*v, op, datatype.Writer{Actor: "n" + strconv.Itoa(i)})
	}
	obj := &core.Object{Bucket: "b", Key: "k", Siblings: []core.Sibling{
		{Value: datatype.Marshal(a), ContentType: DatatypeContentType(datatype.Set), VTag: "1"},
		{Value: datatype.Marshal(b), ContentType: DatatypeContentType(datatype.Set), VTag: "2"},
	}}
	v, keep, err := datatypeOf(obj, datatype.Set)
	if err != nil || len(keep) != 0 {
		t.Fatal(err, keep)
	}
	if got, _ := json.Marshal(v.Value()); string(got) != `["e0","e1"]` {
		t.Errorf("merged siblings: %s", got)
	}
	obj.Siblings[1].Value = []byte{1, 2, 0xff}
	if _, _, err := datatypeOf(obj, datatype.Set); core.ErrorCode(err) != core.EINTERNAL {
		t.Errorf("corrupt sibling: %v", err)
	}
}

// TestDatatypeConcurrentClients: 32 clients × 100 mixed operations on one map key through
// the service's conditional write end with the value a sequential model predicts.
func TestDatatypeConcurrentClients(t *testing.T) {
	s := dtService(t)
	const clients, ops = 32, 100
	var wg sync.WaitGroup
	sums := make([]int64, clients)
	sets := make([][]string, clients)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < ops; i++ {
				body := `{"update":{"total_counter":` + strconv.Itoa(i%7-3) + `}}`
				if i%2 == 1 {
					e := strconv.Itoa(c) + "-" + strconv.Itoa(i)
					body = `{"update":{"s` + strconv.Itoa(c%4) + `_set":{"add":"` + e + `"}}}`
					sets[c] = append(sets[c], e)
				} else {
					sums[c] += int64(i%7 - 3)
				}
				op, err := datatype.ParseOp(datatype.Map, []byte(body))
				if err == nil {
					_, err = s.DatatypeUpdate(ctx, "maps", "b", "k", op, PutOptions{})
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	want := map[string]any{}
	var total int64
	for c := 0; c < clients; c++ {
		total += sums[c]
		name := "s" + strconv.Itoa(c%4) + "_set"
		l, _ := want[name].([]string)
		want[name] = append(l, sets[c]...)
	}
	for _, l := range want {
		sort.Strings(l.([]string))
	}
	want["total_counter"] = total
	got, err := s.DatatypeFetch(ctx, "maps", "b", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	if g := valueJSON(t, got); g != string(wb) {
		t.Errorf("final value\n%s\nwant\n%s", g, wb)
	}
}
