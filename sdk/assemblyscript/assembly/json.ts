// A small JSON (RFC 8259) reader and writer written for this SDK: parse UTF-8 bytes into
// a JSONValue tree, navigate it, build values, and write them back with correct escaping.
// Numbers keep their literal text, so integers beyond 2^53 (index "_int" values) survive
// a round trip unchanged.

import { utf8SeqLen } from "./utf8";

/** JSONKind is the type of a JSONValue. */
export enum JSONKind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

/** MAX_JSON_DEPTH is the deepest nesting of arrays and objects the parser accepts. */
export const MAX_JSON_DEPTH: i32 = 512;

/**
 * JSONValue is one JSON value. Objects keep their members in order; when a name appears
 * twice, get() finds the last one.
 */
export class JSONValue {
  /** kind is the value's type. */
  kind: JSONKind;
  // For Bool.
  private flag: bool = false;
  // The string of a String, the literal of a Number.
  private text: string = "";
  // The elements of an Array, the member values of an Object.
  private items: Array<JSONValue> | null = null;
  // The member names of an Object (parallel to items).
  private names: Array<string> | null = null;

  constructor(kind: JSONKind) {
    this.kind = kind;
    if (kind == JSONKind.Array || kind == JSONKind.Object) this.items = new Array<JSONValue>();
    if (kind == JSONKind.Object) this.names = new Array<string>();
  }

  /** isNull reports whether the value is null. */
  isNull(): bool {
    return this.kind == JSONKind.Null;
  }
  /** isBool reports whether the value is true or false. */
  isBool(): bool {
    return this.kind == JSONKind.Bool;
  }
  /** isNumber reports whether the value is a number. */
  isNumber(): bool {
    return this.kind == JSONKind.Number;
  }
  /** isString reports whether the value is a string. */
  isString(): bool {
    return this.kind == JSONKind.String;
  }
  /** isArray reports whether the value is an array. */
  isArray(): bool {
    return this.kind == JSONKind.Array;
  }
  /** isObject reports whether the value is an object. */
  isObject(): bool {
    return this.kind == JSONKind.Object;
  }

  /** asBool returns a Bool's value; false for any other kind. */
  asBool(): bool {
    return this.kind == JSONKind.Bool && this.flag;
  }

  /** asString returns a String's value; "" for any other kind. */
  asString(): string {
    return this.kind == JSONKind.String ? this.text : "";
  }

  /** numberText returns a Number's literal as it was parsed or written; "" otherwise. */
  numberText(): string {
    return this.kind == JSONKind.Number ? this.text : "";
  }

  /** asF64 returns a Number's value as f64; NaN for any other kind. */
  asF64(): f64 {
    return this.kind == JSONKind.Number ? parseFloat(this.text) : NaN;
  }

  /**
   * asI64 returns a Number's value as i64: exact for integer literals in range, truncated
   * for fractions and exponents; 0 for any other kind.
   */
  asI64(): i64 {
    if (this.kind != JSONKind.Number) return 0;
    if (isIntegerLiteral(this.text)) return I64.parseInt(this.text, 10);
    return <i64>parseFloat(this.text);
  }

  /** isInteger reports whether the value is a Number written without fraction or exponent. */
  isInteger(): bool {
    return this.kind == JSONKind.Number && isIntegerLiteral(this.text);
  }

  /** length returns the number of elements of an Array or members of an Object; else 0. */
  get length(): i32 {
    const items = this.items;
    return items === null ? 0 : items.length;
  }

  /** at returns element i of an Array (or member value i of an Object), or null. */
  at(i: i32): JSONValue | null {
    const items = this.items;
    if (items === null || i < 0 || i >= items.length) return null;
    return unchecked(items[i]);
  }

  /** nameAt returns the name of member i of an Object, or "". */
  nameAt(i: i32): string {
    const names = this.names;
    if (names === null || i < 0 || i >= names.length) return "";
    return unchecked(names[i]);
  }

