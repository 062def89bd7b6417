;; initspin.wat: a module whose _initialize never returns.
;; Build: wat2wasm initspin.wat -o initspin.wasm
(module
  (memory (export "memory") 1)
  (func (export "cairn_abi_v1"))
  (func (export "cairn_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "_initialize") (loop $l (br $l)))
  (func (export "accept") (param i32 i32) (result i32) (i32.const 0))
)
