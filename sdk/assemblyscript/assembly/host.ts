// The boundary with the host: the required exports (cairn_alloc, cairn_abi_v1), the two
// imports of module "cairn" (output, log), and an abort handler that reports through the
// log instead of importing env.abort.

import { LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARN } from "./abi";

// @ts-ignore: decorator
@external("cairn", "output")
declare function hostOutput(ptr: usize, len: i32): void;

// @ts-ignore: decorator
@external("cairn", "log")
declare function hostLog(level: i32, ptr: usize, len: i32): void;

// The input buffer handed out by cairn_alloc. A global, so the collector keeps it alive
// while the host writes into it and the entry function reads it.
let inputBuffer: ArrayBuffer = new ArrayBuffer(0);

/**
 * cairn_alloc returns a buffer of at least n bytes for the next input. The buffer belongs
 * to the module and is reused by later calls. Re-export it from your entry file:
 * `export { cairn_alloc, cairn_abi_v1 } from "@cairn/hook-sdk";`
 */
export function cairn_alloc(n: i32): usize {
  if (n < 0) unreachable();
  if (inputBuffer.byteLength < n) {
    // Grow geometrically so a run of growing inputs does not reallocate every time.
    let size = inputBuffer.byteLength << 1;
    if (size < n) size = n;
    if (size < 1024) size = 1024;
    inputBuffer = new ArrayBuffer(size);
  }
  return changetype<usize>(inputBuffer);
}

/** cairn_abi_v1 is the ABI marker export; the host never calls it. Re-export it. */
export function cairn_abi_v1(): void {}

/**
 * inputBytes returns the input of the current call as bytes. When ptr is the buffer
 * cairn_alloc handed out, the result is a view of it (no copy), valid until the next
 * call; otherwise the bytes are copied.
 */
export function inputBytes(ptr: usize, len: i32): Uint8Array {
  if (len < 0) len = 0;
  const base = changetype<usize>(inputBuffer);
  if (ptr == base && len <= inputBuffer.byteLength) {
    return Uint8Array.wrap(inputBuffer, 0, len);
  }
  const out = new Uint8Array(len);
  memory.copy(out.dataStart, ptr, <usize>len);
  return out;
}

/** inputText returns the input of the current call decoded as UTF-8. */
export function inputText(ptr: usize, len: i32): string {
  if (len <= 0) return "";
  return String.UTF8.decodeUnsafe(ptr, <usize>len);
}

/** output hands bytes to the host as the call's result. The last call wins. */
export function output(data: Uint8Array): void {
  hostOutput(data.dataStart, data.length);
}

/** outputText hands a string, encoded as UTF-8, to the host as the call's result. */
export function outputText(s: string): void {
  const b = String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
  hostOutput(changetype<usize>(b), b.byteLength);
}

/** log writes one line to the server log at level (LOG_DEBUG .. LOG_ERROR). */
export function log(level: i32, message: string): void {
  const b = String.UTF8.encode(message, false, String.UTF8.ErrorMode.REPLACE);
  hostLog(level, changetype<usize>(b), b.byteLength);
}

/** logDebug logs message at debug level. */
export function logDebug(message: string): void {
  log(LOG_DEBUG, message);
}

/** logInfo logs message at info level. */
export function logInfo(message: string): void {
  log(LOG_INFO, message);
}

/** logWarn logs message at warn level. */
export function logWarn(message: string): void {
  log(LOG_WARN, message);
}

/** logError logs message at error level. */
export function logError(message: string): void {
  log(LOG_ERROR, message);
}

// Scratch memory for the abort message: a static segment, so reporting an abort needs no
// allocation (an abort may come from inside the runtime, with the heap in any state).
// The code below uses literals only, no module constants: the compiler refuses globals
// there because abort may run before the module's globals are initialized. The buffer
// holds 512 bytes; the log level is 2 (LOG_ERROR).

// abortPut appends the string s to the abort message at offset at, as ASCII with other
// characters shown as '?', and returns the new offset.
function abortPut(buf: usize, at: i32, s: string): i32 {
  const n = s.length;
  for (let i = 0; i < n && at < 512; i++) {
    const c = s.charCodeAt(i);
    store<u8>(buf + <usize>at, c >= 0x20 && c < 0x7f ? <u8>c : 0x3f);
    at++;
  }
  return at;
}

// abortPutUint appends the decimal digits of v and returns the new offset.
function abortPutUint(buf: usize, at: i32, v: u32): i32 {
  let div: u32 = 1;
  while (v / div >= 10) div *= 10;
  while (div > 0 && at < 512) {
    store<u8>(buf + <usize>at, <u8>(0x30 + (v / div) % 10));
    at++;
    div /= 10;
  }
  return at;
}

/**
 * cairnAbort replaces AssemblyScript's env.abort: it logs "abort: MESSAGE at FILE:LINE:COL"
 * at error level, then traps (the host reports the call as crashed and replaces the
 * instance). It allocates nothing. (Running out of memory is not an abort: the runtime
 * traps directly, and the host reports that as a crash too.) Select it
 * with `--use abort=~lib/@cairn/hook-sdk/assembly/host/cairnAbort` (the SDK's
 * asconfig.json does).
 */
export function cairnAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  const buf = memory.data(512);
  let at = abortPut(buf, 0, "abort");
  if (message !== null) {
    at = abortPut(buf, at, ": ");
    at = abortPut(buf, at, message);
  }
  if (fileName !== null) {
    at = abortPut(buf, at, " at ");
    at = abortPut(buf, at, fileName);
    at = abortPut(buf, at, ":");
    at = abortPutUint(buf, at, line);
    at = abortPut(buf, at, ":");
    at = abortPutUint(buf, at, column);
  }
  hostLog(2, buf, at);
  unreachable();
}