  /** get returns the value of the member named name of an Object, or null. */
  get(name: string): JSONValue | null {
    const i = this.indexOf(name);
    return i < 0 ? null : this.at(i);
  }

  /** has reports whether an Object has a member named name. */
  has(name: string): bool {
    return this.indexOf(name) >= 0;
  }

  /**
   * getString returns the string member named name of an Object, or fallback when the
   * member is missing or not a string.
   */
  getString(name: string, fallback: string = ""): string {
    const v = this.get(name);
    if (v === null || v.kind != JSONKind.String) return fallback;
    return v.text;
  }

  /** set sets the member named name of an Object (replacing it if present) and returns this. */
  set(name: string, value: JSONValue): JSONValue {
    const names = this.names;
    const items = this.items;
    if (names === null || items === null) return this;
    const i = this.indexOf(name);
    if (i >= 0) {
      items[i] = value;
    } else {
      names.push(name);
      items.push(value);
    }
    return this;
  }

  /** remove deletes every member named name of an Object and returns this. */
  remove(name: string): JSONValue {
    const names = this.names;
    const items = this.items;
    if (names === null || items === null) return this;
    for (let i = names.length - 1; i >= 0; i--) {
      if (unchecked(names[i]) == name) {
        names.splice(i, 1);
        items.splice(i, 1);
      }
    }
    return this;
  }

  /** push appends value to an Array and returns this. */
  push(value: JSONValue): JSONValue {
    const items = this.items;
    if (this.kind == JSONKind.Array && items !== null) items.push(value);
    return this;
  }

  /** write appends the value's JSON text to w. */
  write(w: JSONWriter): void {
    switch (this.kind) {
      case JSONKind.Null:
        w.writeNull();
        break;
      case JSONKind.Bool:
        w.writeBool(this.flag);
        break;
      case JSONKind.Number:
        w.writeNumberText(this.text);
        break;
      case JSONKind.String:
        w.writeString(this.text);
        break;
      case JSONKind.Array: {
        const items = this.items!;
        w.beginArray();
        for (let i = 0; i < items.length; i++) unchecked(items[i]).write(w);
        w.endArray();
        break;
      }
      default: {
        const items = this.items!;
        const names = this.names!;
        w.beginObject();
        for (let i = 0; i < items.length; i++) {
          w.key(unchecked(names[i]));
          unchecked(items[i]).write(w);
        }
        w.endObject();
      }
    }
  }

  /** toJSON returns the value as JSON text. */
  toJSON(): string {
    const w = new JSONWriter();
    this.write(w);
    return w.toString();
  }

  // indexOf returns the position of the last member named name, or -1.
  private indexOf(name: string): i32 {
    const names = this.names;
    if (names === null) return -1;
    for (let i = names.length - 1; i >= 0; i--) {
      if (unchecked(names[i]) == name) return i;
    }
    return -1;
  }

  /** make builds a scalar value; prefer jsonBool, jsonString, jsonInt and friends. */
  static make(kind: JSONKind, flag: bool, text: string): JSONValue {
    const v = new JSONValue(kind);
    v.flag = flag;
    v.text = text;
    return v;
  }

  /** appendMember appends a member to an Object without looking for an earlier one. */
  appendMember(name: string, value: JSONValue): void {
    this.names!.push(name);
    this.items!.push(value);
  }
}

/** jsonNull returns a new null value. */
export function jsonNull(): JSONValue {
  return new JSONValue(JSONKind.Null);
}

/** jsonBool returns a new boolean value. */
export function jsonBool(b: bool): JSONValue {
  return JSONValue.make(JSONKind.Bool, b, "");
}

/** jsonString returns a new string value. */
export function jsonString(s: string): JSONValue {
  return JSONValue.make(JSONKind.String, false, s);
}

/** jsonInt returns a new number value holding an integer. */
export function jsonInt(n: i64): JSONValue {
  return JSONValue.make(JSONKind.Number, false, n.toString());
}

/** jsonNumber returns a new number value; NaN and infinities become null. */
export function jsonNumber(n: f64): JSONValue {
  if (!isFinite(n)) return jsonNull();
  return JSONValue.make(JSONKind.Number, false, formatF64(n));
}

