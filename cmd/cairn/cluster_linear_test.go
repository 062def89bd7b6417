package main

// Linearizability of single keys across a 3-node cluster, checked with porcupine.
//
// What Cairn promises, and so what the model says: a key of a bucket without
// allow_mult is a register whose
//   - reads with r=quorum (the default r; any r > 1 or pr > 0 waits until the node's
//     replica has applied the key's latest stream sequence) return the value of the
//     latest write acknowledged before the read began, or of one concurrent with it;
//   - conditional writes (If-Match: the ETag read, or If-None-Match: * for a missing key,
//     with the clock read in X-Riak-Vclock) apply — atomically, once — exactly when the
//     version they name is current: 2xx when applied, 412 when not; a write that timed
//     out or failed otherwise may or may not have applied (at one point within its
//     interval).
//
// Not promised, so not in the model: reads with r=1 (a node's replica may lag; they are
// eventually consistent), and blind writes without a condition (newest wins, or siblings
// with allow_mult: there is no single register to linearize).
//
// Clients read on one node and write on another (as behind a load balancer), so a
// write's condition is checked against a replica that may not yet have applied the
// version the client read.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// regInput is one operation on a key: a read, or a write of value conditional on the
// key's current value being expect ("" = the key is missing; values are never empty).
type regInput struct {
	key    string
	write  bool
	expect string
	value  string
}

// regOutput is what an operation answered: a read's value ("" = not found); a write's
// outcome.
type regOutput struct {
	value   string
	outcome outcome
}

