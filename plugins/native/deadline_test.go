package native

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// TestBuiltinsHonourDeadline is the attack of a reduce over the most values a phase
// may hold (32 MiB: reduce_sort took 24 s of one core over them): every built-in that
// walks its values stops within moments of its context's end, with the context's
// error (not a failure of the function), and a sort stopped mid-way says so too.
func TestBuiltinsHonourDeadline(t *testing.T) {
	t.Parallel()
	const n = 1_000_000
	pairs, nums, strs := make([]json.RawMessage, n), make([]json.RawMessage, n), make([]json.RawMessage, n)
	for i := range n {
		k := strconv.Itoa((i * 7919) % 200_000)
		pairs[i], nums[i], strs[i] = json.RawMessage(`["`+k+`",1]`), json.RawMessage(k), json.RawMessage(`"`+k+`"`)
	}
	inputs := map[string][]json.RawMessage{"reduce_identity": pairs, "reduce_set_union": strs, "reduce_sort": strs,
		"reduce_sum": nums, "reduce_plist_sum": pairs, "reduce_count_inputs": strs, "reduce_string_to_integer": strs}
	list := json.RawMessage("[" + strings.TrimSuffix(strings.Repeat(`[1,{"a":2}],`, 200_000), ",") + "]")
	p := New()
	for _, mod := range []string{ModMapReduce, ModMapReduceStore} {
		for fun, vals := range inputs {
			impl, err := p.Lookup(mod, fun, hooks.PointReduce)
			if err != nil {
				t.Fatal(err)
			}
			// 20 ms is far less than any of them takes over a million values.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			start := time.Now()
			_, err = impl.(hooks.Reduce).Reduce(ctx, vals, nil)
			cancel()
			var ce *hooks.CallError
			// The bound is far below a full run (seconds to tens of seconds) and far above
			// the check interval: a loaded 2-core machine stretched a stop to 0.7 s once.
			if took := time.Since(start); err == nil && took > 20*time.Millisecond || took > 3*time.Second ||
				err != nil && (!errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ce)) {
				t.Errorf("%s:%s with a 20ms deadline: %v after %v", mod, fun, err, took)
			}
		}
		impl, err := p.Lookup(mod, "map_object_value_list", hooks.PointMap)
		if err != nil {
			t.Fatal(err)
		}
		obj := &core.Object{Bucket: "b", Key: "k", Siblings: []core.Sibling{{Value: list}}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := impl.(hooks.Map).Map(ctx, hooks.MapInput{Object: obj}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s:map_object_value_list, cancelled: %v", mod, err)
		}
	}

	// The sort itself stops: its context ends while it compares.
	terms, err := decodeAll(context.Background(), strs[:300_000])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := sortTerms(ctx, terms); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("a sort past its deadline: %v after %v", err, time.Since(start))
	}
	if err := sortTerms(context.Background(), terms[:1000]); err != nil {
		t.Fatal(err)
	}
}
