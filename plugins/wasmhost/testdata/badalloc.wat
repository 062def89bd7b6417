;; badalloc.wat: refused, cairn_alloc takes an i64.
(module
  (memory (export "memory") 1)
  (func (export "cairn_abi_v1"))
  (func (export "cairn_alloc") (param i64) (result i32) (i32.const 1024))
  (func (export "run") (param i32 i32) (result i32) (i32.const 0)))
