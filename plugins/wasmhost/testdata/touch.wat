;; touch.wat: a module whose "touch" grows its memory to the cap, writes every byte,
;; and traps: each call leaves a full instance to discard.
;; Build: wat2wasm touch.wat -o touch.wasm
(module
  (memory (export "memory") 1)
  (func (export "cairn_abi_v1"))
  (func (export "cairn_alloc") (param i32) (result i32) (i32.const 0))
  (func (export "touch") (param i32 i32) (result i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    (memory.fill (i32.const 0) (i32.const 1) (i32.mul (memory.size) (i32.const 65536)))
    (unreachable))
)
