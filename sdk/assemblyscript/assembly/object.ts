// The object model of ABI v1: the JSON shape of a stored object (modelled on the
// reference system's JavaScript MapReduce object), read from and written to JSONValue.
// Readers accept both metadata dialects ("X-Store-…" and "X-Riak-…").

import { PREFIX_RIAK, PREFIX_STORE } from "./abi";
import { base64Decode, base64Encode } from "./base64";
import { JSONValue, JSONWriter, isCanonicalInteger, parseJSON } from "./json";
import { asciiLower, isValidUTF8, utf8Bytes, utf8String } from "./utf8";

/** Link is one link of a sibling: [bucket, key, tag]. */
export class Link {
  constructor(public bucket: string, public key: string, public tag: string) {}
}

/**
 * IndexEntry is one secondary-index entry. name is lower-case and ends in "_bin" or
 * "_int"; value is the string of a _bin entry or the decimal text of an _int entry.
 */
export class IndexEntry {
  constructor(public name: string, public value: string) {}
}

/** MetaEntry is one user metadata entry; name is as the client sent it, without prefix. */
export class MetaEntry {
  constructor(public name: string, public value: string) {}
}

/** Sibling is one value of an object with its metadata. */
export class Sibling {
  /** value is the value's bytes. */
  value: Uint8Array = new Uint8Array(0);
  contentType: string = "";
  charset: string = "";
  contentEncoding: string = "";
  /** vtag is the sibling's version tag ("" on a precommit's input for a put). */
  vtag: string = "";
  /** lastModified is an RFC 1123 GMT date, or "". */
  lastModified: string = "";
  userMeta: Array<MetaEntry> = new Array<MetaEntry>();
  index: Array<IndexEntry> = new Array<IndexEntry>();
  links: Array<Link> = new Array<Link>();
  /** deleted is true for a tombstone. */
  deleted: bool = false;

  /** text returns the value decoded as UTF-8. */
  text(): string {
    return utf8String(this.value);
  }

  /** setText sets the value to s encoded as UTF-8. */
  setText(s: string): void {
    this.value = utf8Bytes(s);
  }

  /** json parses the value as JSON; null when it is not JSON (see jsonError()). */
  json(): JSONValue | null {
    return parseJSON(this.value);
  }

  /** setJSON sets the value to the JSON text of v. It does not change contentType. */
  setJSON(v: JSONValue): void {
    const w = new JSONWriter();
    v.write(w);
    this.value = w.bytes().slice();
  }

  /** meta returns the user metadata named name (compared case-insensitively), or null. */
  meta(name: string): string | null {
    const want = asciiLower(name);
    for (let i = 0; i < this.userMeta.length; i++) {
      const m = unchecked(this.userMeta[i]);
      if (asciiLower(m.name) == want) return m.value;
    }
    return null;
  }

  /** setMeta sets the user metadata named name, replacing an entry of the same name. */
  setMeta(name: string, value: string): void {
    this.removeMeta(name);
    this.userMeta.push(new MetaEntry(name, value));
  }

  /** removeMeta removes the user metadata named name (compared case-insensitively). */
  removeMeta(name: string): void {
    const want = asciiLower(name);
    for (let i = this.userMeta.length - 1; i >= 0; i--) {
      if (asciiLower(unchecked(this.userMeta[i]).name) == want) this.userMeta.splice(i, 1);
    }
  }

  /** indexValues returns the values of the index named name (lower-case), in order. */
  indexValues(name: string): Array<string> {
    const want = asciiLower(name);
    const out = new Array<string>();
    for (let i = 0; i < this.index.length; i++) {
      const e = unchecked(this.index[i]);
      if (e.name == want) out.push(e.value);
    }
    return out;
  }

  /** addIndex adds an entry to the index named name (a "_bin" or "_int" name). */
  addIndex(name: string, value: string): void {
    this.index.push(new IndexEntry(asciiLower(name), value));
  }

