// Package wire holds the byte-level formats of the KV HTTP interface: URL quoting, the
// Link header, secondary-index and user-metadata headers, Content-Type, content
// negotiation, conditional requests, HTTP dates, multipart/mixed bodies, sibling lists,
// random identifiers and the exact text of the client-visible error messages.
//
// Everything here is a pure function of its arguments (the identifier generators excepted)
// and the package does not import net/http. Headers come in as plain strings or as a
// map[string][]string (an http.Header converts without copying), and go out as strings
// or (name, value) pairs. That keeps the reference behaviour, which is defined down to the
// byte, testable with table tests, golden files and fuzzing, with no server in the loop,
// and lets core/kvapi stay a thin translation layer. It also keeps the formats reusable by
// clients and test tools that speak the same wire protocol.
//
// Two naming dialects exist (see Dialect): the spec's neutral "store" names and the
// reference system's "riak" names. Parsers accept both; formatters use the dialect they
// are given.
//
// The reference behaviour is described in shared/spec/kv-http-details.md (§0 for the HTTP
// machinery, §2 and §3 for object fetch and store).
package wire
