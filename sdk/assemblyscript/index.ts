// Package entry of @cairn/hook-sdk for the AssemblyScript compiler, which resolves
// `import … from "@cairn/hook-sdk"` to this file.
export * from "./assembly/index";