/**
 * jsonNumberText returns a number value with the literal text, or null when text is not
 * a JSON number literal (use it for integers wider than 64 bits).
 */
export function jsonNumberText(text: string): JSONValue | null {
  if (!isNumberLiteral(text)) return null;
  return JSONValue.make(JSONKind.Number, false, text);
}

/** jsonArray returns a new empty array. */
export function jsonArray(): JSONValue {
  return new JSONValue(JSONKind.Array);
}

/** jsonObject returns a new empty object. */
export function jsonObject(): JSONValue {
  return new JSONValue(JSONKind.Object);
}

// The last parse error, for jsonError().
let lastError = "";

/** jsonError returns the reason the last parseJSON or parseJSONText failed. */
export function jsonError(): string {
  return lastError;
}

/**
 * parseJSON parses one JSON value from UTF-8 bytes. Surrounding whitespace is allowed,
 * anything else after the value is an error. It returns null when the bytes are not
 * valid JSON; jsonError() then says why.
 */
export function parseJSON(data: Uint8Array): JSONValue | null {
  const p = new Parser(data.dataStart, data.length);
  const v = p.parseDocument();
  lastError = p.err;
  return v;
}

/** parseJSONText parses one JSON value from a string (see parseJSON). */
export function parseJSONText(s: string): JSONValue | null {
  const b = String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
  const p = new Parser(changetype<usize>(b), b.byteLength);
  const v = p.parseDocument();
  lastError = p.err;
  return v;
}

