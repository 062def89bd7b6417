// Package hookspb is the generated Go code of hooks.proto, the process-plugin contract
// (cairn.hooks.v1): the messages and the gRPC Hooks service. Plugin authors use the
// typed API of package goplugin instead; the server's plugin host speaks these messages
// directly.
package hookspb
