;; hostrecursion.wat: a Cairn hook module (ABI v1) whose entry point "recurse" recurses
;; 16 frames deep per byte of input, for the host's tests of the stack limit.
;; Build: wat2wasm hostrecursion.wat -o hostrecursion.wasm
(module
  (memory (export "memory") 2)
  (func (export "cairn_abi_v1"))
  ;; The input goes at 64 KiB; it must fit in the second page.
  (func (export "cairn_alloc") (param $n i32) (result i32) (i32.const 65536))

  (func $down (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (call $down (i32.sub (local.get $n) (i32.const 1))))))

  (func (export "recurse") (param $p i32) (param $n i32) (result i32)
    (call $down (i32.mul (local.get $n) (i32.const 16))))
)
