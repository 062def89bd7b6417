//go:build wasip1

package main

// One line per exported hook; the SDK exports cairn_alloc and cairn_abi_v1.

//go:wasmexport wordcount
func exportWordcount(input string) int32 { return wordcountHook.Run(input) }

//go:wasmexport sum_counts
func exportSumCounts(input string) int32 { return sumCountsHook.Run(input) }
