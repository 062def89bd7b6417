;; control.wat: every way into and out of a function that the stack rewrite handles.
;; env.probe lets the test read the stack counter while frames are live.
;; Build: wat2wasm control.wat -o control.wasm
(module
  (import "env" "probe" (func $probe))
  (memory (export "memory") 1)

  ;; leaf probes with one frame of its own on the stack; nested with two.
  (func $leaf (export "leaf") (result i32)
    (call $probe)
    (i32.const 1))
  (func (export "nested") (result i32)
    (i32.add (call $leaf) (i32.const 1)))

  ;; br to the function's label from three blocks deep; br_if to an inner label.
  (func (export "br_outer") (param $x i32) (result i32)
    (block $a (result i32)
      (block $b
        (loop $l
          (br_if $b (i32.eqz (local.get $x)))
          (br 3 (i32.const 42))))
      (i32.const 7)))

  ;; br_if to the function's label, at the top level and nested, taken or not.
  (func (export "br_if_outer") (param $x i32) (result i32)
    (drop (br_if 0 (i32.const 10) (local.get $x)))
    (i32.const 20))
  (func (export "br_if_nested") (param $x i32) (result i32)
    (block
      (if (i32.ge_s (local.get $x) (i32.const 0))
        (then (drop (br_if 2 (i32.const 11) (local.get $x))))))
    (i32.const 21))

  ;; br_table whose targets mix the function's label and inner ones:
  ;; 0 -> $a (102), 1 -> $b (103), 2 -> the function (100), other -> $b (103).
  (func (export "br_table_mixed") (param $x i32) (result i32)
    (block $a (result i32)
      (block $b (result i32)
        (br_table $a $b 2 $b (i32.const 100) (local.get $x)))
      (i32.const 1)
      (i32.add))
    (i32.const 2)
    (i32.add))
  ;; br_table whose targets are all the function's label.
  (func (export "br_table_outer") (param $x i32) (result i32)
    (br_table 0 0 (i32.const 5) (local.get $x)))
  ;; br_table with no target at the function's label.
  (func (export "br_table_inner") (param $x i32) (result i32)
    (block $a
      (block $b
        (br_table $a $b (local.get $x)))
      (return (i32.const 1)))
    (i32.const 2))

  ;; return from inside a loop; the final end is never reached.
  (func (export "return_loop") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (if (i32.ge_u (local.get $i) (local.get $n))
        (then (return (i32.mul (local.get $i) (i32.const 2)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))
    (unreachable))

  ;; if/else where one branch returns.
  (func (export "if_else") (param $x i32) (result i32)
    (if (result i32) (local.get $x)
      (then (i32.const 1))
      (else (return (i32.const 2)))))

  ;; multi-value: a block with a parameter and two results, and a br_if to the
  ;; function's label carrying two values under its condition.
  (func $multi (export "multi") (param $x i32) (result i32 i64)
    (local.get $x)
    (block (param i32) (result i32 i64)
      (i64.const 9)
      (br_if 1 (local.get $x))
      (drop)
      (drop)
      (i32.const 0)
      (i64.const 0)))
  (func (export "multi_call") (param $x i32) (result i64)
    (local $second i64)
    (call $multi (local.get $x))
    (local.set $second)
    (i64.extend_i32_u)
    (i64.add (local.get $second)))

  ;; a function with many locals, recursing n deep.
  (func $many (export "many_locals") (param $n i32) (result i32)
    (local $a0 i64) (local $a1 i64) (local $a2 i64) (local $a3 i64)
    (local f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64)
    (local i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
    (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (local v128 v128 v128 v128 v128 v128 v128 v128 v128 v128)
    (local.set $a0 (i64.extend_i32_u (local.get $n)))
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else
        (i32.add
          (i32.wrap_i64 (local.get $a0))
          (call $many (i32.sub (local.get $n) (i32.const 1)))))))

  ;; probe_depth probes at the bottom of n nested calls.
  (func $probe_depth (export "probe_depth") (param $n i32)
    (if (i32.eqz (local.get $n))
      (then (call $probe) (return)))
    (call $probe_depth (i32.sub (local.get $n) (i32.const 1))))
)
