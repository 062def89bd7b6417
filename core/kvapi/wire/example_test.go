package wire_test

import (
	"fmt"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/kvapi/wire"
)

func ExampleFormatLinks() {
	links := []core.Link{{Bucket: "b", Key: "k2", Tag: "tag1"}}
	h := wire.FormatLinks(links, wire.APIOld, wire.DialectRiak, core.DefaultType, "b")
	fmt.Println(h)
	// A client may send the header straight back on a PUT: the up link is dropped.
	back, err := wire.ParseLinks(h, wire.APIOld, core.DefaultType, "b")
	fmt.Println(back, err)
	// Output:
	// </riak/b/k2>; riaktag="tag1", </riak/b>; rel="up"
	// [{b k2 tag1}] <nil>
}

func ExampleNegotiate() {
	accept := "multipart/mixed,application/json;q=0.7, */*;q=0.5"
	fmt.Println(wire.Negotiate(accept, []string{"text/plain", "multipart/mixed"}))
	fmt.Println(wire.Negotiate(accept, []string{"text/plain"}))
	fmt.Println(wire.Negotiate("application/json", []string{"text/plain"}))
	// Output:
	// multipart/mixed true
	// text/plain true
	//  false
}

func ExampleParseIndexHeaders() {
	_, err := wire.ParseIndexHeaders(map[string][]string{
		"X-Riak-Index-Foo":     {"1"},
		"X-Riak-Index-Age_int": {"abc"},
	}, wire.DialectRiak)
	fmt.Print(err)
	// Output:
	// Could not parse field 'age_int', value 'abc'.
	// Unknown field type for field: 'foo'.
}
