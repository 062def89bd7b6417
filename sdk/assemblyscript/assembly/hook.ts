// Inputs and results of each extension point, and the handle* helpers that turn an
// entry point (ptr, len) -> status into a typed function.

import {
  KEY_HASH_MAX_BYTES,
  OP_DELETE,
  OP_PUT,
  PREFIX_STORE,
  STATUS_ERROR,
  STATUS_OK,
  STATUS_REJECT,
  WILDCARD,
} from "./abi";
import { inputBytes, output } from "./host";
import { JSONValue, JSONWriter, jsonError, jsonNull, parseJSON } from "./json";
import { CairnObject, Link, objectError, readObject, writeLinks } from "./object";
import { utf8Bytes } from "./utf8";

/** CommitInput is the input of a precommit or postcommit: the operation and the object. */
export class CommitInput {
  constructor(public op: string, public object: CairnObject) {}

  /** isPut reports whether the operation is a put. */
  isPut(): bool {
    return this.op == OP_PUT;
  }

  /** isDelete reports whether the operation is a delete (the object is a tombstone). */
  isDelete(): bool {
    return this.op == OP_DELETE;
  }
}

/** KeyFunInput is the input of a chash_keyfun: the place of a key. */
export class KeyFunInput {
  constructor(public bucketType: string, public bucket: string, public key: string) {}
}

/** LinkFunInput is the input of a linkfun: an object and the spec to match. */
export class LinkFunInput {
  constructor(public object: CairnObject, public bucket: string, public tag: string) {}

  /** matches reports whether link l matches the spec ("_" matches anything). */
  matches(l: Link): bool {
    return (this.bucket == WILDCARD || this.bucket == l.bucket) && (this.tag == WILDCARD || this.tag == l.tag);
  }
}

/** Place names an object that was not found. */
export class Place {
  constructor(public bucketType: string, public bucket: string, public key: string) {}
}

/**
 * MapInput is the input of a map: an object, or the place of a missing one, with the
 * input's key data and the phase argument (JSON null when absent).
 */
export class MapInput {
  constructor(
    public object: CairnObject | null,
    public notFound: Place | null,
    public keydata: JSONValue,
    public arg: JSONValue,
  ) {}
}

/** ReduceInput is the input of a reduce: the values so far and the phase argument. */
export class ReduceInput {
  constructor(public values: Array<JSONValue>, public arg: JSONValue) {}
}

// The reason the last read*Input failed.
let lastInputError = "";

/** inputError returns why the last read*Input returned null. */
export function inputError(): string {
  return lastInputError;
}

// parseInput parses the input bytes as a JSON object.
function parseInput(data: Uint8Array): JSONValue | null {
  const v = parseJSON(data);
  if (v === null) {
    lastInputError = "input: " + jsonError();
    return null;
  }
  if (!v.isObject()) {
    lastInputError = "input: not a JSON object";
    return null;
  }
  return v;
}

// memberObject reads member name of v as a CairnObject.
function memberObject(v: JSONValue, name: string): CairnObject | null {
  const m = v.get(name);
  if (m === null) {
    lastInputError = "input: no " + name;
    return null;
  }
  const o = readObject(m);
  if (o === null) lastInputError = "input: " + objectError();
  return o;
}

function orNull(v: JSONValue | null): JSONValue {
  return v === null ? jsonNull() : v;
}

/** readCommitInput reads {"op":…,"object":…}; null (see inputError()) when malformed. */
export function readCommitInput(data: Uint8Array): CommitInput | null {
  const v = parseInput(data);
  if (v === null) return null;
  const op = v.getString("op");
  if (op != OP_PUT && op != OP_DELETE) {
    lastInputError = "input: op is not \"put\" or \"delete\"";
    return null;
  }
  const o = memberObject(v, "object");
  if (o === null) return null;
  return new CommitInput(op, o);
}

/** readKeyFunInput reads {"bucket_type":…,"bucket":…,"key":…}. */
export function readKeyFunInput(data: Uint8Array): KeyFunInput | null {
  const v = parseInput(data);
  if (v === null) return null;
  return new KeyFunInput(v.getString("bucket_type", "default"), v.getString("bucket"), v.getString("key"));
}

/** readLinkFunInput reads {"object":…,"spec":{"bucket":…,"tag":…}}. */
export function readLinkFunInput(data: Uint8Array): LinkFunInput | null {
  const v = parseInput(data);
  if (v === null) return null;
  const o = memberObject(v, "object");
  if (o === null) return null;
  let bucket = WILDCARD;
  let tag = WILDCARD;
  const spec = v.get("spec");
  if (spec !== null && spec.isObject()) {
    bucket = spec.getString("bucket", WILDCARD);
    tag = spec.getString("tag", WILDCARD);
  }
  return new LinkFunInput(o, bucket, tag);
}

/** readMapInput reads {"object":…} or {"not_found":…}, with "keydata" and "arg". */
export function readMapInput(data: Uint8Array): MapInput | null {
  const v = parseInput(data);
  if (v === null) return null;
  const keydata = orNull(v.get("keydata"));
  const arg = orNull(v.get("arg"));
  const nf = v.get("not_found");
  if (nf !== null && nf.isObject()) {
    const place = new Place(nf.getString("bucket_type", "default"), nf.getString("bucket"), nf.getString("key"));
    return new MapInput(null, place, keydata, arg);
  }
  const o = memberObject(v, "object");
  if (o === null) return null;
  return new MapInput(o, null, keydata, arg);
}

