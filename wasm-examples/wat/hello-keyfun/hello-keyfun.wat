;; hello-keyfun: a chash_keyfun, in raw WebAssembly text, that returns the 64-bit
;; FNV-1a hash of its whole input ({"bucket_type":…,"bucket":…,"key":…}) as 8 bytes,
;; big-endian. It reads nothing but the input, so it is deterministic.
(module
  ;; The host function that takes the call's output (here, the 8 hash bytes).
  (import "cairn" "output" (func $output (param i32 i32)))

  ;; One page to start with; cairn_alloc grows it for large inputs.
  (memory (export "memory") 1)

  ;; Bytes 0..7 hold the result; inputs are written from byte 1024 on.
  (global $input i32 (i32.const 1024))

  ;; The ABI v1 marker. Never called.
  (func (export "cairn_abi_v1"))

  ;; cairn_alloc(n): the address of a buffer of at least n bytes, always $input.
  (func (export "cairn_alloc") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages
      (i32.shr_u
        (i32.add (i32.add (global.get $input) (local.get $n)) (i32.const 65535))
        (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then unreachable))))
    (global.get $input))

  ;; hash(ptr, len) -> status 0, output = FNV-1a-64(input) as 8 big-endian bytes.
  (func (export "hash") (param $ptr i32) (param $len i32) (result i32)
    (local $h i64)
    (local $i i32)
    ;; FNV-1a: h = offset basis; for each byte: h ^= byte; h *= prime (mod 2^64).
    (local.set $h (i64.const 0xcbf29ce484222325))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $h
          (i64.mul
            (i64.xor (local.get $h) (i64.load8_u (i32.add (local.get $ptr) (local.get $i))))
            (i64.const 0x100000001b3)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    ;; Write h big-endian at address 0: byte k is h >> (56 - 8k).
    (local.set $i (i32.const 0))
    (block $written
      (loop $byte
        (br_if $written (i32.eq (local.get $i) (i32.const 8)))
        (i64.store8
          (local.get $i)
          (i64.shr_u (local.get $h) (i64.extend_i32_u (i32.sub (i32.const 56) (i32.shl (local.get $i) (i32.const 3))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
    (call $output (i32.const 0) (i32.const 8))
    (i32.const 0))
)
