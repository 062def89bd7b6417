//go:build wasip1

package main

// One line per exported hook; the SDK exports cairn_alloc and cairn_abi_v1.

//go:wasmexport normalize_email
func exportNormalizeEmail(input string) int32 { return normalizeEmailHook.Run(input) }
