// Local test helper for Cairn hook modules (ABI v1), for node 18+. It loads a .wasm the
// way the Cairn host does — checks the exports and imports, provides cairn.output and
// cairn.log — and calls a function: cairn_alloc(n), copy the input, fn(ptr, n) -> status.
//
//   import { loadHook } from "@cairn/hook-sdk/harness.mjs";
//   const hook = await loadHook("build/hook.wasm");
//   const r = hook.call("validate", { op: "put", object: { ... } });
//   // r.status (0 ok, 1 reject, 2 error), r.output (Buffer), r.text, r.json(), r.logs
//
// It runs modules in node's engine, not in wazero, and applies no deadline or memory cap;
// `cairn hook call` runs them exactly as the server does.

import { readFile } from "node:fs/promises";

/** The statuses of ABI v1. */
export const STATUS_OK = 0;
export const STATUS_REJECT = 1;
export const STATUS_ERROR = 2;

/** Log level names by ABI level. */
export const LOG_LEVELS = { [-1]: "debug", 0: "info", 1: "warn", 2: "error" };

const ENTRY_SIGNATURE = "(i32,i32)->i32";

/**
 * checkModule validates a compiled WebAssembly.Module against ABI v1 the way the host does
 * at registration, and returns the names of its entry points. It throws an Error naming
 * the first problem.
 */
export function checkModule(module) {
  const exports = WebAssembly.Module.exports(module);
  const imports = WebAssembly.Module.imports(module);
  const byName = new Map(exports.map((e) => [e.name, e.kind]));
  if (byName.get("memory") !== "memory") throw new Error("cairn: module does not export memory");
  if (byName.get("cairn_abi_v1") !== "function") throw new Error("cairn: module does not export the cairn_abi_v1 marker");
  if (byName.get("cairn_alloc") !== "function") throw new Error("cairn: module does not export cairn_alloc");
  for (const imp of imports) {
    const ok =
      (imp.module === "cairn" && (imp.name === "output" || imp.name === "log") && imp.kind === "function") ||
      (imp.module === "wasi_snapshot_preview1" && imp.kind === "function");
    if (!ok) throw new Error(`cairn: import ${imp.module}.${imp.name} (${imp.kind}) is not allowed; only cairn.output, cairn.log and wasi_snapshot_preview1.*`);
  }
  const reserved = new Set(["memory", "cairn_abi_v1", "cairn_alloc", "_initialize", "_start"]);
  return exports.filter((e) => e.kind === "function" && !reserved.has(e.name)).map((e) => e.name);
}

/** Hook is one instance of a module with the cairn imports attached. */
export class Hook {
  constructor(instance, functions) {
    this.instance = instance;
    /** functions lists the module's entry points. */
    this.functions = functions;
    this.current = null;
  }

  /**
   * call runs function fun on input (a string, a Uint8Array/Buffer, or any other value,
   * which is JSON-encoded) and returns {status, output, text, logs, json()}. A trap
   * throws (the host would report the call as crashed).
   */
  call(fun, input) {
    const fn = this.instance.exports[fun];
    if (typeof fn !== "function") throw new Error(`cairn: module has no function ${fun}`);
    const bytes = toBytes(input);
    const state = { output: Buffer.alloc(0), logs: [] };
    this.current = state;
    try {
      const ptr = this.instance.exports.cairn_alloc(bytes.length) >>> 0;
      new Uint8Array(this.instance.exports.memory.buffer, ptr, bytes.length).set(bytes);
      const status = fn(ptr, bytes.length);
      if (status !== STATUS_OK && status !== STATUS_REJECT && status !== STATUS_ERROR) {
        throw new Error(`cairn: ${fun} returned unknown status ${status}`);
      }
      const out = state.output;
      return {
        status,
        output: out,
        text: out.toString("utf8"),
        logs: state.logs,
        json() {
          return JSON.parse(out.toString("utf8"));
        },
      };
    } finally {
      this.current = null;
    }
  }

  /** memoryBytes returns the current size of the instance's memory. */
  memoryBytes() {
    return this.instance.exports.memory.buffer.byteLength;
  }
}

function toBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (typeof input === "string") return Buffer.from(input, "utf8");
  return Buffer.from(JSON.stringify(input), "utf8");
}

// wasiStub provides every wasi_snapshot_preview1 import the module asks for: a call
// returns ENOSYS (52), as no file, clock or random source is offered here.
function wasiStub(module) {
  const funcs = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module === "wasi_snapshot_preview1") funcs[imp.name] = () => 52;
  }
  return funcs;
}

/**
 * loadHook compiles and instantiates a module (a path, or the bytes) and returns a Hook.
 * onLog, when given, receives (levelName, message) for every cairn.log call too.
 */
export async function loadHook(source, { onLog } = {}) {
  const bytes = typeof source === "string" ? await readFile(source) : source;
  const module = await WebAssembly.compile(bytes);
  const functions = checkModule(module);
  let hook = null;
  // The memory is reachable once instantiation has returned; calls made by a start
  // function before that are dropped.
  const mem = () => (hook.instance ? hook.instance.exports.memory.buffer : null);
  const imports = {
    cairn: {
      output(ptr, len) {
        if (!mem()) return;
        const b = Buffer.from(new Uint8Array(mem(), ptr >>> 0, len >>> 0));
        if (hook.current) hook.current.output = b;
      },
      log(level, ptr, len) {
        if (!mem()) return;
        const message = Buffer.from(new Uint8Array(mem(), ptr >>> 0, len >>> 0)).toString("utf8");
        const name = LOG_LEVELS[level] ?? String(level);
        if (hook.current) hook.current.logs.push({ level: name, message });
        if (onLog) onLog(name, message);
      },
    },
    wasi_snapshot_preview1: wasiStub(module),
  };
  hook = new Hook(null, functions);
  hook.instance = await WebAssembly.instantiate(module, imports);
  if (typeof hook.instance.exports._initialize === "function") hook.instance.exports._initialize();
  return hook;
}

/**
 * runExpect runs the cases of an example's expect.json against a module and returns a
 * list of failures (empty when all pass). A case is {function, point, input, status,
 * output_contains} and may give output_hex (the exact output, lower-case hex) instead of
 * output_contains for binary outputs such as a chash_keyfun's; output_contains "" means
 * the output must be empty.
 */
export async function runExpect(wasmPath, expectPath) {
  const hook = await loadHook(wasmPath);
  const cases = JSON.parse(await readFile(expectPath, "utf8"));
  const failures = [];
  cases.forEach((c, i) => {
    const name = `case ${i} (${c.function})`;
    let r;
    try {
      // The input is JSON in the file; it is passed as its compact encoding.
      r = hook.call(c.function, JSON.stringify(c.input));
    } catch (err) {
      failures.push(`${name}: ${err.message}`);
      return;
    }
    if (r.status !== c.status) failures.push(`${name}: status ${r.status}, want ${c.status} (output ${JSON.stringify(r.text)})`);
    if (c.output_hex !== undefined) {
      if (r.output.toString("hex") !== c.output_hex) failures.push(`${name}: output ${r.output.toString("hex")}, want ${c.output_hex}`);
    } else if (c.output_contains === "") {
      if (r.output.length !== 0) failures.push(`${name}: output ${JSON.stringify(r.text)}, want none`);
    } else if (typeof c.output_contains === "string" && !r.text.includes(c.output_contains)) {
      failures.push(`${name}: output ${JSON.stringify(r.text)} does not contain ${JSON.stringify(c.output_contains)}`);
    }
  });
  return failures;
}
