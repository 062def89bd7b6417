;; badwasi.wat: refused, WASI has no function "no_such_call".
(module
  (import "wasi_snapshot_preview1" "no_such_call" (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "cairn_abi_v1"))
  (func (export "cairn_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "run") (param i32 i32) (result i32) (i32.const 0)))
