;; recursion.wat: recursion with and without end, direct and through a table.
;; Build: wat2wasm recursion.wat -o recursion.wasm
(module
  (type $t (func (param i32) (result i32)))
  (table funcref (elem $ping $pong))

  ;; deep never stops.
  (func $deep (export "deep") (param $x i32) (result i32)
    (i32.add (call $deep (i32.add (local.get $x) (i32.const 1))) (local.get $x)))

  ;; bounded recurses n deep and returns n.
  (func $bounded (export "bounded") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (i32.const 1) (call $bounded (i32.sub (local.get $n) (i32.const 1)))))))

  ;; ping and pong call each other through the table, n deep in all; ping returns n.
  (func $ping (export "ping") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (call_indirect (type $t) (i32.sub (local.get $n) (i32.const 1)) (i32.const 1)))))
  (func $pong (param $n i32) (result i32)
    (i32.add (i32.const 1) (call_indirect (type $t) (local.get $n) (i32.const 0))))
)
