// The reference system's JavaScript MapReduce built-ins, written for Cairn from their
// documented behaviour (docs/hooks-javascript.md), quirks included. Every VM evaluates
// this file first. Store is the same object under the interface's neutral name. The
// functions use the intrinsics captured here, so a job that replaces JSON.parse or
// Array.prototype.sort in a VM does not change them for the jobs after it.
var Riak = (function () {
  var call = Function.prototype.call;
  var parseJSON = JSON.parse;
  var isArray = Array.isArray;
  var globalEval = eval;
  var slice = call.bind(Array.prototype.slice);
  var sort = call.bind(Array.prototype.sort);
  var push = call.bind(Array.prototype.push);
  var InternalErr = InternalError;

  var Riak = {
    // getClassName returns the name of obj's constructor, or undefined.
    getClassName: function (obj) {
      if (!obj) {
        return undefined;
      }
      var c = obj.constructor;
      if (typeof c !== "function" || typeof c.name !== "string" || c.name === "") {
        return undefined;
      }
      return c.name;
    },

    // filterNotFound drops the values that are objects with a not_found member.
    filterNotFound: function (values) {
      var kept = [];
      for (var i = 0; i < values.length; i++) {
        var v = values[i];
        if (v !== null && typeof v === "object" && v.not_found !== undefined) {
          continue;
        }
        push(kept, v);
      }
      return kept;
    },

    // mapValues returns the first sibling's data: as it is when it is an array, else in
    // a one-element array. A missing input passes through as [value].
    mapValues: function (value, keyData, arg) {
      if (value.not_found) {
        return [value];
      }
      var data = value.values[0].data;
      if (isArray(data)) {
        return data;
      }
      return [data];
    },

    // mapValuesJson is mapValues with every element parsed as JSON.
    mapValuesJson: function (value, keyData, arg) {
      if (value.not_found) {
        return [value];
      }
      var data = Riak.mapValues(value, keyData, arg);
      var parsed = [];
      for (var i = 0; i < data.length; i++) {
        push(parsed, parseJSON(data[i]));
      }
      return parsed;
    },

    // mapByFields keeps the parsed value when every field of arg equals (==) the value's.
    mapByFields: function (value, keyData, fields) {
      if (value.not_found) {
        return [];
      }
      var obj = Riak.mapValuesJson(value, keyData, fields)[0];
      for (var f in fields) {
        if (obj[f] != fields[f]) {
          return [];
        }
      }
      return [obj];
    },

    // reduceSum adds the values that are not not_found markers with +, so strings
    // concatenate; [0] when none is left.
    reduceSum: function (values, arg) {
      var vs = Riak.filterNotFound(values);
      if (vs.length === 0) {
        return [0];
      }
      var sum = vs[0];
      for (var i = 1; i < vs.length; i++) {
        sum = sum + vs[i];
      }
      return [sum];
    },

    // reduceMin returns [the smallest value by <], or [] for no values.
    reduceMin: function (values, arg) {
      if (values.length === 0) {
        return [];
      }
      var m = values[0];
      for (var i = 1; i < values.length; i++) {
        m = m < values[i] ? m : values[i];
      }
      return [m];
    },

    // reduceMax returns [the largest value by >], or [] for no values.
    reduceMax: function (values, arg) {
      if (values.length === 0) {
        return [];
      }
      var m = values[0];
      for (var i = 1; i < values.length; i++) {
        m = m > values[i] ? m : values[i];
      }
      return [m];
    },

    // reduceSort sorts with the comparator whose source is arg; when arg is not the
    // source of a function, or the comparator throws, with the default (string) order.
    reduceSort: function (values, arg) {
      var cmp;
      if (typeof arg === "string") {
        try {
          cmp = globalEval("(" + arg + "\n)");
        } catch (e) {
          if (e === null || e instanceof InternalErr) {
            throw e;
          }
          cmp = undefined;
        }
      }
      if (typeof cmp === "function") {
        try {
          return sort(values, cmp);
        } catch (e) {
          if (e === null || e instanceof InternalErr) {
            throw e;
          }
        }
      }
      return sort(values);
    },

    // reduceNumericSort sorts by a - b.
    reduceNumericSort: function (values, arg) {
      return sort(values, function (a, b) {
        return a - b;
      });
    },

    // reduceLimit returns the first n - 1 values (the reference's off-by-one).
    reduceLimit: function (values, n) {
      return slice(values, 0, n - 1);
    },

    // reduceSlice returns values[start:end], or all values when end is past the end.
    reduceSlice: function (values, arg) {
      var start = arg[0];
      var end = arg[1];
      if (end > values.length) {
        return values;
      }
      return slice(values, start, end);
    },
  };
  return Riak;
})();
var Store = Riak;
