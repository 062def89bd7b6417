;; fuel.wat: loops, calls and branches of every shape the fuel metering handles.
;; env.probe lets the test act while the guest runs (it raises the floor).
;; Build: wat2wasm --enable-tail-call fuel.wat -o fuel.wasm
(module
  (import "env" "probe" (func $probe))
  (type $tt (func (param i64 i64) (result i64)))
  (table funcref (elem $tsum_indirect))
  (memory (export "memory") 1)

  ;; adds(n): n iterations of a loop of 100 i32.add, the calibration loop.
  (func (export "adds") (param $n i32) (result i32)
    (local $a i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $a
          (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
            (local.get $a) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n))
            (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $a))

  ;; count(n): the smallest counting loop.
  (func (export "count") (param $n i32) (result i32)
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
    (local.get $n))

  ;; spin: the smallest loop there is, forever.
  (func (export "spin")
    (loop $l (br $l)))

  ;; spin_br_table: forever, through a br_table whose every target is the loop.
  (func (export "spin_br_table") (param $x i32)
    (loop $l (br_table $l $l (local.get $x))))

  ;; spin_probe: forever, calling the host each time.
  (func (export "spin_probe")
    (loop $l (call $probe) (br $l)))

  ;; inner(m) loops m times; outer(n, m) calls it n times from a loop: the fuel of the
  ;; inner loop is charged in the callee.
  (func $inner (param $m i32) (result i32)
    (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $m)))
        (local.set $s (i32.add (local.get $s) (local.get $m)))
        (local.set $m (i32.sub (local.get $m) (i32.const 1)))
        (br $l)))
    (local.get $s))
  (func (export "outer") (param $n i32) (param $m i32) (result i32)
    (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (i32.add (local.get $s) (call $inner (local.get $m))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $s))

  ;; outer_forever(m): calls inner(m) forever.
  (func (export "outer_forever") (param $m i32)
    (loop $l (drop (call $inner (local.get $m))) (br $l)))

  ;; tsum(n, acc) is acc + n + ... + 1 by tail calls; tforever never returns.
  (func $tsum (export "tsum") (param $n i64) (param $acc i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call $tsum
        (i64.sub (local.get $n) (i64.const 1))
        (i64.add (local.get $acc) (local.get $n))))))
  (func $tsum_indirect (export "tsum_indirect") (param $n i64) (param $acc i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call_indirect (type $tt)
        (i64.sub (local.get $n) (i64.const 1))
        (i64.add (local.get $acc) (local.get $n))
        (i32.const 0)))))
  (func $tforever (export "tforever") (param $n i64) (param $acc i64) (result i64)
    (return_call $tforever (local.get $n) (local.get $acc)))

  ;; ping and pong call each other by tail calls forever.
  (func $ping (export "ping") (param $n i32) (result i32)
    (return_call $pong (i32.add (local.get $n) (i32.const 1))))
  (func $pong (param $n i32) (result i32)
    (return_call $ping (i32.add (local.get $n) (i32.const 1))))

  ;; arms(x): a cheap then arm (x != 0) or a costly else arm (x == 0), then common code.
  (func (export "arms") (param $x i32) (result i32)
    (local $a i32)
    (if (local.get $x)
      (then (local.set $a (i32.const 1)))
      (else
        (local.set $a (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (local.get $x) (i32.const 1)) (i32.const 2)) (i32.const 3)) (i32.const 4))
          (i32.const 5)) (i32.const 6)) (i32.const 7)) (i32.const 8)))))
    (i32.add (local.get $a) (i32.const 100)))

  ;; dispatch(k): a br_table to one of three cases of different sizes; each case
  ;; leaves through $out.
  (func (export "dispatch") (param $k i32) (result i32)
    (local $a i32)
    (block $out
      (block $c2
        (block $c1
          (block $c0
            (br_table $c0 $c1 $c2 (local.get $k)))
          ;; case 0: small
          (local.set $a (i32.const 10))
          (br $out))
        ;; case 1: large
        (local.set $a (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
          (i32.add (i32.add (i32.add (i32.add (local.get $k) (i32.const 1)) (i32.const 2))
          (i32.const 3)) (i32.const 4)) (i32.const 5)) (i32.const 6)) (i32.const 7))
          (i32.const 8)) (i32.const 9)) (i32.const 10)) (i32.const 11)) (i32.const 12)))
        (br $out))
      ;; case 2 (and the default): medium
      (local.set $a (i32.add (i32.add (i32.add (local.get $k) (i32.const 1)) (i32.const 2)) (i32.const 3))))
    (local.get $a))

  ;; early(x): returns at once when x is 0, else runs a long tail.
  (func (export "early") (param $x i32) (result i32)
    (if (i32.eqz (local.get $x)) (then (return (i32.const 0))))
    (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
      (local.get $x) (i32.const 1)) (i32.const 2)) (i32.const 3)) (i32.const 4))
      (i32.const 5)) (i32.const 6)) (i32.const 7)) (i32.const 8)))

  ;; loop_params: a loop with a parameter and a result (multi-value blocks).
  (func (export "loop_params") (param $n i32) (result i32)
    (local.get $n)
    (loop $l (param i32) (result i32)
      (i32.sub (i32.const 1))
      (local.tee $n)
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0)))))

  ;; grow(n): grows memory by n pages, n times one page in a loop.
  (func (export "grow") (param $n i32) (result i32)
    (loop $l
      (drop (memory.grow (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
    (memory.size))

  ;; fill_forever: memory.fill over the whole page, forever.
  (func (export "fill_forever")
    (loop $l (memory.fill (i32.const 0) (i32.const 7) (i32.const 65536)) (br $l)))

  (func (export "noop"))

  ;; $leaf is a leaf: no loop, no call but the host's, reached only by direct calls.
  ;; The rewrite leaves it alone; its callers pay for it. leaf_exported is the same
  ;; code exported, which makes it instrumented.
  (func $leaf (param $x i32) (result i32)
    (i32.add (i32.add (i32.add (local.get $x) (i32.const 1)) (i32.const 2)) (i32.const 3)))
  (func $leaf_exported (export "leaf_exported") (param $x i32) (result i32)
    (i32.add (i32.add (i32.add (local.get $x) (i32.const 1)) (i32.const 2)) (i32.const 3)))
  (func (export "calls_leaf") (param $n i32) (result i32)
    (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (call $leaf (local.get $s)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $s))
  (func (export "calls_leaf_exported") (param $n i32) (result i32)
    (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (call $leaf_exported (local.get $s)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $s))

  ;; $big_leaf has a large frame (200 i64 locals); leafy(n) recurses n deep, calling it
  ;; at every level: its frame is reserved by leafy's check, not counted.
  (func $big_leaf (param $x i32) (result i32)
    (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64
           i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (call $probe)
    (i32.add (local.get $x) (i32.const 1)))
  (func $leafy (export "leafy") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (call $big_leaf (i32.const 0)))
      (else (i32.add (call $big_leaf (i32.const 0)) (call $leafy (i32.sub (local.get $n) (i32.const 1)))))))
)
