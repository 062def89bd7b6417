// Small assertion helpers shared by the real-client scripts. Plain Node, no framework:
// every check prints one line; the first failed check prints FAIL and exits 1.
'use strict';

const util = require('util');

let finished = false;
let current = '(setup)';

function show(v) {
  if (Buffer.isBuffer(v)) return 'Buffer(' + JSON.stringify(v.toString()) + ')';
  return util.inspect(v, { depth: 4, breakLength: Infinity });
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
    fail(what + ': got ' + show(actual) + ', want ' + show(expected));
  }
  console.log('ok   ' + what + ' = ' + show(expected));
}

// noErr fails when a client callback reported an error.
function noErr(err, what) {
  if (err) fail(what + ': unexpected error ' + show(err && (err.stack || err.message || err)) + ' ' + show(err));
}

function skip(what, why) {
  console.log('skip ' + what + ': ' + why);
}

// call runs fn(callback) and resolves with the callback's arguments as an array. A
// callback that never comes is caught by the watchdog below.
function call(fn) {
  return new Promise((resolve) => fn((...args) => resolve(args)));
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

module.exports = { step, ok, eq, noErr, skip, call, run, fail, target, show };