// isIntegerLiteral reports whether s is -?digits with no fraction or exponent.
function isIntegerLiteral(s: string): bool {
  const n = s.length;
  let i = 0;
  if (n > 0 && s.charCodeAt(0) == 0x2d) i = 1;
  if (i >= n) return false;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** isNumberLiteral reports whether s is exactly a JSON number literal. */
export function isNumberLiteral(s: string): bool {
  const b = String.UTF8.encode(s);
  const p = new Parser(changetype<usize>(b), b.byteLength);
  return s.length > 0 && p.scanNumber() && p.pos == p.end;
}

/** isCanonicalInteger reports whether s is a decimal integer without leading zeros or "-0". */
export function isCanonicalInteger(s: string): bool {
  if (!isIntegerLiteral(s)) return false;
  const neg = s.charCodeAt(0) == 0x2d;
  const digits = neg ? s.length - 1 : s.length;
  const first = s.charCodeAt(neg ? 1 : 0);
  if (first == 0x30) return digits == 1 && !neg;
  return true;
}

// formatF64 formats a finite f64: integers in the exact range without a fraction.
function formatF64(n: f64): string {
  if (n == Math.trunc(n) && Math.abs(n) < 9007199254740992.0) return (<i64>n).toString();
  return n.toString();
}

// Parser reads JSON from len bytes at ptr.
class Parser {
  ptr: usize;
  end: i32;
  pos: i32 = 0;
  depth: i32 = 0;
  err: string = "";
  // Scratch bytes for strings that contain escapes.
  scratch: Uint8Array = new Uint8Array(0);

  constructor(ptr: usize, len: i32) {
    this.ptr = ptr;
    this.end = len;
  }

  parseDocument(): JSONValue | null {
    this.skipSpace();
    const v = this.parseValue();
    if (v === null) return null;
    this.skipSpace();
    if (this.pos != this.end) return this.fail("unexpected data after the value");
    return v;
  }

  fail(msg: string): JSONValue | null {
    if (this.err.length == 0) this.err = "json: " + msg + " at offset " + this.pos.toString();
    return null;
  }

  // @ts-ignore: decorator
  @inline
  peek(): u32 {
    return <u32>load<u8>(this.ptr + <usize>this.pos);
  }

  skipSpace(): void {
    // Locals instead of fields in the hot loops: the engines keep them in registers.
    const ptr = this.ptr;
    const end = this.end;
    let pos = this.pos;
    while (pos < end) {
      const c = <u32>load<u8>(ptr + <usize>pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  literal(word: string): bool {
    const n = word.length;
    if (this.pos + n > this.end) return false;
    for (let i = 0; i < n; i++) {
      if (<u32>load<u8>(this.ptr + <usize>(this.pos + i)) != <u32>word.charCodeAt(i)) return false;
    }
    this.pos += n;
    return true;
  }

  parseValue(): JSONValue | null {
    if (this.pos >= this.end) return this.fail("unexpected end of input");
    const c = this.peek();
    switch (c) {
      case 0x7b: // {
        return this.parseObject();
      case 0x5b: // [
        return this.parseArray();
      case 0x22: {
        // "
        const s = this.parseString();
        if (s === null) return null;
        return jsonString(s);
      }
      case 0x74: // t
        if (this.literal("true")) return jsonBool(true);
        return this.fail("invalid literal");
      case 0x66: // f
        if (this.literal("false")) return jsonBool(false);
        return this.fail("invalid literal");
      case 0x6e: // n
        if (this.literal("null")) return jsonNull();
        return this.fail("invalid literal");
      default: {
        const start = this.pos;
        if (!this.scanNumber()) return this.fail("invalid value");
        const text = String.UTF8.decodeUnsafe(this.ptr + <usize>start, <usize>(this.pos - start));
        return JSONValue.make(JSONKind.Number, false, text);
      }
    }
  }

  digits(): i32 {
    const start = this.pos;
    while (this.pos < this.end) {
      const c = this.peek();
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos - start;
  }

  // scanNumber moves over one number literal; false (position undefined) if malformed.
  scanNumber(): bool {
    if (this.pos < this.end && this.peek() == 0x2d) this.pos++;
    if (this.pos >= this.end) return false;
    if (this.peek() == 0x30) {
      this.pos++;
    } else if (this.digits() == 0) {
      return false;
    }
    if (this.pos < this.end && this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) return false;
    }
    if (this.pos < this.end && (this.peek() | 0x20) == 0x65) {
      this.pos++;
      if (this.pos < this.end && (this.peek() == 0x2b || this.peek() == 0x2d)) this.pos++;
      if (this.digits() == 0) return false;
    }
    return true;
  }

  enter(): bool {
    this.depth++;
    if (this.depth > MAX_JSON_DEPTH) {
      this.fail("nesting deeper than " + MAX_JSON_DEPTH.toString());
      return false;
    }
    return true;
  }

  parseArray(): JSONValue | null {
    if (!this.enter()) return null;
    this.pos++; // [
    const arr = jsonArray();
    this.skipSpace();
    if (this.pos < this.end && this.peek() == 0x5d) {
      this.pos++;
      this.depth--;
      return arr;
    }
    while (true) {
      this.skipSpace();
      const v = this.parseValue();
      if (v === null) return null;
      arr.push(v);
      this.skipSpace();
      if (this.pos >= this.end) return this.fail("unterminated array");
      const c = this.peek();
      this.pos++;
      if (c == 0x5d) break;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or ']'");
      }
    }
    this.depth--;
    return arr;
  }

  parseObject(): JSONValue | null {
    if (!this.enter()) return null;
    this.pos++; // {
    const obj = jsonObject();
    this.skipSpace();
    if (this.pos < this.end && this.peek() == 0x7d) {
      this.pos++;
      this.depth--;
      return obj;
    }
    while (true) {
      this.skipSpace();
      if (this.pos >= this.end || this.peek() != 0x22) return this.fail("expected a member name");
      const name = this.parseString();
      if (name === null) return null;
      this.skipSpace();
      if (this.pos >= this.end || this.peek() != 0x3a) return this.fail("expected ':'");
      this.pos++;
      this.skipSpace();
      const v = this.parseValue();
      if (v === null) return null;
      obj.appendMember(name, v);
      this.skipSpace();
      if (this.pos >= this.end) return this.fail("unterminated object");
      const c = this.peek();
      this.pos++;
      if (c == 0x7d) break;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or '}'");
      }
    }
    this.depth--;
    return obj;
  }

  // parseString reads a string literal starting at the opening quote.
  parseString(): string | null {
    this.pos++; // "
    const start = this.pos;
    const ptr = this.ptr;
    const end = this.end;
    let pos = start;
    // Fast path: no escapes.
    while (pos < end) {
      const c = <u32>load<u8>(ptr + <usize>pos);
      if (c == 0x22) {
        this.pos = pos + 1;
        return String.UTF8.decodeUnsafe(ptr + <usize>start, <usize>(pos - start));
      }
      if (c == 0x5c) break;
      if (c < 0x20) {
        this.pos = pos;
        this.fail("control character in string");
        return null;
      }
      if (c >= 0x80) {
        const n = utf8SeqLen(ptr, pos, end);
        if (n == 0) {
          this.pos = pos;
          this.fail("invalid UTF-8 in string");
          return null;
        }
        pos += n;
      } else {
        pos++;
      }
    }
    this.pos = pos;
    if (this.pos >= this.end) {
      this.fail("unterminated string");
      return null;
    }
    // Slow path: copy the plain prefix, then decode escapes into scratch.
    let out = 0;
    const prefix = this.pos - start;
    this.reserve(prefix + 16);
    memory.copy(this.scratch.dataStart, this.ptr + <usize>start, <usize>prefix);
    out = prefix;
    while (true) {
      if (this.pos >= this.end) {
        this.fail("unterminated string");
        return null;
      }
      const c = this.peek();
      if (c == 0x22) {
        this.pos++;
        break;
      }
      if (c < 0x20) {
        this.fail("control character in string");
        return null;
      }
      this.reserve(out + 4);
      if (c == 0x5c) {
        if (this.pos + 1 >= this.end) {
          this.fail("unterminated string");
          return null;
        }
        const e = <u32>load<u8>(this.ptr + <usize>(this.pos + 1));
        this.pos += 2;
        let b: u32 = 0;
        switch (e) {
          case 0x22: b = 0x22; break;
          case 0x5c: b = 0x5c; break;
          case 0x2f: b = 0x2f; break;
          case 0x62: b = 0x08; break;
          case 0x66: b = 0x0c; break;
          case 0x6e: b = 0x0a; break;
          case 0x72: b = 0x0d; break;
          case 0x74: b = 0x09; break;
          case 0x75: {
            let cp = this.hex4();
            if (cp < 0) {
              this.fail("invalid \\u escape");
              return null;
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
              // A high surrogate: take the low one that should follow.
              let low = -1;
              if (
                this.pos + 1 < this.end &&
                load<u8>(this.ptr + <usize>this.pos) == 0x5c &&
                load<u8>(this.ptr + <usize>(this.pos + 1)) == 0x75
              ) {
                const save = this.pos;
                this.pos += 2;
                low = this.hex4();
                if (low < 0xdc00 || low > 0xdfff) {
                  low = -1;
                  this.pos = save;
                }
              }
              cp = low < 0 ? 0xfffd : 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
              cp = 0xfffd;
            }
            out = this.putRune(out, <u32>cp);
            continue;
          }
          default:
            this.pos -= 2;
            this.fail("invalid escape");
            return null;
        }
        store<u8>(this.scratch.dataStart + <usize>out, <u8>b);
        out++;
        continue;
      }
      let n = 1;
      if (c >= 0x80) {
        n = utf8SeqLen(this.ptr, this.pos, this.end);
        if (n == 0) {
          this.fail("invalid UTF-8 in string");
          return null;
        }
      }
      memory.copy(this.scratch.dataStart + <usize>out, this.ptr + <usize>this.pos, <usize>n);
      out += n;
      this.pos += n;
    }
    return String.UTF8.decodeUnsafe(this.scratch.dataStart, <usize>out);
  }

  // hex4 reads four hex digits; -1 if they are not.
  hex4(): i32 {
    if (this.pos + 4 > this.end) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = <i32>load<u8>(this.ptr + <usize>(this.pos + i));
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) return -1;
      v = (v << 4) | d;
    }
    this.pos += 4;
    return v;
  }

  reserve(n: i32): void {
    if (this.scratch.length >= n) return;
    let size = this.scratch.length << 1;
    if (size < n) size = n;
    if (size < 64) size = 64;
    const next = new Uint8Array(size);
    memory.copy(next.dataStart, this.scratch.dataStart, <usize>this.scratch.length);
    this.scratch = next;
  }

  // putRune writes cp as UTF-8 at scratch[out] and returns the new end.
  putRune(out: i32, cp: u32): i32 {
    const p = this.scratch.dataStart + <usize>out;
    if (cp < 0x80) {
      store<u8>(p, <u8>cp);
      return out + 1;
    }
    if (cp < 0x800) {
      store<u8>(p, <u8>(0xc0 | (cp >> 6)));
      store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 1);
      return out + 2;
    }
    if (cp < 0x10000) {
      store<u8>(p, <u8>(0xe0 | (cp >> 12)));
      store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 1);
      store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 2);
      return out + 3;
    }
    store<u8>(p, <u8>(0xf0 | (cp >> 18)));
    store<u8>(p, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
    store<u8>(p, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
    store<u8>(p, <u8>(0x80 | (cp & 0x3f)), 3);
    return out + 4;
  }
}

