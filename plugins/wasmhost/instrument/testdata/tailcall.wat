;; tailcall.wat: tail calls, which replace the caller's frame.
;; Build: wat2wasm --enable-tail-call tailcall.wat -o tailcall.wasm
(module
  (type $t (func (param i64 i64) (result i64)))
  (table funcref (elem $sum_indirect))

  ;; sum returns acc + n + (n-1) + ... + 1 by tail recursion.
  (func $sum (export "sum") (param $n i64) (param $acc i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call $sum
        (i64.sub (local.get $n) (i64.const 1))
        (i64.add (local.get $acc) (local.get $n))))))

  ;; sum_indirect is sum through the table.
  (func $sum_indirect (export "sum_indirect") (param $n i64) (param $acc i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call_indirect (type $t)
        (i64.sub (local.get $n) (i64.const 1))
        (i64.add (local.get $acc) (local.get $n))
        (i32.const 0)))))

  ;; sum_plain is the same without tail calls: every level keeps a frame.
  (func $sum_plain (export "sum_plain") (param $n i64) (param $acc i64) (result i64)
    (if (result i64) (i64.eqz (local.get $n))
      (then (local.get $acc))
      (else (call $sum_plain
        (i64.sub (local.get $n) (i64.const 1))
        (i64.add (local.get $acc) (local.get $n))))))
)
