// Package cairn is the Go guest SDK for Cairn hooks: extension functions written in Go,
// compiled to WebAssembly (GOOS=wasip1 GOARCH=wasm, -buildmode=c-shared) and run by the
// Cairn server under ABI v1 (see github.com/cairnkv/cairn/sdk/abi).
//
// A hook is a plain Go function of one extension point, wrapped by the constructor of
// that point:
//
//	var Validate = cairn.Precommit(func(in *cairn.CommitInput) cairn.Verdict { ... })
//
// Precommit, Postcommit, KeyFun, LinkFun, Map and Reduce return a Hook, which decodes
// the JSON input the host sends, calls the function and encodes its result. A module
// exports each hook with a one-line wrapper in a file built only for wasip1:
//
//	//go:build wasip1
//
//	package main
//
//	//go:wasmexport validate
//	func validate(input string) int32 { return Validate.Run(input) }
//
// The SDK itself exports the rest of the ABI (cairn_alloc and the cairn_abi_v1 marker)
// and imports the host's "cairn" functions, so a module's main package needs nothing
// else but an empty main function.
//
// Everything except Hook.Run is portable: the same hooks run natively under go test
// through the sdk/go/cairntest helper, which feeds them input exactly as the host does.
package cairn