const HEX = "0123456789abcdef";

/**
 * JSONWriter builds JSON text as UTF-8 bytes. Commas are placed automatically: call
 * beginObject/key/value.../endObject and beginArray/value.../endArray in order.
 */
export class JSONWriter {
  private buf: Uint8Array;
  private len: i32 = 0;
  // One entry per open container: 0 before its first element, 1 after.
  private open: Array<u8> = new Array<u8>();
  // Set between key() and the member's value.
  private afterKey: bool = false;

  constructor(capacity: i32 = 256) {
    this.buf = new Uint8Array(capacity < 16 ? 16 : capacity);
  }

  /** bytes returns the text written so far (a view; valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  /** toString returns the text written so far. */
  toString(): string {
    return String.UTF8.decodeUnsafe(this.buf.dataStart, <usize>this.len);
  }

  /** beginObject opens an object. */
  beginObject(): void {
    this.sep();
    this.byte(0x7b);
    this.open.push(0);
  }

  /** endObject closes the innermost object. */
  endObject(): void {
    this.open.pop();
    this.byte(0x7d);
  }

  /** beginArray opens an array. */
  beginArray(): void {
    this.sep();
    this.byte(0x5b);
    this.open.push(0);
  }

  /** endArray closes the innermost array. */
  endArray(): void {
    this.open.pop();
    this.byte(0x5d);
  }

