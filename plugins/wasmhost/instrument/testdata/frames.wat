;; frames.wat: recursions of different frame shapes, to check the frame model against
;; the stack wazero really uses. Every export recurses without end.
;; Build: wat2wasm frames.wat -o frames.wasm
(module
  (global $g (mut i32) (i32.const 0))
  (memory 1)
  ;; a: minimal frame
  (func $a (export "a") (param i32) (result i32)
    (call $a (i32.add (local.get 0) (i32.const 1))))
  ;; b: 10 i64 locals live across the call
  (func $b (export "b") (param $x i64) (result i64)
    (local $l0 i64) (local $l1 i64) (local $l2 i64) (local $l3 i64) (local $l4 i64)
    (local $l5 i64) (local $l6 i64) (local $l7 i64) (local $l8 i64) (local $l9 i64)
    (local.set $l0 (i64.mul (local.get $x) (i64.const 3)))
    (local.set $l1 (i64.mul (local.get $l0) (i64.const 5)))
    (local.set $l2 (i64.mul (local.get $l1) (i64.const 7)))
    (local.set $l3 (i64.mul (local.get $l2) (i64.const 11)))
    (local.set $l4 (i64.mul (local.get $l3) (i64.const 13)))
    (local.set $l5 (i64.mul (local.get $l4) (i64.const 17)))
    (local.set $l6 (i64.mul (local.get $l5) (i64.const 19)))
    (local.set $l7 (i64.mul (local.get $l6) (i64.const 23)))
    (local.set $l8 (i64.mul (local.get $l7) (i64.const 29)))
    (local.set $l9 (i64.mul (local.get $l8) (i64.const 31)))
    (i64.add (call $b (i64.add (local.get $x) (i64.const 1)))
      (i64.add (local.get $l0) (i64.add (local.get $l1) (i64.add (local.get $l2) (i64.add (local.get $l3)
      (i64.add (local.get $l4) (i64.add (local.get $l5) (i64.add (local.get $l6) (i64.add (local.get $l7)
      (i64.add (local.get $l8) (local.get $l9))))))))))))
  ;; c: 20 params (some passed on the stack)
  (func $c (export "c") (param i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64) (result i64)
    (call $c (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get 5) (local.get 6) (local.get 7)
      (local.get 8) (local.get 9) (local.get 10) (local.get 11) (local.get 12) (local.get 13) (local.get 14)
      (local.get 15) (local.get 16) (local.get 17) (local.get 18) (local.get 19) (local.get 0)))
  ;; d: 16 values on the operand stack across the call
  (func $d (export "d") (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (i32.const 3))
    (i32.add (i32.mul (local.get $x) (i32.const 5))
    (i32.add (i32.mul (local.get $x) (i32.const 7))
    (i32.add (i32.mul (local.get $x) (i32.const 9))
    (i32.add (i32.mul (local.get $x) (i32.const 11))
    (i32.add (i32.mul (local.get $x) (i32.const 13))
    (i32.add (i32.mul (local.get $x) (i32.const 15))
    (i32.add (i32.mul (local.get $x) (i32.const 17))
    (i32.add (i32.mul (local.get $x) (i32.const 19))
    (i32.add (i32.mul (local.get $x) (i32.const 21))
    (i32.add (i32.mul (local.get $x) (i32.const 23))
    (i32.add (i32.mul (local.get $x) (i32.const 25))
    (i32.add (i32.mul (local.get $x) (i32.const 27))
    (i32.add (i32.mul (local.get $x) (i32.const 29))
    (i32.add (i32.mul (local.get $x) (i32.const 31))
    (i32.add (i32.mul (local.get $x) (i32.const 33))
      (call $d (i32.add (local.get $x) (i32.const 1))))))))))))))))))))
  ;; e: v128 values live across the call
  (func $e (export "e") (param $x i32) (result i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $v4 v128) (local $v5 v128)
    (local $v6 v128) (local $v7 v128) (local $v8 v128) (local $v9 v128) (local $v10 v128) (local $v11 v128)
    (local.set $v0 (i32x4.splat (local.get $x)))
    (local.set $v1 (i32x4.add (local.get $v0) (local.get $v0)))
    (local.set $v2 (i32x4.add (local.get $v1) (local.get $v0)))
    (local.set $v3 (i32x4.add (local.get $v2) (local.get $v0)))
    (local.set $v4 (i32x4.add (local.get $v3) (local.get $v0)))
    (local.set $v5 (i32x4.add (local.get $v4) (local.get $v0)))
    (local.set $v6 (i32x4.add (local.get $v5) (local.get $v0)))
    (local.set $v7 (i32x4.add (local.get $v6) (local.get $v0)))
    (local.set $v8 (i32x4.add (local.get $v7) (local.get $v0)))
    (local.set $v9 (i32x4.add (local.get $v8) (local.get $v0)))
    (local.set $v10 (i32x4.add (local.get $v9) (local.get $v0)))
    (local.set $v11 (i32x4.add (local.get $v10) (local.get $v0)))
    (i32.add (call $e (i32.add (local.get $x) (i32.const 1)))
      (i32x4.extract_lane 0 (i32x4.add (local.get $v11) (i32x4.add (local.get $v10) (i32x4.add (local.get $v9)
      (i32x4.add (local.get $v8) (i32x4.add (local.get $v7) (i32x4.add (local.get $v6) (i32x4.add (local.get $v5)
      (i32x4.add (local.get $v4) (i32x4.add (local.get $v3) (i32x4.add (local.get $v2) (i32x4.add (local.get $v1) (local.get $v0)))))))))))))))
  ;; h: a callee that is not inlined away
  (func $h (param i32) (result i32) (i32.add (local.get 0) (global.get $g)))
  ;; f: straight-line code where each of 40 values lives across a call
  (func $f (export "f") (param $x i32) (result i32)
    (local $t i32) (local $acc i32)
        (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))
    (local.set $t (call $h (local.get $x)))
    (local.set $acc (i32.add (local.get $acc) (call $h (local.get $acc))))
    (local.set $acc (i32.xor (local.get $acc) (local.get $t)))

    (i32.add (local.get $acc) (call $f (i32.add (local.get $x) (i32.const 1)))))
  ;; g: 40 v128 parameters, most passed on the stack
  (func $g (export "g") (param v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128 v128) (result v128)
    (call $g (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get 5) (local.get 6) (local.get 7) (local.get 8) (local.get 9) (local.get 10) (local.get 11) (local.get 12) (local.get 13) (local.get 14) (local.get 15) (local.get 16) (local.get 17) (local.get 18) (local.get 19) (local.get 20) (local.get 21) (local.get 22) (local.get 23) (local.get 24) (local.get 25) (local.get 26) (local.get 27) (local.get 28) (local.get 29) (local.get 30) (local.get 31) (local.get 32) (local.get 33) (local.get 34) (local.get 35) (local.get 36) (local.get 37) (local.get 38) (local.get 39) (local.get 0)))
  ;; hh: 20 results
  (func $hh (export "hh") (param $x i32) (result i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (call $hh (i32.add (local.get $x) (i32.const 1))))
  ;; i: 30 call results kept on the operand stack across the next calls
  (func $i (export "i") (param $x i32) (result i32)
    (call $h (i32.add (local.get $x) (i32.const 0)))
    (call $h (i32.add (local.get $x) (i32.const 1)))
    (call $h (i32.add (local.get $x) (i32.const 2)))
    (call $h (i32.add (local.get $x) (i32.const 3)))
    (call $h (i32.add (local.get $x) (i32.const 4)))
    (call $h (i32.add (local.get $x) (i32.const 5)))
    (call $h (i32.add (local.get $x) (i32.const 6)))
    (call $h (i32.add (local.get $x) (i32.const 7)))
    (call $h (i32.add (local.get $x) (i32.const 8)))
    (call $h (i32.add (local.get $x) (i32.const 9)))
    (call $h (i32.add (local.get $x) (i32.const 10)))
    (call $h (i32.add (local.get $x) (i32.const 11)))
    (call $h (i32.add (local.get $x) (i32.const 12)))
    (call $h (i32.add (local.get $x) (i32.const 13)))
    (call $h (i32.add (local.get $x) (i32.const 14)))
    (call $h (i32.add (local.get $x) (i32.const 15)))
    (call $h (i32.add (local.get $x) (i32.const 16)))
    (call $h (i32.add (local.get $x) (i32.const 17)))
    (call $h (i32.add (local.get $x) (i32.const 18)))
    (call $h (i32.add (local.get $x) (i32.const 19)))
    (call $h (i32.add (local.get $x) (i32.const 20)))
    (call $h (i32.add (local.get $x) (i32.const 21)))
    (call $h (i32.add (local.get $x) (i32.const 22)))
    (call $h (i32.add (local.get $x) (i32.const 23)))
    (call $h (i32.add (local.get $x) (i32.const 24)))
    (call $h (i32.add (local.get $x) (i32.const 25)))
    (call $h (i32.add (local.get $x) (i32.const 26)))
    (call $h (i32.add (local.get $x) (i32.const 27)))
    (call $h (i32.add (local.get $x) (i32.const 28)))
    (call $h (i32.add (local.get $x) (i32.const 29)))
    (call $i (i32.add (local.get $x) (i32.const 1)))
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
    i32.add
  )
  ;; j: the same with v128 results
  (func $hv (param i32) (result v128) (i32x4.splat (i32.add (local.get 0) (global.get $g))))
  (func $j (export "j") (param $x i32) (result i32)
    (call $hv (i32.add (local.get $x) (i32.const 0)))
    (call $hv (i32.add (local.get $x) (i32.const 1)))
    (call $hv (i32.add (local.get $x) (i32.const 2)))
    (call $hv (i32.add (local.get $x) (i32.const 3)))
    (call $hv (i32.add (local.get $x) (i32.const 4)))
    (call $hv (i32.add (local.get $x) (i32.const 5)))
    (call $hv (i32.add (local.get $x) (i32.const 6)))
    (call $hv (i32.add (local.get $x) (i32.const 7)))
    (call $hv (i32.add (local.get $x) (i32.const 8)))
    (call $hv (i32.add (local.get $x) (i32.const 9)))
    (call $hv (i32.add (local.get $x) (i32.const 10)))
    (call $hv (i32.add (local.get $x) (i32.const 11)))
    (call $hv (i32.add (local.get $x) (i32.const 12)))
    (call $hv (i32.add (local.get $x) (i32.const 13)))
    (call $hv (i32.add (local.get $x) (i32.const 14)))
    (call $hv (i32.add (local.get $x) (i32.const 15)))
    (call $hv (i32.add (local.get $x) (i32.const 16)))
    (call $hv (i32.add (local.get $x) (i32.const 17)))
    (call $hv (i32.add (local.get $x) (i32.const 18)))
    (call $hv (i32.add (local.get $x) (i32.const 19)))
    (call $hv (i32.add (local.get $x) (i32.const 20)))
    (call $hv (i32.add (local.get $x) (i32.const 21)))
    (call $hv (i32.add (local.get $x) (i32.const 22)))
    (call $hv (i32.add (local.get $x) (i32.const 23)))
    (call $hv (i32.add (local.get $x) (i32.const 24)))
    (call $hv (i32.add (local.get $x) (i32.const 25)))
    (call $hv (i32.add (local.get $x) (i32.const 26)))
    (call $hv (i32.add (local.get $x) (i32.const 27)))
    (call $hv (i32.add (local.get $x) (i32.const 28)))
    (call $hv (i32.add (local.get $x) (i32.const 29)))
    (i32x4.splat (call $j (i32.add (local.get $x) (i32.const 1))))
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.add
    i32x4.extract_lane 0
  )
)
