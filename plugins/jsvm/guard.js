// Installed in every VM before anything else. The engine checks for interrupts only
// between JavaScript steps, so a native array method walking a sparse array or an
// array-like object of enormous length (Array.prototype.indexOf.call({length: 2**53}, 1))
// would run for hours past its deadline without allocating anything. Every method of
// Array.prototype whose work grows with this.length is wrapped to refuse lengths past
// LIMIT, which is set so that only sparse arrays and array-likes reach it: a dense
// array needs at least 16 bytes per element, and LIMIT is the VM's memory cap / 16.
// Typed arrays, whose length their memory bounds, are let through.
(function () {
  "use strict";
  var limit = LIMIT;
  var proto = Array.prototype;
  var apply = Function.prototype.call.bind(Function.prototype.apply);
  var defineProperty = Object.defineProperty;
  var isView = ArrayBuffer.isView;
  var Range = RangeError;
  var names = [
    "concat", "copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast",
    "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "join",
    "lastIndexOf", "map", "reduce", "reduceRight", "reverse", "shift", "slice", "some",
    "sort", "splice", "toLocaleString", "toReversed", "toSorted", "toSpliced", "unshift",
  ];
  for (var i = 0; i < names.length; i++) {
    var name = names[i];
    var original = proto[name];
    if (typeof original !== "function") {
      continue;
    }
    var wrapped = (function (original, name) {
      return {
        [name]: function () {
          if (this !== null && this !== undefined && !isView(this)) {
            var length = +this.length;
            if (length > limit) {
              throw new Range("Array.prototype." + name + ": a length of " + length +
                " is more than this sandbox walks (" + limit + ")");
            }
          }
          return apply(original, this, arguments);
        },
      }[name];
    })(original, name);
    defineProperty(wrapped, "length", { value: original.length });
    defineProperty(proto, name, { value: wrapped, writable: true, enumerable: false, configurable: true });
  }
})();