  /** addIntIndex adds an integer entry to the index named name (an "_int" name). */
  addIntIndex(name: string, value: i64): void {
    this.index.push(new IndexEntry(asciiLower(name), value.toString()));
  }

  /** removeIndex removes every entry of the index named name. */
  removeIndex(name: string): void {
    const want = asciiLower(name);
    for (let i = this.index.length - 1; i >= 0; i--) {
      if (unchecked(this.index[i]).name == want) this.index.splice(i, 1);
    }
  }

  /** addLink adds a link. */
  addLink(bucket: string, key: string, tag: string): void {
    this.links.push(new Link(bucket, key, tag));
  }

  /** write appends the sibling's JSON ({"metadata":…,"data"|"data_b64":…}) to w. */
  write(w: JSONWriter, prefix: string = PREFIX_STORE): void {
    w.beginObject();
    w.key("metadata");
    w.beginObject();
    w.key("content-type");
    w.writeString(this.contentType);
    if (this.charset.length > 0) {
      w.key("charset");
      w.writeString(this.charset);
    }
    if (this.contentEncoding.length > 0) {
      w.key("content-encoding");
      w.writeString(this.contentEncoding);
    }
    if (this.vtag.length > 0) {
      w.key(prefix + "VTag");
      w.writeString(this.vtag);
    }
    if (this.lastModified.length > 0) {
      w.key(prefix + "Last-Modified");
      w.writeString(this.lastModified);
    }
    w.key(prefix + "Meta");
    w.beginObject();
    for (let i = 0; i < this.userMeta.length; i++) {
      const m = unchecked(this.userMeta[i]);
      w.key(prefix + "Meta-" + m.name);
      w.writeString(m.value);
    }
    w.endObject();
    if (this.index.length > 0) {
      w.key("index");
      this.writeIndex(w);
    }
    if (this.links.length > 0) {
      w.key("Links");
      writeLinks(w, this.links);
    }
    if (this.deleted) {
      w.key(prefix + "Deleted");
      w.writeString("true");
    }
    w.endObject();
    if (isValidUTF8(this.value)) {
      w.key("data");
      w.writeString(utf8String(this.value));
    } else {
      w.key("data_b64");
      w.writeString(base64Encode(this.value));
    }
    w.endObject();
  }

  // writeIndex writes the index as {"name": scalar-or-array, ...}, names in order of
  // first appearance.
  private writeIndex(w: JSONWriter): void {
    const names = new Array<string>();
    for (let i = 0; i < this.index.length; i++) {
      const n = unchecked(this.index[i]).name;
      if (!names.includes(n)) names.push(n);
    }
    w.beginObject();
    for (let j = 0; j < names.length; j++) {
      const name = unchecked(names[j]);
      const isInt = name.endsWith("_int");
      const values = this.indexValues(name);
      w.key(name);
      if (values.length > 1) w.beginArray();
      for (let k = 0; k < values.length; k++) {
        const v = unchecked(values[k]);
        if (isInt && isCanonicalInteger(v)) w.writeNumberText(v);
        else w.writeString(v);
      }
      if (values.length > 1) w.endArray();
    }
    w.endObject();
  }
}

/** CairnObject is a stored object: its place, its causal context and its siblings. */
export class CairnObject {
  bucketType: string = "default";
  bucket: string = "";
  key: string = "";
  /** vclock is the opaque causal context, standard base64; "" when there is none. */
  vclock: string = "";
  /** values holds one Sibling per sibling; a precommit on put sees exactly one. */
  values: Array<Sibling> = new Array<Sibling>();

  /** first returns the first sibling, adding an empty one if there is none. */
  first(): Sibling {
    if (this.values.length == 0) this.values.push(new Sibling());
    return unchecked(this.values[0]);
  }

