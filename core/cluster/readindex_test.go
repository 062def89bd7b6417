package cluster

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestReadIndexRounds: reads that come while a round is in flight share the next
// round, whose request is sent after they came; every round is answered, errors too.
func TestReadIndexRounds(t *testing.T) {
	var ri readIndex
	var calls atomic.Int64
	release := make(chan uint64)
	fetch := func() (map[string]uint64, error) {
		calls.Add(1)
		seq := <-release
		if seq == 0 {
			return nil, errors.New("scripted failure")
		}
		return map[string]uint64{"S": seq}, nil
	}
	first, start := ri.join()
	if !start {
		t.Fatal("the first read did not start a round")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ri.run(first, fetch)
	}()
	// While the first round is in flight, 10 reads join one next round.
	var nexts []*readRound
	for range 10 {
		r, start := ri.join()
		if start || r == first {
			t.Fatal("a read joined the round in flight, or started another")
		}
		nexts = append(nexts, r)
	}
	for _, r := range nexts[1:] {
		if r != nexts[0] {
			t.Fatal("reads that came during one round wait for different rounds")
		}
	}
	release <- 5 // the first round's answer
	<-first.done
	if first.seqs["S"] != 5 || first.err != nil {
		t.Fatalf("first round: %v %v", first.seqs, first.err)
	}
	select {
	case <-nexts[0].done:
		t.Fatal("the next round was answered by the first round's request")
	default:
	}
	release <- 0 // the second round fails
	<-nexts[0].done
	if nexts[0].err == nil {
		t.Fatal("the second round's failure was not reported")
	}
	wg.Wait()
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d requests for 11 reads in two rounds, want 2", n)
	}
	// Nothing in flight now: the next read starts a round again.
	if r, start := ri.join(); !start {
		t.Fatal("no round started after the others ended")
	} else {
		ri.fail(r, errClosed)
		if !errors.Is(r.err, errClosed) {
			t.Fatalf("failed round: %v", r.err)
		}
	}
}

func TestLedStreamsEncoding(t *testing.T) {
	in := map[string]uint64{"CAIRN_META": 0, "CAIRN_P0R3": 18446744073709551615, "CAIRN_P7R1": 42}
	out, err := decodeLedStreams(encodeLedStreams(in))
	if err != nil || len(out) != len(in) {
		t.Fatalf("round trip: %v %v", out, err)
	}
	for k, v := range in {
		if out[k] != v {
			t.Fatalf("round trip: %v, want %v", out, in)
		}
	}
	if got, err := decodeLedStreams(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty answer: %v %v", got, err)
	}
	for _, bad := range []string{"CAIRN_P0R3\n", "CAIRN_P0R3 x\n", "CAIRN_P0R3 -1\n", "A 1 2\n"} {
		if _, err := decodeLedStreams([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
