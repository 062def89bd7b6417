// Package goplugin is the contract of Cairn's process plugins: extensions that run as
// separate programs, started and supervised by the server through
// hashicorp/go-plugin, and called over gRPC (the Hooks service of hookspb).
//
// A plugin is a Go program whose main calls Serve with a value that implements the
// extension points it offers (Precommitter, Postcommitter, KeyHasher, Linker, Mapper,
// Reducer); Mux builds such a value from plain functions. Bucket properties name its
// functions as they name WebAssembly functions: {"mod": NAME, "fun": F}, where NAME is
// the plugin's configured name ("plugin:NAME" pins the runtime).
//
// Standard output belongs to go-plugin's handshake: a plugin must never print to it.
// Standard error goes to the server's log, a line per entry.
package goplugin

import (
	"context"
	"math"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// ABIVersion is the version of the contract this package speaks, reported by Describe.
const ABIVersion = 1

// PluginName is the name of the one plugin every plugin process serves (go-plugin's
// plugin map key).
const PluginName = "hooks"

// Handshake is the go-plugin handshake of Cairn plugins. The magic cookie only stops a
// plugin from being run by hand by mistake; it is not a security control (the server
// checks each plugin's SHA-256 before starting it).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ABIVersion,
	MagicCookieKey:   "CAIRN_PLUGIN",
	MagicCookieValue: "8c1e5b1f0a7d4c2e9f3a6b5d4c3b2a19",
}

// GRPCPlugin is the go-plugin glue of the Hooks service. A plugin process sets Impl;
// the server's host leaves it nil and dispenses a hookspb.HooksClient.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the service the plugin process registers (nil on the host side).
	Impl hookspb.HooksServer
}

// GRPCServer implements plugin.GRPCPlugin: it registers the Hooks service.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	hookspb.RegisterHooksServer(s, p.Impl)
	return nil
}

// GRPCClient implements plugin.GRPCPlugin: it returns a hookspb.HooksClient.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return hookspb.NewHooksClient(c), nil
}

// PluginSet returns the plugin map of a Cairn plugin process or host: one plugin,
// PluginName, serving srv (nil on the host side).
func PluginSet(srv hookspb.HooksServer) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: srv}}
}

// ServeHooks serves a raw Hooks service implementation as a plugin process, for
// authors who want the protobuf messages themselves; most use Serve. It does not
// return until the server stops the plugin.
func ServeHooks(srv hookspb.HooksServer) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(srv),
		GRPCServer:      newGRPCServer,
	})
}

// MaxMessageSize is the largest gRPC message a plugin process receives (gRPC's own
// default is 4 MiB, less than an object may be). The server bounds what it sends by
// its object size limit; its own client should accept as much (GRPCDialOptions).
const MaxMessageSize = math.MaxInt32

// newGRPCServer is the gRPC server of a plugin process (and of the Harness): go-plugin's
// options plus the message size limits.
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts[:len(opts):len(opts)], grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize))
	return grpc.NewServer(opts...)
}

// GRPCDialOptions are the dial options a host's gRPC client of a plugin should use
// (go-plugin's ClientConfig.GRPCDialOptions): they raise the size of the messages it
// sends and receives to MaxMessageSize.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize))}
}
