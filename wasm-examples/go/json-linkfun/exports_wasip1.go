//go:build wasip1

package main

// One line per exported hook; the SDK exports cairn_alloc and cairn_abi_v1.

//go:wasmexport links_from_json
func exportLinksFromJSON(input string) int32 { return linksFromJSONHook.Run(input) }
