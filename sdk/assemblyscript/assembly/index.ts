// @cairn/hook-sdk: write Cairn hooks (ABI v1) in AssemblyScript.
//
// An entry file re-exports the two required exports and defines one function per hook:
//
//   export { cairn_alloc, cairn_abi_v1 } from "@cairn/hook-sdk";
//   import { handlePrecommit, CommitInput, Result } from "@cairn/hook-sdk";
//
//   export function validate(ptr: usize, len: i32): i32 {
//     return handlePrecommit(ptr, len, (req: CommitInput): Result => {
//       if (req.object.first().value.length == 0) return Result.reject("empty value");
//       return Result.accept();
//     });
//   }

export * from "./abi";
export * from "./host";
export * from "./utf8";
export * from "./base64";
export * from "./json";
export * from "./object";
export * from "./hook";
export * from "./sha1";
