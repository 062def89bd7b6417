// The host's entry point into a VM. Every VM evaluates this script after the built-ins
// and the source directory; its completion value is the one function the host calls,
// dispatch(op, f, a, b, c). It captures the intrinsics it uses when the VM starts, so
// user code that replaces those globals cannot change how values cross.
// Results come back as one string whose first character says what it is:
//   "A" + JSON array       a map or reduce result
//   "O" + JSON object      a precommit's object
//   "R" + reason           a precommit's {"fail": reason}
//   "F"                    a precommit's "fail"
//   "B" + description      a result of the wrong shape
(function (global) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var isArray = Array.isArray;
  var keys = Object.keys;
  var call = Function.prototype.call;
  var split = call.bind(String.prototype.split);
  var cut = call.bind(String.prototype.slice);
  var toString = String;
  var Internal = InternalError;
  var max = 200;

  // fatal reports whether an exception must go on: the engine's own errors (out of
  // memory, stack overflow; an interrupt cannot be caught at all) and the null thrown
  // when there is no memory left to make an error object.
  function fatal(e) {
    return e === null || e instanceof Internal;
  }

  function describe(r) {
    var s;
    try {
      s = stringify(r);
    } catch (e) {
      if (fatal(e)) {
        throw e;
      }
    }
    if (s === undefined) {
      s = toString(r);
    }
    if (s.length > max) {
      s = cut(s, 0, max) + "…";
    }
    var kind = r === null ? "null" : isArray(r) ? "an array" : typeof r;
    return kind + " " + s;
  }

  function list(r) {
    if (!isArray(r)) {
      return "Bnot a list: " + describe(r);
    }
    try {
      return "A" + stringify(r);
    } catch (e) {
      if (fatal(e)) {
        throw e;
      }
      return "Ba list that is not JSON: " + e;
    }
  }

  var ops = {
    map: function (f, value, keyData, arg) {
      return list(f(parse(value), parse(keyData), parse(arg)));
    },
    reduce: function (f, values, arg) {
      return list(f(parse(values), parse(arg)));
    },
    precommit: function (f, object) {
      var r = f(parse(object));
      if (r === "fail") {
        return "F";
      }
      if (r !== null && typeof r === "object" && !isArray(r)) {
        var k = keys(r);
        if (k.length === 1 && k[0] === "fail") {
          var reason = r.fail;
          if (typeof reason !== "string") {
            reason = describe(reason);
          }
          return "R" + reason;
        }
        try {
          return "O" + stringify(r);
        } catch (e) {
          if (fatal(e)) {
            throw e;
          }
          return "Ban object that is not JSON: " + e;
        }
      }
      return "Bneither an object, \"fail\" nor {\"fail\": reason}: " + describe(r);
    },
    // resolve returns the function a dotted name reaches from the global object, or
    // null.
    resolve: function (name) {
      var parts = split(name, ".");
      var o = global;
      for (var i = 0; i < parts.length; i++) {
        if (o === null || o === undefined) {
          return null;
        }
        o = o[parts[i]];
      }
      return typeof o === "function" ? o : null;
    },
    // has reports whether resolve finds a function.
    has: function (name) {
      return ops.resolve(name) !== null;
    },
    isFunction: function (v) {
      return typeof v === "function";
    },
  };

  return function (op, f, a, b, c) {
    return ops[op](f, a, b, c);
  };
})(globalThis)