  /** write appends the object's JSON to w, naming metadata with prefix ("X-Store-" or "X-Riak-"). */
  write(w: JSONWriter, prefix: string = PREFIX_STORE): void {
    w.beginObject();
    w.key("bucket_type");
    w.writeString(this.bucketType);
    w.key("bucket");
    w.writeString(this.bucket);
    w.key("key");
    w.writeString(this.key);
    w.key("vclock");
    w.writeString(this.vclock);
    w.key("values");
    w.beginArray();
    for (let i = 0; i < this.values.length; i++) unchecked(this.values[i]).write(w, prefix);
    w.endArray();
    w.endObject();
  }

  /** toJSON returns the object's JSON text. */
  toJSON(prefix: string = PREFIX_STORE): string {
    const w = new JSONWriter();
    this.write(w, prefix);
    return w.toString();
  }
}

/** writeLinks writes links as [[bucket, key, tag], ...]. */
export function writeLinks(w: JSONWriter, links: Array<Link>): void {
  w.beginArray();
  for (let i = 0; i < links.length; i++) {
    const l = unchecked(links[i]);
    w.beginArray();
    w.writeString(l.bucket);
    w.writeString(l.key);
    w.writeString(l.tag);
    w.endArray();
  }
  w.endArray();
}

// The reason the last readObject failed.
let lastObjectError = "";

/** objectError returns why the last readObject (or an input reader) failed. */
export function objectError(): string {
  return lastObjectError;
}

function objFail(msg: string): CairnObject | null {
  lastObjectError = msg;
  return null;
}

// optString returns a string member's value, "" when it is null or missing, and null when
// it is of another kind.
function optString(v: JSONValue | null): string | null {
  if (v === null || v.isNull()) return "";
  if (!v.isString()) return null;
  return v.asString();
}

/** readObject reads a CairnObject from its JSON; null (see objectError()) when malformed. */
export function readObject(v: JSONValue): CairnObject | null {
  if (!v.isObject()) return objFail("object: not a JSON object");
  const o = new CairnObject();
  const bt = optString(v.get("bucket_type"));
  const b = optString(v.get("bucket"));
  const k = optString(v.get("key"));
  const vc = optString(v.get("vclock"));
  if (bt === null) return objFail("object: bucket_type is not a string");
  if (b === null) return objFail("object: bucket is not a string");
  if (k === null) return objFail("object: key is not a string");
  if (vc === null) return objFail("object: vclock is not a string");
  if (bt.length > 0) o.bucketType = bt;
  o.bucket = b;
  o.key = k;
  o.vclock = vc;
  const values = v.get("values");
  if (values !== null && !values.isNull()) {
    if (!values.isArray()) return objFail("object: values is not an array");
    for (let i = 0; i < values.length; i++) {
      const s = readSibling(values.at(i)!);
      if (s === null) return objFail("object: values[" + i.toString() + "]: " + lastObjectError);
      o.values.push(s);
    }
  }
  return o;
}

// dialectSuffix returns the lower-cased part of name after "x-store-" or "x-riak-", or
// null when name has neither prefix.
function dialectSuffix(lower: string): string | null {
  const store = asciiLower(PREFIX_STORE);
  const riak = asciiLower(PREFIX_RIAK);
  if (lower.startsWith(store)) return lower.substring(store.length);
  if (lower.startsWith(riak)) return lower.substring(riak.length);
  return null;
}

function sibFail(msg: string): Sibling | null {
  lastObjectError = msg;
  return null;
}