// registerModel is the model of one key, per the promise above.
var registerModel = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(regInput).key
			if by[k] == nil {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() []any { return []any{""} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(string), input.(regInput), output.(regOutput)
		if !in.write {
			if out.value == s {
				return []any{s}
			}
			return nil
		}
		matches := s == in.expect
		switch {
		case out.outcome == unknown && matches:
			return []any{in.value, s}
		case out.outcome == unknown, out.outcome == refused && !matches:
			return []any{s}
		case out.outcome == acked && matches:
			return []any{in.value}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		if !in.write {
			return fmt.Sprintf("read(%s) → %q", in.key, out.value)
		}
		return fmt.Sprintf("cas(%s, %q → %q) → %v", in.key, in.expect, in.value, []string{"ok", "412", "?"}[out.outcome])
	},
}

// TestRegisterModel checks the model on hand-made histories.
func TestRegisterModel(t *testing.T) {
	type op struct {
		call, ret int64
		in        regInput
		out       regOutput
	}
	rd := func(call, ret int64, v string) op {
		return op{call, ret, regInput{key: "k"}, regOutput{value: v}}
	}
	cas := func(call, ret int64, expect, value string, o outcome) op {
		return op{call, ret, regInput{key: "k", write: true, expect: expect, value: value}, regOutput{outcome: o}}
	}
	cases := []struct {
		name string
		ops  []op
		want porcupine.CheckResult
	}{
		{"empty key reads missing", []op{rd(0, 1, "")}, porcupine.Ok},
		{"create then read", []op{cas(0, 1, "", "a", acked), rd(2, 3, "a")}, porcupine.Ok},
		{"stale read after an acknowledged write", []op{cas(0, 1, "", "a", acked), rd(2, 3, "")}, porcupine.Illegal},
		{"read concurrent with the write sees either", []op{cas(0, 5, "", "a", acked), rd(1, 2, ""), rd(3, 4, "a")}, porcupine.Ok},
		{"reads go back in time", []op{cas(0, 5, "", "a", acked), rd(1, 2, "a"), rd(3, 4, "")}, porcupine.Illegal},
		{"chain of conditional writes", []op{cas(0, 1, "", "a", acked), cas(2, 3, "a", "b", acked), rd(4, 5, "b")}, porcupine.Ok},
		{"lost update: two writes from one version both applied", []op{cas(0, 1, "", "a", acked), cas(2, 5, "a", "b", acked), cas(3, 6, "a", "c", acked)}, porcupine.Illegal},
		{"one of two racing writes refused", []op{cas(0, 1, "", "a", acked), cas(2, 5, "a", "b", acked), cas(3, 6, "a", "c", refused), rd(7, 8, "b")}, porcupine.Ok},
		{"412 although the version was current", []op{cas(0, 1, "", "a", acked), cas(2, 3, "a", "b", refused)}, porcupine.Illegal},
		{"a refused write applied anyway", []op{cas(0, 1, "", "a", acked), cas(2, 3, "x", "b", refused), rd(4, 5, "b")}, porcupine.Illegal},
		{"unknown write applied", []op{cas(0, 1, "", "a", acked), cas(2, 100, "a", "b", unknown), rd(4, 5, "b")}, porcupine.Ok},
		{"unknown write not applied", []op{cas(0, 1, "", "a", acked), cas(2, 100, "a", "b", unknown), rd(4, 5, "a")}, porcupine.Ok},
		{"unknown write applied, then undone", []op{cas(0, 1, "", "a", acked), cas(2, 100, "a", "b", unknown), rd(4, 5, "b"), rd(6, 7, "a")}, porcupine.Illegal},
		{"a write whose condition never held cannot apply", []op{cas(0, 100, "z", "b", unknown), rd(4, 5, "b")}, porcupine.Illegal},
		{"create on an existing key acknowledged", []op{cas(0, 1, "", "a", acked), cas(2, 3, "", "b", acked)}, porcupine.Illegal},
	}
	model := registerModel.ToModel()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := make([]porcupine.Operation, len(c.ops))
			for i, o := range c.ops {
				h[i] = porcupine.Operation{ClientId: i, Input: o.in, Call: o.call, Output: o.out, Return: o.ret}
			}
			if got := porcupine.CheckOperationsTimeout(model, h, 10*time.Second); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// linearHistory collects the operations of the clients.
type linearHistory struct {
	start time.Time
	mu    sync.Mutex // guards ops
	ops   []porcupine.Operation
}

func (h *linearHistory) now() int64 { return int64(time.Since(h.start)) }

func (h *linearHistory) add(client int, in regInput, call int64, out regOutput, ret int64) {
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
}

func TestClusterLinearizable(t *testing.T) {
	requireClusterProcesses(t)
	c := startCluster(t, 3)
	t.Run("healthy", func(t *testing.T) { linearRun(t, c, "a", nil) })
	// A node stops answering for 3 s mid-history: requests to it time out (reads are
	// left out, writes become unknown) while the others go on.
	t.Run("node stopped", func(t *testing.T) {
		linearRun(t, c, "b", func() {
			time.Sleep(1500 * time.Millisecond)
			c.nodes[2].Pause()
			time.Sleep(3 * time.Second)
			c.nodes[2].Resume()
		})
	})
}

// linearRun runs the clients on keys named with prefix for a few seconds, with fault
// (if any) running beside them, and checks the history key by key.
func linearRun(t *testing.T, c *testCluster, prefix string, fault func()) {
	const (
		clients  = 6
		keys     = 3
		runFor   = 10 * time.Second
		maxOps   = 400                   // per client
		pace     = 10 * time.Millisecond // between a client's operations: the history spans the fault
		checkFor = 60 * time.Second
	)
	// A request the stopped node holds for longer than the client waits ends unknown.
	l := &clusterLoad{t: t, c: c, client: &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Second}}
	h := &linearHistory{start: time.Now()}
	deadline := time.Now().Add(runFor)
	var wg sync.WaitGroup
	for cl := 0; cl < clients; cl++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			linearClient(l, h, prefix, cl, keys, maxOps, pace, deadline)
		}()
	}
	if fault != nil {
		fault()
	}
	wg.Wait()
	// An operation of unknown outcome may take effect at any time after its call.
	end := h.now() + 1
	writes, reads, unknowns := 0, 0, 0
	for i := range h.ops {
		in, out := h.ops[i].Input.(regInput), h.ops[i].Output.(regOutput)
		switch {
		case !in.write:
			reads++
		case out.outcome == unknown:
			unknowns++
			h.ops[i].Return = end
			fallthrough
		default:
			writes++
		}
	}
	t.Logf("history: %d reads, %d conditional writes (%d of unknown outcome) on %d keys", reads, writes, unknowns, keys)
	if writes == 0 || reads == 0 {
		t.Fatalf("no history to check\n%s", c.nodeOutputs())
	}
	model := registerModel.ToModel()
	for _, ops := range registerModel.Partition(h.ops) {
		key := ops[0].Input.(regInput).key
		res, info := porcupine.CheckOperationsVerbose(model, ops, checkFor)
		switch res {
		case porcupine.Illegal:
			msg := ""
			if f, err := os.CreateTemp("", "cairn-linearizability-*.html"); err == nil {
				f.Close()
				if err := porcupine.VisualizePath(model, info, f.Name()); err == nil {
					msg = "visualization (kept): " + f.Name() + "\n"
				}
			}
			t.Errorf("key %s: history not linearizable; %s%s", key, msg, describeViolation(ops, info))
		case porcupine.Unknown:
			t.Logf("key %s: the checker did not finish within %v (no violation found)", key, checkFor)
		}
	}
}

