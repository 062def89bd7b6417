// Small assertion helpers shared by the real-client scripts. Plain Node, no framework:
// every check prints one line; the first failed check prints FAIL and exits 1.
'use strict';

const util = require('util');

let finished = false;
let current = '(setup)';

function show(v) {
  if (Buffer.isBuffer(v)) return 'Buffer(' + JSON.stringify(v.toString()) + ')';
  const one = (x) => util.inspect(x, { depth: 4, breakLength: Infinity });
  if (Array.isArray(v) && v.length > 6) { // on one line; long listings as their ends and length
    const part = (a) => a.map(one).join(', ');
    if (v.length <= 12) return '[ ' + part(v) + ' ]';
    return '[ ' + part(v.slice(0, 5)) + ', … ' + (v.length - 8) + ' more …, ' + part(v.slice(-3)) + ' ] (' + v.length + ' items)';
  }
  return one(v);
}

// arrayDiff describes how two arrays differ: the first differing index, and the
// elements only one of them has.
function arrayDiff(actual, expected) {
  let i = 0;
  while (i < actual.length && i < expected.length && util.isDeepStrictEqual(actual[i], expected[i])) i++;
  const key = (x) => JSON.stringify(x);
  const count = (a) => a.reduce((m, x) => m.set(key(x), (m.get(key(x)) || 0) + 1), new Map());
  const minus = (a, b) => {
    const cb = count(b);
    return a.filter((x) => { const n = cb.get(key(x)) || 0; cb.set(key(x), n - 1); return n <= 0; });
  };
  return ' (first difference at index ' + i + '; unexpected: ' + show(minus(actual, expected)) +
    '; missing: ' + show(minus(expected, actual)) + ')';
}

function fail(msg) {
  console.error('FAIL [' + current + '] ' + msg);
  process.exit(1);
}

// step names the group of checks that follow, so a failure says where it happened.
function step(name) {
  current = name;
  console.log('--- ' + name);
}

function ok(cond, what, detail) {
  if (!cond) fail(what + (detail === undefined ? '' : ': ' + detail));
  console.log('ok   ' + what);
}

function eq(actual, expected, what) {
  if (!util.isDeepStrictEqual(actual, expected)) {
    const diff = Array.isArray(actual) && Array.isArray(expected) ? arrayDiff(actual, expected) : '';
    fail(what + ': got ' + show(actual) + ', want ' + show(expected) + diff);
  }
  console.log('ok   ' + what + ' = ' + show(expected));
}

// noErr fails when a client callback reported an error.
function noErr(err, what) {
  if (err) fail(what + ': unexpected error ' + show(err && (err.stack || err.message || err)) + ' ' + show(err));
}

// info prints an observation that is not a check (e.g. how a stream was batched).
function info(what) {
  console.log('info ' + what);
}

function skip(what, why) {
  console.log('skip ' + what + ': ' + why);
}

// call runs fn(callback) and resolves with the callback's arguments as an array. A
// callback that never comes is caught by the watchdog below.
function call(fn) {
  return new Promise((resolve) => fn((...args) => resolve(args)));
}

// inParallel calls fn(item, index) for every item, at most limit calls at a time
// (fn returns a promise), and resolves when all have finished.
async function inParallel(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// drain listens to a client's event emitter: it collects the payload of every
// dataEvent and every 'error', and resolves with { items, errors, end } (end: the
// arguments of the 'end' event) once 'end' is emitted. An 'error' listener is always
// attached, as an emitter without one throws.
function drain(emitter, dataEvent) {
  return new Promise((resolve) => {
    const items = [];
    const errors = [];
    emitter.on(dataEvent, (x) => items.push(x));
    emitter.on('error', (e) => errors.push(e));
    emitter.on('end', (...end) => resolve({ items, errors, end }));
  });
}

// sorted returns a sorted copy (default string order).
function sorted(a, cmp) {
  return a.slice().sort(cmp);
}

// run executes main, then exits 0 after printing PASS. Uncaught exceptions (thrown by a
// client inside its own callbacks), a rejected promise, a stuck callback (watchdog) or
// the event loop running dry before main ends all fail the script.
function run(name, main) {
  process.on('uncaughtException', (e) => fail('uncaught exception: ' + (e && e.stack || e)));
  process.on('unhandledRejection', (e) => fail('unhandled rejection: ' + (e && e.stack || e)));
  process.on('exit', (code) => {
    if (!finished && code === 0) {
      console.error('FAIL [' + current + '] script ended early: a client callback was never called');
      process.exitCode = 1;
    }
  });
  const ms = Number(process.env.REALCLIENT_TIMEOUT_MS || 25000);
  setTimeout(() => fail('timed out after ' + ms + ' ms (a client call never completed)'), ms).unref();
  console.log(name + ' on Node ' + process.version + ' against ' + target().host + ':' + target().port);
  main().then(() => {
    finished = true;
    console.log('PASS ' + name);
    process.exit(0); // clients keep idle keep-alive sockets open
  }, (e) => fail('exception: ' + (e && e.stack || e)));
}

// target is the server under test, from the environment the Go test sets.
function target() {
  const host = process.env.RIAK_HOST;
  const port = Number(process.env.RIAK_PORT);
  if (!host || !port) fail('RIAK_HOST and RIAK_PORT must be set');
  return { host, port };
}

module.exports = { step, ok, eq, noErr, skip, info, call, run, fail, target, show, inParallel, drain, sorted };