function readSibling(v: JSONValue): Sibling | null {
  if (!v.isObject()) return sibFail("not a JSON object");
  const s = new Sibling();
  const data = v.get("data");
  const data64 = v.get("data_b64");
  if (data64 !== null && !data64.isNull()) {
    if (!data64.isString()) return sibFail("data_b64 is not a string");
    const bytes = base64Decode(data64.asString());
    if (bytes === null) return sibFail("data_b64 is not valid base64");
    s.value = bytes;
  } else if (data !== null && !data.isNull()) {
    if (!data.isString()) return sibFail("data is not a string");
    s.setText(data.asString());
  }
  const md = v.get("metadata");
  if (md === null || md.isNull()) return s;
  if (!md.isObject()) return sibFail("metadata is not a JSON object");
  for (let i = 0; i < md.length; i++) {
    const name = md.nameAt(i);
    const lower = asciiLower(name);
    const val = md.at(i)!;
    if (lower == "content-type" || lower == "charset" || lower == "content-encoding") {
      const str = optString(val);
      if (str === null) return sibFail("metadata " + name + " is not a string");
      if (lower == "content-type") s.contentType = str;
      else if (lower == "charset") s.charset = str;
      else s.contentEncoding = str;
      continue;
    }
    if (lower == "index") {
      if (!readIndex(s, val)) return null;
      continue;
    }
    if (lower == "links") {
      if (!readLinksInto(s.links, val)) return sibFail("metadata Links: " + lastObjectError);
      continue;
    }
    const suffix = dialectSuffix(lower);
    if (suffix === null) continue;
    if (suffix == "vtag" || suffix == "last-modified") {
      const str = optString(val);
      if (str === null) return sibFail("metadata " + name + " is not a string");
      if (suffix == "vtag") s.vtag = str;
      else s.lastModified = str;
    } else if (suffix == "deleted") {
      s.deleted = (val.isString() && asciiLower(val.asString()) == "true") || val.asBool();
    } else if (suffix == "meta") {
      if (val.isNull()) continue;
      if (!val.isObject()) return sibFail("metadata " + name + " is not a JSON object");
      for (let j = 0; j < val.length; j++) {
        const full = val.nameAt(j);
        const mv = val.at(j)!;
        if (!mv.isString()) return sibFail("metadata " + name + "." + full + " is not a string");
        const rest = dialectSuffix(asciiLower(full));
        let short = full;
        if (rest !== null && rest.startsWith("meta-")) short = full.substring(full.length - rest.length + 5);
        s.userMeta.push(new MetaEntry(short, mv.asString()));
      }
    }
  }
  return s;
}

// indexTerm returns the text of one index value (a string or a number), or null.
function indexTerm(v: JSONValue): string | null {
  if (v.isString()) return v.asString();
  if (v.isNumber()) return v.numberText();
  return null;
}

function readIndex(s: Sibling, v: JSONValue): bool {
  if (v.isNull()) return true;
  if (!v.isObject()) {
    lastObjectError = "metadata index is not a JSON object";
    return false;
  }
  for (let i = 0; i < v.length; i++) {
    const name = asciiLower(v.nameAt(i));
    const val = v.at(i)!;
    if (val.isArray()) {
      for (let j = 0; j < val.length; j++) {
        const t = indexTerm(val.at(j)!);
        if (t === null) {
          lastObjectError = "metadata index " + name + " holds a value that is not a string or number";
          return false;
        }
        s.index.push(new IndexEntry(name, t));
      }
      continue;
    }
    const t = indexTerm(val);
    if (t === null) {
      lastObjectError = "metadata index " + name + " is not a string, number or array";
      return false;
    }
    s.index.push(new IndexEntry(name, t));
  }
  return true;
}

/** readLinksInto appends the links of a [[bucket, key, tag], ...] value to out. */
export function readLinksInto(out: Array<Link>, v: JSONValue): bool {
  if (v.isNull()) return true;
  if (!v.isArray()) {
    lastObjectError = "not an array";
    return false;
  }
  for (let i = 0; i < v.length; i++) {
    const l = v.at(i)!;
    if (!l.isArray() || l.length != 3 || !l.at(0)!.isString() || !l.at(1)!.isString() || !l.at(2)!.isString()) {
      lastObjectError = "link " + i.toString() + " is not [bucket, key, tag]";
      return false;
    }
    out.push(new Link(l.at(0)!.asString(), l.at(1)!.asString(), l.at(2)!.asString()));
  }
  return true;
}