/** readReduceInput reads {"values":[…],"arg":…}. */
export function readReduceInput(data: Uint8Array): ReduceInput | null {
  const v = parseInput(data);
  if (v === null) return null;
  const values = new Array<JSONValue>();
  const list = v.get("values");
  if (list !== null && !list.isNull()) {
    if (!list.isArray()) {
      lastInputError = "input: values is not an array";
      return null;
    }
    for (let i = 0; i < list.length; i++) values.push(list.at(i)!);
  }
  return new ReduceInput(values, orNull(v.get("arg")));
}

/**
 * Result is what an entry point returns: a status and the output bytes (none for a
 * plain accept). Build one with the static constructors and return result.send().
 */
export class Result {
  constructor(public status: i32, public output: Uint8Array | null) {}

  /** ok: status 0 with no output (precommit: accept the object unchanged). */
  static ok(): Result {
    return new Result(STATUS_OK, null);
  }

  /** accept: a precommit accepts the object unchanged (same as ok). */
  static accept(): Result {
    return new Result(STATUS_OK, null);
  }

  /**
   * replace: a precommit accepts obj instead of the written object. The host takes the
   * first sibling's value and metadata and keeps its own place and clock.
   */
  static replace(obj: CairnObject, prefix: string = PREFIX_STORE): Result {
    const w = new JSONWriter();
    obj.write(w, prefix);
    return new Result(STATUS_OK, w.bytes());
  }

  /** reject: a precommit refuses the write; the client gets 403 with reason. */
  static reject(reason: string): Result {
    return new Result(STATUS_REJECT, utf8Bytes(reason));
  }

  /** fail: the call failed with message (any extension point). */
  static fail(message: string): Result {
    return new Result(STATUS_ERROR, utf8Bytes(message));
  }

  /** keyHash: a chash_keyfun result of 1 to 20 bytes, read as a big-endian integer. */
  static keyHash(hash: Uint8Array): Result {
    if (hash.length < 1 || hash.length > KEY_HASH_MAX_BYTES) {
      return Result.fail("keyfun: hash must be 1 to 20 bytes, not " + hash.length.toString());
    }
    return new Result(STATUS_OK, hash);
  }

  /** links: a linkfun result. */
  static links(links: Array<Link>): Result {
    const w = new JSONWriter();
    writeLinks(w, links);
    return new Result(STATUS_OK, w.bytes());
  }

  /** values: a map or reduce result, written as a JSON array. */
  static values(values: Array<JSONValue>): Result {
    const w = new JSONWriter();
    w.beginArray();
    for (let i = 0; i < values.length; i++) unchecked(values[i]).write(w);
    w.endArray();
    return new Result(STATUS_OK, w.bytes());
  }

  /** json: status 0 with v's JSON text as the output. */
  static json(v: JSONValue): Result {
    const w = new JSONWriter();
    v.write(w);
    return new Result(STATUS_OK, w.bytes());
  }

  /** raw: any status with the given output bytes. */
  static raw(status: i32, data: Uint8Array): Result {
    return new Result(status, data);
  }

  /** send hands the output (if any) to the host and returns the status. */
  send(): i32 {
    const out = this.output;
    if (out !== null) output(out);
    return this.status;
  }
}

/**
 * handlePrecommit runs fn on the precommit input at (ptr, len). A malformed input fails
 * the call (status 2).
 *
 *   export function validate(ptr: usize, len: i32): i32 {
 *     return handlePrecommit(ptr, len, (req: CommitInput): Result => Result.accept());
 *   }
 */
export function handlePrecommit(ptr: usize, len: i32, fn: (req: CommitInput) => Result): i32 {
  const req = readCommitInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}

/** handlePostcommit runs fn on the postcommit input at (ptr, len); its output is ignored. */
export function handlePostcommit(ptr: usize, len: i32, fn: (req: CommitInput) => Result): i32 {
  const req = readCommitInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}

/** handleKeyFun runs fn on the chash_keyfun input at (ptr, len). */
export function handleKeyFun(ptr: usize, len: i32, fn: (req: KeyFunInput) => Result): i32 {
  const req = readKeyFunInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}

/** handleLinkFun runs fn on the linkfun input at (ptr, len). */
export function handleLinkFun(ptr: usize, len: i32, fn: (req: LinkFunInput) => Result): i32 {
  const req = readLinkFunInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}

/** handleMap runs fn on the map input at (ptr, len). */
export function handleMap(ptr: usize, len: i32, fn: (req: MapInput) => Result): i32 {
  const req = readMapInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}

/** handleReduce runs fn on the reduce input at (ptr, len). */
export function handleReduce(ptr: usize, len: i32, fn: (req: ReduceInput) => Result): i32 {
  const req = readReduceInput(inputBytes(ptr, len));
  if (req === null) return Result.fail(lastInputError).send();
  return fn(req).send();
}
