;; features.wat: the post-MVP instructions a rewrite must decode (their immediates
;; especially). Every export returns a number that the test compares between the
;; original module and the rewritten one.
;; Build: wat2wasm features.wat -o features.wasm
(module
  (type $i2i (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (table $t 4 funcref)
  (table $ext 2 externref)
  (global $g (mut i64) (i64.const 5))
  (data $d "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (elem $e func $double $triple)
  (elem declare func $square)

  (func $double (param i32) (result i32) (i32.shl (local.get 0) (i32.const 1)))
  (func $triple (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
  (func $square (param i32) (result i32) (i32.mul (local.get 0) (local.get 0)))

  ;; SIMD: v128.const, shuffle, lanes, splats, lane loads and stores, zero loads.
  (func (export "simd") (param $x i32) (result i64)
    (local $v v128)
    (local.set $v (v128.const i32x4 1 2 3 4))
    (local.set $v (i32x4.add (local.get $v) (i32x4.splat (local.get $x))))
    (local.set $v (i8x16.shuffle 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0 (local.get $v) (local.get $v)))
    (local.set $v (i32x4.replace_lane 2 (local.get $v) (i32.const 77)))
    (v128.store offset=16 (i32.const 0) (local.get $v))
    (v128.store8_lane offset=40 3 (i32.const 0) (local.get $v))
    (local.set $v (v128.load32_zero offset=16 (i32.const 0)))
    (local.set $v (v128.load16_lane offset=20 align=1 1 (i32.const 0) (local.get $v)))
    (local.set $v (f64x2.add (local.get $v) (v128.load64_splat offset=24 (i32.const 0))))
    (i64.add
      (i64.add (i64x2.extract_lane 0 (local.get $v)) (i64x2.extract_lane 1 (local.get $v)))
      (i64.extend_i32_u (i32.add
        (i8x16.extract_lane_u 7 (local.get $v))
        (i32.add (i32x4.bitmask (local.get $v)) (i32.load8_u offset=40 (i32.const 0)))))))

  ;; Reference types: tables of funcref and externref, ref.func, ref.null, typed select.
  (func (export "refs") (param $x i32) (result i32)
    (table.set $t (i32.const 2) (ref.func $square))
    (table.set $ext (i32.const 0) (ref.null extern))
    (i32.add
      (i32.add
        (call_indirect $t (type $i2i) (local.get $x) (i32.const 2))
        (ref.is_null (table.get $ext (i32.const 0))))
      (i32.add
        (ref.is_null (select (result funcref) (ref.null func) (ref.func $double) (local.get $x)))
        (i32.add (table.size $t) (table.grow $t (ref.null func) (i32.const 1))))))

  ;; Bulk memory and table operations.
  (func (export "bulk") (param $x i32) (result i32)
    (memory.init $d (i32.const 100) (i32.const 0) (i32.const 16))
    (memory.copy (i32.const 200) (i32.const 100) (i32.const 16))
    (memory.fill (i32.const 204) (local.get $x) (i32.const 4))
    (data.drop $d)
    (table.init $t $e (i32.const 0) (i32.const 0) (i32.const 2))
    (table.copy $t $t (i32.const 3) (i32.const 0) (i32.const 1))
    (table.fill $t (i32.const 1) (ref.func $triple) (i32.const 1))
    (elem.drop $e)
    (i32.add
      (i32.add (i32.load offset=200 (i32.const 0)) (i32.load offset=204 (i32.const 0)))
      (i32.add
        (call_indirect $t (type $i2i) (local.get $x) (i32.const 3))
        (i32.add (memory.size) (memory.grow (i32.const 0))))))

  ;; Sign extension, saturating conversions, mutable globals, multi-value if.
  (func (export "numeric") (param $x i32) (result i64)
    (global.set $g (i64.add (global.get $g) (i64.extend8_s (i64.extend_i32_u (local.get $x)))))
    (i64.add
      (i64.add (global.get $g) (i64.trunc_sat_f64_s (f64.const 1e300)))
      (i64.extend_i32_s (i32.add
        (i32.extend16_s (local.get $x))
        (i32.trunc_sat_f32_u (f32.const -5))))))
)
