;; wasi.wat: a Cairn hook module (ABI v1) that calls the WASI functions that could
;; wait, for the host's tests that none does. Build: wat2wasm wasi.wat -o wasi.wasm
(module
  (import "cairn" "output" (func $output (param i32 i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))

  (memory (export "memory") 2)
  (func (export "cairn_abi_v1"))
  ;; The input goes at 64 KiB; it must fit in the second page.
  (func (export "cairn_alloc") (param $n i32) (result i32) (i32.const 65536))

  ;; poll: the input is n subscriptions of 48 bytes; the output is the errno (u32),
  ;; the number of events (u32), then n events of 32 bytes.
  (func (export "poll") (param $p i32) (param $n i32) (result i32)
    (i32.store (i32.const 0)
      (call $poll_oneoff (local.get $p) (i32.const 8) (i32.div_u (local.get $n) (i32.const 48)) (i32.const 4)))
    (call $output (i32.const 0) (i32.add (i32.const 8) (i32.mul (i32.div_u (local.get $n) (i32.const 48)) (i32.const 32))))
    (i32.const 0))

  ;; read_stdin: fd_read of 100 bytes from stdin into 1024; the output is the errno
  ;; (u32) and the number of bytes read (u32).
  (func (export "read_stdin") (param i32 i32) (result i32)
    (i32.store (i32.const 16) (i32.const 1024))
    (i32.store (i32.const 20) (i32.const 100))
    (i32.store (i32.const 0) (call $fd_read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 4)))
    (call $output (i32.const 0) (i32.const 8))
    (i32.const 0))
)
