// Package datatype implements Riak's convergent data types (riak_dt) as pure values:
// the PN-counter, the OR-set without tombstones (add wins), the OR-map of embedded
// counters, flags, registers, sets and maps (keyed by name and type, with riak_dt_map's
// reset-remove semantics), the LWW register, the enable-wins flag, HyperLogLog
// (precision 14) and the grow-only set.
//
// Every type has a compact versioned binary encoding (Marshal, Unmarshal), a Merge that
// is associative, commutative and idempotent, operations applied by an actor (Apply, which
// never changes its receiver), Value in Riak's HTTP JSON form, and, for sets and maps, a
// causal context (Context) that removes take. ParseOp reads Riak's HTTP JSON operations.
//
// The package is a leaf: it imports only the standard library, so the KV service and a
// replica applying a replicated record compute the same values from the same bytes.
package datatype