// linearClient runs one client: reads with r=quorum on one random node, and writes
// conditional on what it read on another.
func linearClient(l *clusterLoad, h *linearHistory, prefix string, cl, keys, maxOps int, pace time.Duration, deadline time.Time) {
	type seen struct {
		value, etag, clock string
		ok                 bool
	}
	last := make([]seen, keys)
	rng := rand.New(rand.NewPCG(uint64(cl), 18))
	for i := 0; i < maxOps && time.Now().Before(deadline); i++ {
		time.Sleep(pace)
		k := rng.IntN(keys)
		key := fmt.Sprintf("%s%d", prefix, k)
		nd := l.c.nodes[rng.IntN(len(l.c.nodes))]
		if !last[k].ok || rng.IntN(2) == 0 {
			call := h.now()
			r, err := l.request(nd, http.MethodGet, "/buckets/cl-lin/keys/"+key+"?r=quorum", nil, "")
			ret := h.now()
			if err != nil || (r.StatusCode != http.StatusOK && r.StatusCode != http.StatusNotFound) {
				last[k].ok = false
				continue // a failed read has no effect: left out of the history
			}
			v := ""
			if r.StatusCode == http.StatusOK {
				v = string(r.Body)
			}
			last[k] = seen{v, r.Header.Get("ETag"), respClock(r), true}
			h.add(cl, regInput{key: key}, call, regOutput{value: v}, ret)
			continue
		}
		in := regInput{key: key, write: true, expect: last[k].value, value: fmt.Sprintf("v%d.%d", cl, i)}
		hd := hdr{"Content-Type", "text/plain"}
		if in.expect == "" {
			hd = append(hd, "If-None-Match", "*")
		} else {
			hd = append(hd, "If-Match", last[k].etag, "X-Riak-Vclock", last[k].clock)
		}
		call := h.now()
		r, err := l.request(nd, http.MethodPut, "/buckets/cl-lin/keys/"+key+"?w=quorum", hd, in.value)
		ret := h.now()
		h.add(cl, in, call, regOutput{outcome: classify(r, err)}, ret)
		last[k].ok = false // read again before the next write
	}
}

// describeViolation shows where the checker got stuck: the end of the longest order it
// found for the key's operations, and the operations (in call order) around the first
// one it could not place.
func describeViolation(ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	placed := map[porcupine.Operation]bool{}
	for _, op := range longest {
		placed[op] = true
	}
	sorted := append([]porcupine.Operation(nil), ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	stuck := len(sorted)
	for i, op := range sorted {
		if !placed[op] {
			stuck = i
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the longest order found places %d of %d operations, ending with:\n", len(longest), len(ops))
	for _, op := range longest[max(0, len(longest)-5):] {
		b.WriteString(describeOp(op))
	}
	b.WriteString("operations in call order around the first one it cannot place (*):\n")
	for i := max(0, stuck-15); i < min(len(sorted), stuck+15); i++ {
		mark := " "
		if i == stuck {
			mark = "*"
		}
		b.WriteString(mark + describeOp(sorted[i]))
	}
	return b.String()
}

// describeOp is one line for an operation.
func describeOp(op porcupine.Operation) string {
	return fmt.Sprintf(" [%d] %8.3fms..%8.3fms %s\n", op.ClientId, float64(op.Call)/1e6, float64(op.Return)/1e6,
		registerModel.DescribeOperation(op.Input, op.Output))
}
