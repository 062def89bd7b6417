// Command emptyplugin serves a Mux with nothing registered: Serve must refuse it,
// saying why on standard error, with exit status 1.
package main

import "github.com/cairnkv/cairn/sdk/goplugin"

func main() {
	goplugin.Serve(goplugin.NewMux())
}
