;; reject-large: a precommit, in raw WebAssembly text, that rejects a write when its
;; input (the {"op":…,"object":…} JSON the host passes) is larger than 1024 bytes.
;; It never parses the input: the length alone decides.
(module
  ;; The host function that takes the call's output (here, the reject reason).
  (import "cairn" "output" (func $output (param i32 i32)))

  ;; One page (64 KiB) to start with; cairn_alloc grows it for large inputs.
  (memory (export "memory") 1)

  ;; Bytes 0..1023 hold the constants; inputs are written from byte 1024 on.
  (global $input i32 (i32.const 1024))
  (global $limit i32 (i32.const 1024))
  (data (i32.const 0) "values larger than 1 KiB are refused")

  ;; The ABI v1 marker. Never called.
  (func (export "cairn_abi_v1"))

  ;; cairn_alloc(n): the address of a buffer of at least n bytes, always $input.
  ;; Grows the memory when the input would not fit; traps if it cannot.
  (func (export "cairn_alloc") (param $n i32) (result i32)
    (local $pages i32)
    ;; pages needed = ceil((1024 + n) / 65536)
    (local.set $pages
      (i32.shr_u
        (i32.add (i32.add (global.get $input) (local.get $n)) (i32.const 65535))
        (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then unreachable))))
    (global.get $input))

  ;; validate(ptr, len) -> status: 0 accepts the write unchanged; 1 rejects it with
  ;; the reason at address 0 (36 bytes), which the client gets with a 403.
  (func (export "validate") (param $ptr i32) (param $len i32) (result i32)
    (if (i32.gt_u (local.get $len) (global.get $limit))
      (then
        (call $output (i32.const 0) (i32.const 36))
        (return (i32.const 1))))
    (i32.const 0))
)
