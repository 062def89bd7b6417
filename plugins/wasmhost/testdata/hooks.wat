;; hooks.wat: the test fixture of plugins/wasmhost, one entry point per behaviour the
;; host must handle. Build: wat2wasm hooks.wat -o hooks.wasm
(module
  (import "cairn" "output" (func $output (param i32 i32)))
  (import "cairn" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))

  (memory (export "memory") 2)

  ;; constants in the first page
  (data (i32.const 0) "rejected: no writes here")                       ;; 0, 24
  (data (i32.const 32) "something broke")                               ;; 32, 15
  (data (i32.const 48) "0123456789abcdefghij")                          ;; 48, 20
  (data (i32.const 96) "[[\"b\",\"k\",\"t\"]]")                         ;; 96, 15
  (data (i32.const 128) "[1,\"two\",{\"three\":3}]")                    ;; 128, 21
  (data (i32.const 160) "not json")                                     ;; 160, 8
  (data (i32.const 192) "hello from stdout\n")                          ;; 192, 18
  (data (i32.const 224) "v1")                                           ;; 224, 2
  (data (i32.const 256) "{\"values\":[{\"metadata\":{\"content-type\":\"text/plain\",\"X-Riak-Meta\":{\"X-Riak-Meta-By\":\"hook\"},\"index\":{\"n_int\":7}},\"data\":\"replaced\"}]}") ;; 256, 133
  (data (i32.const 512) "{\"values\":[{\"metadata\":{\"index\":{\"foo\":1}}}]}") ;; 512, 45

  (func (export "cairn_abi_v1"))

  ;; cairn_alloc: the input buffer starts at 64 KiB; grow memory until n bytes fit.
  (func (export "cairn_alloc") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size))))))
    (i32.const 65536))

  (func (export "accept") (param i32 i32) (result i32) (i32.const 0))

  (func (export "echo") (param $p i32) (param $n i32) (result i32)
    (call $output (local.get $p) (local.get $n))
    (i32.const 0))

  (func (export "reject") (param i32 i32) (result i32)
    (call $output (i32.const 0) (i32.const 24))
    (i32.const 1))

  (func (export "fail") (param i32 i32) (result i32)
    (call $output (i32.const 32) (i32.const 15))
    (i32.const 2))

  (func (export "status7") (param i32 i32) (result i32) (i32.const 7))

  (func (export "loop") (param i32 i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0))

  (func (export "trap") (param i32 i32) (result i32) (unreachable))

  ;; spin: a few milliseconds of work, then "v1"
  (func (export "spin") (param i32 i32) (result i32)
    (local $i i32)
    (local.set $i (i32.const 20000))
    (loop $again
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $again (i32.gt_s (local.get $i) (i32.const 0))))
    (call $output (i32.const 224) (i32.const 2))
    (i32.const 0))

  (func (export "version") (param i32 i32) (result i32)
    (call $output (i32.const 224) (i32.const 2))
    (i32.const 0))

  ;; grow: grow memory a page at a time until it fails, then fail with the page count
  ;; (4 bytes, little-endian) as the message.
  (func (export "grow") (param i32 i32) (result i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    (i32.store (i32.const 1024) (memory.size))
    (call $output (i32.const 1024) (i32.const 4))
    (i32.const 2))

  (func (export "growtrap") (param i32 i32) (result i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    (unreachable))

  ;; big: an output over the 8 MiB limit (the host refuses it before reading memory).
  (func (export "big") (param i32 i32) (result i32)
    (call $output (i32.const 0) (i32.const 9437184))
    (i32.const 0))

  (func (export "badout") (param i32 i32) (result i32)
    (call $output (i32.const 0xfffffff0) (i32.const 100))
    (i32.const 0))

  ;; logspam: log the input 100 times at info level.
  (func (export "logspam") (param $p i32) (param $n i32) (result i32)
    (local $i i32)
    (local.set $i (i32.const 100))
    (loop $again
      (call $log (i32.const 0) (local.get $p) (local.get $n))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $again (i32.gt_s (local.get $i) (i32.const 0))))
    (i32.const 0))

  ;; hello: write a line to stdout through WASI.
  (func (export "hello") (param i32 i32) (result i32)
    (i32.store (i32.const 1024) (i32.const 192))
    (i32.store (i32.const 1028) (i32.const 18))
    (drop (call $fd_write (i32.const 1) (i32.const 1024) (i32.const 1) (i32.const 1032)))
    (i32.const 0))

  ;; clock: 20 bytes: the realtime clock (u64), the monotonic clock (u64) and the errno
  ;; of random_get (u32), all little-endian.
  (func (export "clock") (param i32 i32) (result i32)
    (i64.store (i32.const 2048) (i64.const -1))
    (i64.store (i32.const 2056) (i64.const -1))
    (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 2048)))
    (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 2056)))
    (i32.store (i32.const 2064) (call $random_get (i32.const 2072) (i32.const 8)))
    (call $output (i32.const 2048) (i32.const 20))
    (i32.const 0))

  (func (export "keyhash") (param i32 i32) (result i32)
    (call $output (i32.const 48) (i32.const 20))
    (i32.const 0))

  (func (export "keyempty") (param i32 i32) (result i32)
    (call $output (i32.const 48) (i32.const 0))
    (i32.const 0))

  (func (export "links") (param i32 i32) (result i32)
    (call $output (i32.const 96) (i32.const 15))
    (i32.const 0))

  (func (export "values") (param i32 i32) (result i32)
    (call $output (i32.const 128) (i32.const 21))
    (i32.const 0))

  (func (export "badjson") (param i32 i32) (result i32)
    (call $output (i32.const 160) (i32.const 8))
    (i32.const 0))

  (func (export "replace") (param i32 i32) (result i32)
    (call $output (i32.const 256) (i32.const 133))
    (i32.const 0))

  (func (export "badreplace") (param i32 i32) (result i32)
    (call $output (i32.const 512) (i32.const 45))
    (i32.const 0))

  ;; not entry points: other signatures
  (func (export "helper") (param i32) (result i32) (local.get 0))
)