  /** key writes a member name; the next value written is that member's value. */
  key(name: string): void {
    this.sep();
    this.quoted(name);
    this.byte(0x3a);
    this.afterKey = true;
  }

  /** writeString writes a string value. */
  writeString(s: string): void {
    this.sep();
    this.quoted(s);
  }

  /** writeBool writes true or false. */
  writeBool(b: bool): void {
    this.sep();
    this.ascii(b ? "true" : "false");
  }

  /** writeNull writes null. */
  writeNull(): void {
    this.sep();
    this.ascii("null");
  }

  /** writeInt writes an integer. */
  writeInt(n: i64): void {
    this.sep();
    this.ascii(n.toString());
  }

  /** writeNumber writes a number; NaN and infinities are written as null. */
  writeNumber(n: f64): void {
    this.sep();
    this.ascii(isFinite(n) ? formatF64(n) : "null");
  }

  /** writeNumberText writes a number literal as given (the caller vouches for it). */
  writeNumberText(text: string): void {
    this.sep();
    this.ascii(text);
  }

  /** writeValue writes a JSONValue. */
  writeValue(v: JSONValue): void {
    v.write(this);
  }

  /** writeRaw writes already-encoded JSON text as one value (the caller vouches for it). */
  writeRaw(json: Uint8Array): void {
    this.sep();
    this.reserve(json.length);
    memory.copy(this.buf.dataStart + <usize>this.len, json.dataStart, <usize>json.length);
    this.len += json.length;
  }

