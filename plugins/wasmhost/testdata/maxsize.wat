;; maxsize.wat: a precommit hook that refuses writes whose input (the object JSON,
;; value included) is over 1 KiB. Build: wat2wasm maxsize.wat -o maxsize.wasm
(module
  ;; "cairn"."output"(ptr, len) hands the host the call's result bytes.
  (import "cairn" "output" (func $output (param i32 i32)))

  ;; One page of memory, exported as "memory". Inputs go at offset 1024.
  (memory (export "memory") 1)
  (data (i32.const 0) "too large: the object JSON is over 1 KiB")

  ;; The ABI v1 marker: never called.
  (func (export "cairn_abi_v1"))

  ;; cairn_alloc(n): where the host copies the next input. Grow the memory so that
  ;; 1024 + n bytes fit: (1024 + n + 65535) / 65536 pages.
  (func (export "cairn_alloc") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 66559)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size))))))
    (i32.const 1024))

  ;; max_1k(ptr, len): the precommit. Status 0 accepts the write unchanged; status 1
  ;; rejects it, with the output as the reason.
  (func (export "max_1k") (param $ptr i32) (param $len i32) (result i32)
    (if (i32.gt_u (local.get $len) (i32.const 1024))
      (then
        (call $output (i32.const 0) (i32.const 40))
        (return (i32.const 1))))
    (i32.const 0))
)
