// Package hookjson encodes and decodes the JSON of Cairn's hook ABI v1 (see sdk/abi and
// docs/abi.md): core.Object in the shape of the reference system's JavaScript object,
// the input of every extension point, and the outputs that are not plain bytes. It is on
// the write path of every put with a precommit hook, so it appends to caller-owned
// buffers and decodes with a small strict scanner instead of reflection.
package hookjson

import (
	"fmt"
	"strings"
)

// Metadata name prefixes of the two dialects.
const (
	PrefixStore = "X-Store-"
	PrefixRiak  = "X-Riak-"
)

// Codec encodes objects with one dialect's metadata names and decodes objects written
// in either. The zero Codec uses the "store" dialect.
type Codec struct {
	// Prefix is PrefixStore or PrefixRiak.
	Prefix string
}

// NewCodec returns the codec of a dialect: "store" (the default, also for "") or "riak".
func NewCodec(dialect string) (Codec, error) {
	switch strings.ToLower(dialect) {
	case "", "store":
		return Codec{Prefix: PrefixStore}, nil
	case "riak":
		return Codec{Prefix: PrefixRiak}, nil
	}
	return Codec{}, fmt.Errorf("hookjson: unknown dialect %q (want \"store\" or \"riak\")", dialect)
}

func (c Codec) prefix() string {
	if c.Prefix == "" {
		return PrefixStore
	}
	return c.Prefix
}