  private sep(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const n = this.open.length;
    if (n == 0) return;
    if (unchecked(this.open[n - 1]) != 0) this.byte(0x2c);
    else this.open[n - 1] = 1;
  }

  // @ts-ignore: decorator
  @inline
  private reserve(n: i32): void {
    if (this.len + n > this.buf.length) this.grow(this.len + n);
  }

  private grow(need: i32): void {
    let size = this.buf.length << 1;
    if (size < need) size = need;
    const next = new Uint8Array(size);
    memory.copy(next.dataStart, this.buf.dataStart, <usize>this.len);
    this.buf = next;
  }

  // @ts-ignore: decorator
  @inline
  private byte(b: u32): void {
    this.reserve(1);
    store<u8>(this.buf.dataStart + <usize>this.len, <u8>b);
    this.len++;
  }

  // ascii writes s, known to be ASCII.
  private ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const p = this.buf.dataStart + <usize>this.len;
    for (let i = 0; i < n; i++) store<u8>(p + <usize>i, <u8>s.charCodeAt(i));
    this.len += n;
  }

  // quoted writes s as a JSON string: quotes, escapes, UTF-8. Lone surrogates are
  // written as \u escapes. It reserves the worst case (6 bytes per UTF-16 unit) once and
  // stores bytes directly.
  private quoted(s: string): void {
    const n = s.length;
    this.reserve(n * 6 + 2);
    const p = this.buf.dataStart;
    let o = <usize>this.len;
    store<u8>(p + o++, 0x22);
    for (let i = 0; i < n; i++) {
      const c = <u32>s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c != 0x22 && c != 0x5c) {
          store<u8>(p + o++, <u8>c);
          continue;
        }
        store<u8>(p + o++, 0x5c);
        if (c == 0x22 || c == 0x5c) store<u8>(p + o++, <u8>c);
        else if (c == 0x0a) store<u8>(p + o++, 0x6e);
        else if (c == 0x0d) store<u8>(p + o++, 0x72);
        else if (c == 0x09) store<u8>(p + o++, 0x74);
        else if (c == 0x08) store<u8>(p + o++, 0x62);
        else if (c == 0x0c) store<u8>(p + o++, 0x66);
        else o = escapeU(p, o, c);
        continue;
      }
      if (c < 0x800) {
        store<u8>(p + o++, <u8>(0xc0 | (c >> 6)));
        store<u8>(p + o++, <u8>(0x80 | (c & 0x3f)));
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        if (c <= 0xdbff && i + 1 < n) {
          const d = <u32>s.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            store<u8>(p + o++, <u8>(0xf0 | (cp >> 18)));
            store<u8>(p + o++, <u8>(0x80 | ((cp >> 12) & 0x3f)));
            store<u8>(p + o++, <u8>(0x80 | ((cp >> 6) & 0x3f)));
            store<u8>(p + o++, <u8>(0x80 | (cp & 0x3f)));
            i++;
            continue;
          }
        }
        store<u8>(p + o++, 0x5c);
        o = escapeU(p, o, c);
        continue;
      }
      store<u8>(p + o++, <u8>(0xe0 | (c >> 12)));
      store<u8>(p + o++, <u8>(0x80 | ((c >> 6) & 0x3f)));
      store<u8>(p + o++, <u8>(0x80 | (c & 0x3f)));
    }
    store<u8>(p + o++, 0x22);
    this.len = <i32>o;
  }
}

// escapeU writes "u" and four lower-case hex digits of c at p+o (the backslash is
// already written) and returns the new offset.
function escapeU(p: usize, o: usize, c: u32): usize {
  store<u8>(p + o++, 0x75);
  for (let k = 3; k >= 0; k--) {
    store<u8>(p + o++, <u8>HEX.charCodeAt(<i32>((c >> (<u32>k * 4)) & 0xf)));
  }
  return o;
}
