;; threads.wat: atomic instructions on a shared memory.
;; Build: wat2wasm --enable-threads threads.wat -o threads.wasm
(module
  (memory (export "memory") 1 1 shared)
  (func (export "atomics") (param $x i32) (result i32)
    (i32.atomic.store offset=8 (i32.const 0) (local.get $x))
    (drop (i32.atomic.rmw.add offset=8 (i32.const 0) (i32.const 5)))
    (atomic.fence)
    (drop (i32.atomic.rmw.cmpxchg offset=8 (i32.const 0) (i32.const 0) (i32.const 1)))
    (i32.add
      (i32.atomic.load offset=8 (i32.const 0))
      (memory.atomic.notify offset=8 (i32.const 0) (i32.const 1))))
)
