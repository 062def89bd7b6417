;; nomemory.wat: refused, it exports no memory.
(module
  (memory 1)
  (func (export "cairn_abi_v1"))
  (func (export "cairn_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "run") (param i32 i32) (result i32) (i32.const 0)))
