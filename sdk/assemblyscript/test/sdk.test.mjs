// Tests of the AssemblyScript SDK: test/fixtures/sdk.ts is compiled with the SDK and run
// through the harness exactly as the host would call it.

import { test, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { compile, SDK_DIR } from "./compile.mjs";
import { loadHook, checkModule, STATUS_OK, STATUS_REJECT, STATUS_ERROR } from "../harness.mjs";

let hook;
let wasm;

before(async () => {
  const outDir = join(SDK_DIR, "test", "build");
  await mkdir(outDir, { recursive: true });
  wasm = await compile(join(SDK_DIR, "test", "fixtures", "sdk.ts"), join(outDir, "sdk.wasm"));
  hook = await loadHook(wasm);
});

const sampleObject = {
  bucket_type: "default",
  bucket: "users",
  key: "u1",
  vclock: "a85hYGBgzGDKBVIcypz/fgaUHjmTwZTInMfKoG7LdoovCwA=",
  values: [
    {
      metadata: {
        "content-type": "application/json",
        charset: "utf-8",
        "content-encoding": "identity",
        "X-Store-VTag": "4LdxAbc",
        "X-Store-Last-Modified": "Tue, 01 Jan 2030 00:00:00 GMT",
        "X-Store-Meta": { "X-Store-Meta-Owner": "bob", "X-Store-Meta-Team": "kv" },
        index: { email_bin: "a@b.c", age_int: [1, 2], big_int: "BIG" },
        Links: [["users", "u2", "friend"]],
      },
      data: '{"name":"alice","é":"€😀"}',
    },
  ],
};

// The sample's big_int index value is beyond 2^53: JSON.stringify cannot write it, so it is
// spliced into the text.
const BIG = "12345678901234567890";

function commit(object, op = "put") {
  return JSON.stringify({ op, object }).replace('"BIG"', BIG);
}

test("module imports only cairn.* and exports the ABI", async () => {
  const mod = await WebAssembly.compile(wasm);
  const imports = WebAssembly.Module.imports(mod).map((i) => `${i.module}.${i.name}`).sort();
  assert.deepEqual(imports, ["cairn.log", "cairn.output"]);
  const fns = checkModule(mod);
  assert.ok(fns.includes("validate"));
  assert.ok(!fns.includes("cairn_alloc"));
});

test("an object survives read and write unchanged (store prefix)", () => {
  const r = hook.call("echo_replace", commit(sampleObject));
  assert.equal(r.status, STATUS_OK, r.text);
  // The big _int is written as the same literal, beyond 2^53.
  assert.ok(r.text.includes('"big_int":12345678901234567890'), r.text);
  const got = JSON.parse(r.text.replace(BIG, '"BIG"'));
  assert.deepEqual(got, sampleObject);
});

test("riak-prefixed input is read, and written in either dialect", () => {
  const riak = structuredClone(sampleObject);
  const md = riak.values[0].metadata;
  md["X-Riak-VTag"] = md["X-Store-VTag"];
  md["X-Riak-Last-Modified"] = md["X-Store-Last-Modified"];
  md["X-Riak-Meta"] = { "X-Riak-Meta-Owner": "bob", "X-Riak-Meta-Team": "kv" };
  delete md["X-Store-VTag"];
  delete md["X-Store-Last-Modified"];
  delete md["X-Store-Meta"];
  let r = hook.call("echo_replace", commit(riak));
  assert.equal(r.status, STATUS_OK, r.text);
  assert.deepEqual(r.json().values[0].metadata["X-Store-Meta"], { "X-Store-Meta-Owner": "bob", "X-Store-Meta-Team": "kv" });
  assert.equal(r.json().values[0].metadata["X-Store-VTag"], "4LdxAbc");
  r = hook.call("echo_replace_riak", commit(sampleObject));
  assert.equal(r.status, STATUS_OK, r.text);
  const out = r.json().values[0].metadata;
  assert.deepEqual(out["X-Riak-Meta"], { "X-Riak-Meta-Owner": "bob", "X-Riak-Meta-Team": "kv" });
  assert.equal(out["X-Riak-Last-Modified"], "Tue, 01 Jan 2030 00:00:00 GMT");
  assert.equal(out["X-Store-Meta"], undefined);
});

test("binary values travel as data_b64 both ways", () => {
  const bin = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80, 0x41]);
  const o = { bucket: "b", key: "k", values: [{ metadata: { "content-type": "application/octet-stream" }, data_b64: bin.toString("base64") }] };
  const r = hook.call("echo_replace", commit(o));
  assert.equal(r.status, STATUS_OK, r.text);
  const v = r.json().values[0];
  assert.equal(v.data, undefined);
  assert.equal(v.data_b64, bin.toString("base64"));
  // Defaults of a sparse object.
  assert.equal(r.json().bucket_type, "default");
  assert.equal(r.json().vclock, "");
  assert.deepEqual(v.metadata, { "content-type": "application/octet-stream", "X-Store-Meta": {} });
});

test("describe: what the reader sees", async (t) => {
  const tombstone = {
    bucket_type: "t",
    bucket: "b",
    key: "k",
    vclock: "",
    values: [{ metadata: { "content-type": "", "X-Riak-Deleted": "true", "X-Store-Meta": {} }, data: "" }],
  };
  const cases = [
    {
      name: "full object",
      input: commit(sampleObject),
      check(d) {
        assert.equal(d.op, "put");
        assert.equal(d.bucket, "users");
        assert.equal(d.vclock, sampleObject.vclock);
        const s = d.values[0];
        assert.equal(s.content_type, "application/json");
        assert.equal(s.charset, "utf-8");
        assert.equal(s.content_encoding, "identity");
        assert.equal(s.vtag, "4LdxAbc");
        assert.equal(s.last_modified, "Tue, 01 Jan 2030 00:00:00 GMT");
        assert.equal(s.deleted, false);
        assert.deepEqual(s.meta, { Owner: "bob", Team: "kv" });
        assert.equal(s.owner, "bob");
        assert.deepEqual(s.index, [["email_bin", "a@b.c"], ["age_int", "1"], ["age_int", "2"], ["big_int", "12345678901234567890"]]);
        assert.deepEqual(s.links, [["users", "u2", "friend"]]);
        assert.equal(Buffer.from(s.value_b64, "base64").toString("utf8"), sampleObject.values[0].data);
      },
    },
    {
      name: "tombstone on delete",
      input: commit(tombstone, "delete"),
      check(d) {
        assert.equal(d.op, "delete");
        assert.equal(d.bucket_type, "t");
        assert.equal(d.values[0].deleted, true);
        assert.equal(d.values[0].owner, null);
      },
    },
    {
      name: "siblings and upper-case index names",
      input: commit({
        bucket: "b",
        key: "k",
        values: [
          { metadata: { index: { Email_BIN: ["x", "y"] }, "X-STORE-DELETED": true }, data: "1" },
          { metadata: {}, data: "2" },
        ],
      }),
      check(d) {
        assert.equal(d.values.length, 2);
        assert.deepEqual(d.values[0].index, [["email_bin", "x"], ["email_bin", "y"]]);
        assert.equal(d.values[0].deleted, true);
        assert.equal(Buffer.from(d.values[1].value_b64, "base64").toString(), "2");
      },
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = hook.call("describe", c.input);
      assert.equal(r.status, STATUS_OK, r.text);
      c.check(JSON.parse(r.json().values[0].data));
    });
  }
});

test("validate: reject, replace, accept", async (t) => {
  const withData = (data) => commit({ bucket: "b", key: "k", values: [{ metadata: { "content-type": "application/json" }, data }] });
  const cases = [
    { name: "not JSON", input: withData("{"), status: STATUS_REJECT, contains: "value is not JSON: json: " },
    { name: "no name", input: withData('{"age":3}'), status: STATUS_REJECT, contains: 'no string "name"' },
    { name: "name", input: withData('{"name":"Zoë"}'), status: STATUS_OK, contains: '"X-Store-Meta-Validated":"yes"' },
    { name: "delete", input: commit({ bucket: "b", key: "k", values: [] }, "delete"), status: STATUS_OK, contains: "" },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = hook.call("validate", c.input);
      assert.equal(r.status, c.status, r.text);
      if (c.contains === "") assert.equal(r.output.length, 0);
      else assert.ok(r.text.includes(c.contains), r.text);
    });
  }
  const r = hook.call("validate", withData('{"name":"Zoë"}'));
  assert.deepEqual(r.json().values[0].metadata.index, { name_bin: "Zoë", length_int: 3 });
});

test("malformed inputs fail the call with a message", async (t) => {
  const cases = [
    { name: "not JSON", input: "{nope", contains: "input: json: expected a member name at offset 1" },
    { name: "not an object", input: "[]", contains: "input: not a JSON object" },
    { name: "bad op", input: { op: "get", object: {} }, contains: 'op is not "put" or "delete"' },
    { name: "no object", input: { op: "put" }, contains: "input: no object" },
    { name: "key not a string", input: { op: "put", object: { key: 1 } }, contains: "object: key is not a string" },
    { name: "values not an array", input: { op: "put", object: { values: {} } }, contains: "values is not an array" },
    { name: "bad base64", input: { op: "put", object: { values: [{ data_b64: "!!!!" }] } }, contains: "values[0]: data_b64 is not valid base64" },
    { name: "bad link", input: { op: "put", object: { values: [{ metadata: { Links: [["a", "b"]] } }] } }, contains: "link 0 is not [bucket, key, tag]" },
    { name: "bad index", input: { op: "put", object: { values: [{ metadata: { index: { a_bin: true } } }] } }, contains: "metadata index a_bin is not a string, number or array" },
    { name: "bad meta", input: { op: "put", object: { values: [{ metadata: { "X-Store-Meta": { "X-Store-Meta-A": 1 } } }] } }, contains: "is not a string" },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = hook.call("echo_replace", c.input);
      assert.equal(r.status, STATUS_ERROR, r.text);
      assert.ok(r.text.includes(c.contains), `${r.text} does not contain ${c.contains}`);
    });
  }
});

test("JSON reader and writer round-trip", async (t) => {
  const docs = [
    "null", "true", "false", "0", "-0", "12", "-1.5e-7", "1E+2", '""', '"plain"',
    '"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20AC \\ud83d\\ude00"',
    '"utf8 é € 😀"', "[]", "{}", "[1,[2,[3,{}]]]",
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    ' \t\n\r{ "spaced" : [ 1 , 2 ] } \n',
  ];
  for (const doc of docs) {
    await t.test(doc, () => {
      const r = hook.call("json_echo", doc);
      assert.equal(r.status, STATUS_OK, r.text);
      assert.deepEqual(JSON.parse(r.text), JSON.parse(doc));
    });
  }
  await t.test("number literals are kept exactly", () => {
    const r = hook.call("json_echo", "[12345678901234567890123,-0,1e400,1.0,0.1]");
    assert.equal(r.text, "[12345678901234567890123,-0,1e400,1.0,0.1]");
  });
  await t.test("duplicate names: the last wins on get, both are kept", () => {
    const r = hook.call("json_echo", '{"a":1,"a":2}');
    assert.equal(r.text, '{"a":1,"a":2}');
  });
  await t.test("lone surrogate escapes become U+FFFD", () => {
    const r = hook.call("json_echo", '["\\ud800","\\udc00x","\\ud800\\u0041"]');
    assert.deepEqual(JSON.parse(r.text), ["\ufffd", "\ufffdx", "\ufffdA"]);
  });
  await t.test("deep nesting up to the limit", () => {
    const ok = "[".repeat(512) + "]".repeat(512);
    assert.equal(hook.call("json_echo", ok).status, STATUS_OK);
    const deep = "[".repeat(513) + "]".repeat(513);
    const r = hook.call("json_echo", deep);
    assert.equal(r.status, STATUS_ERROR);
    assert.ok(r.text.includes("nesting deeper than 512"), r.text);
  });
});

test("JSON reader rejects what RFC 8259 rejects", async (t) => {
  const bad = [
    ["", "unexpected end of input"],
    ["[1,]", "invalid value"],
    ["{\"a\":1,}", "expected a member name"],
    ["01", "unexpected data after the value"],
    ["1.", "invalid value"],
    [".5", "invalid value"],
    ["-", "invalid value"],
    ["1e", "invalid value"],
    ["+1", "invalid value"],
    ["tru", "invalid literal"],
    ["nul", "invalid literal"],
    ['"abc', "unterminated string"],
    ['"a\\', "unterminated string"],
    ['"a\\x"', "invalid escape"],
    ['"\\u12g4"', "invalid \\u escape"],
    ['"tab\there"', "control character in string"],
    ["[1 2]", "expected ',' or ']'"],
    ['{"a" 1}', "expected ':'"],
    ['{"a":1 "b":2}', "expected ',' or '}'"],
    ["{1:2}", "expected a member name"],
    ["[1", "unterminated array"],
    ["{\"a\":1", "unterminated object"],
    ["1 2", "unexpected data after the value"],
    ["NaN", "invalid value"],
  ];
  for (const [doc, msg] of bad) {
    await t.test(JSON.stringify(doc), () => {
      const r = hook.call("json_echo", doc);
      assert.equal(r.status, STATUS_ERROR, r.text);
      assert.ok(r.text.startsWith("json: ") && r.text.includes(msg), `${r.text} does not contain ${msg}`);
    });
  }
  await t.test("invalid UTF-8 in a string", () => {
    const r = hook.call("json_echo", Buffer.from([0x22, 0xc0, 0x80, 0x22]));
    assert.equal(r.status, STATUS_ERROR);
    assert.ok(r.text.includes("invalid UTF-8 in string"), r.text);
  });
});

test("numbers: asI64, asF64, isInteger", () => {
  const r = hook.call("numbers", '{"values":[1,-5,9007199254740993,1.5,2e3,-0.5,"x"]}');
  assert.equal(r.status, STATUS_OK, r.text);
  assert.deepEqual(r.json(), [
    ["1", 1, true],
    ["-5", -5, true],
    ["9007199254740993", 9007199254740992, true],
    ["1", 1.5, false],
    ["2000", 2000, false],
    ["0", -0.5, false],
    ["0", null, false],
  ]);
});

test("writer output is exact", () => {
  const r = hook.call("writer", "");
  assert.equal(r.status, STATUS_OK);
  assert.equal(
    r.text,
    '{"s":"a\\"b\\\\c\\n\\t\\u0001é€😀","lone":"\\ud800","i":-9007199254740993,"f":1.5,"whole":3,' +
      '"nan":null,"b":true,"n":null,"a":[[],{},1,{"raw":[1,2]}]}',
  );
});

test("base64 matches node's", async (t) => {
  for (let n = 0; n < 70; n++) {
    const data = Buffer.alloc(n, 0).map((_, i) => (i * 37 + n) & 0xff);
    const enc = hook.call("b64_encode", data);
    assert.equal(enc.text, data.toString("base64"), `encode ${n}`);
    const dec = hook.call("b64_decode", JSON.stringify(data.toString("base64")));
    assert.equal(dec.status, STATUS_OK, dec.text);
    assert.deepEqual(dec.output, data, `decode ${n}`);
  }
  for (const bad of ["A", "AB", "ABC", "A===", "AB=A", "AB==AB==", "AB\u00e9=", "AB-_", "AB=="+"x", "AR==", "ABD="]) {
    await t.test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(hook.call("b64_decode", JSON.stringify(bad)).status, STATUS_ERROR);
    });
  }
});

test("UTF-8 validation", async (t) => {
  const cases = [
    [[], true],
    [[0x41, 0x7f], true],
    [[0xc3, 0xa9], true],
    [[0xe2, 0x82, 0xac], true],
    [[0xf0, 0x9f, 0x98, 0x80], true],
    [[0xf4, 0x8f, 0xbf, 0xbf], true],
    [[0x80], false],
    [[0xc0, 0x80], false],
    [[0xc1, 0xbf], false],
    [[0xe0, 0x80, 0x80], false],
    [[0xed, 0xa0, 0x80], false],
    [[0xf0, 0x80, 0x80, 0x80], false],
    [[0xf4, 0x90, 0x80, 0x80], false],
    [[0xf5, 0x80, 0x80, 0x80], false],
    [[0xe2, 0x82], false],
    [[0xc3, 0x41], false],
  ];
  for (const [bytes, want] of cases) {
    await t.test(Buffer.from(bytes).toString("hex") || "empty", () => {
      assert.equal(hook.call("utf8_valid", Buffer.from(bytes)).text, String(want));
    });
  }
});

test("SHA-1 matches node's for every length around block boundaries", () => {
  for (let n = 0; n <= 200; n++) {
    const data = Buffer.alloc(n).map((_, i) => (i * 131 + 7) & 0xff);
    const want = createHash("sha1").update(data).digest("hex");
    assert.equal(hook.call("sha1_raw", data).output.toString("hex"), want, `length ${n}`);
    assert.equal(hook.call("sha1_chunks", data).output.toString("hex"), want, `chunks ${n}`);
  }
  assert.equal(hook.call("sha1_raw", "abc").output.toString("hex"), "a9993e364706816aba3e25717850c26c9cd0d89d");
});

test("keyfun: hash and the 1..20 byte rule", async (t) => {
  const r = hook.call("keyfun_sha1", { bucket_type: "default", bucket: "users", key: "u1" });
  assert.equal(r.status, STATUS_OK);
  assert.equal(r.output.toString("hex"), createHash("sha1").update("users\0u1").digest("hex"));
  const cases = [
    { key: "", status: STATUS_ERROR },
    { key: "a", status: STATUS_OK },
    { key: "x".repeat(20), status: STATUS_OK },
    { key: "x".repeat(21), status: STATUS_ERROR },
  ];
  for (const c of cases) {
    await t.test(`length ${c.key.length}`, () => {
      const r = hook.call("keyfun_len", { bucket_type: "default", bucket: "b", key: c.key });
      assert.equal(r.status, c.status, r.text);
      if (c.status === STATUS_ERROR) assert.ok(r.text.includes("hash must be 1 to 20 bytes"), r.text);
    });
  }
});

test("linkfun: links matching the spec", async (t) => {
  const object = {
    bucket: "people",
    key: "p1",
    values: [
      { metadata: { Links: [["people", "p2", "friend"], ["people", "p3", "boss"], ["pets", "d1", "friend"]] }, data: "" },
      { metadata: { Links: [["people", "p4", "friend"]] }, data: "" },
    ],
  };
  const cases = [
    { spec: { bucket: "_", tag: "_" }, want: 4 },
    { spec: { bucket: "people", tag: "_" }, want: 3 },
    { spec: { bucket: "_", tag: "friend" }, want: 3 },
    { spec: { bucket: "pets", tag: "friend" }, want: 1 },
    { spec: { bucket: "cars", tag: "_" }, want: 0 },
  ];
  for (const c of cases) {
    await t.test(`${c.spec.bucket}/${c.spec.tag}`, () => {
      const r = hook.call("links", { object, spec: c.spec });
      assert.equal(r.status, STATUS_OK, r.text);
      const links = r.json();
      assert.equal(links.length, c.want);
      for (const l of links) assert.equal(l.length, 3);
    });
  }
});

test("map: object, not_found, keydata and arg", async (t) => {
  const object = { bucket: "b", key: "k", values: [{ metadata: {}, data: '{"n":1}' }] };
  const cases = [
    { name: "object", input: { object, keydata: { k: 1 }, arg: [1] }, want: [{ n: 1 }, { k: 1 }, [1]] },
    { name: "no keydata or arg", input: { object }, want: [{ n: 1 }, null, null] },
    { name: "not found", input: { not_found: { bucket_type: "default", bucket: "b", key: "gone" }, keydata: null, arg: "x" }, want: [{ not_found: "gone" }, null, "x"] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const r = hook.call("map_value", c.input);
      assert.equal(r.status, STATUS_OK, r.text);
      assert.deepEqual(r.json(), c.want);
    });
  }
});

test("reduce: sums and re-reduces", () => {
  const a = [1, 2, 3];
  const b = [10, 20];
  const all = hook.call("reduce_sum", { values: [...a, ...b], arg: null }).json();
  const partial = hook.call("reduce_sum", { values: a }).json();
  const again = hook.call("reduce_sum", { values: [...partial, ...b] }).json();
  assert.deepEqual(all, [36]);
  assert.deepEqual(again, all);
  const bad = hook.call("reduce_sum", { values: [1, "x"] });
  assert.equal(bad.status, STATUS_ERROR);
  assert.equal(bad.text, "reduce_sum: value 1 is not a number");
});

test("postcommit: logs and failure", () => {
  const ok = hook.call("post_log", commit({ bucket: "b", key: "k" }));
  assert.equal(ok.status, STATUS_OK);
  assert.equal(ok.output.length, 0);
  assert.deepEqual(ok.logs, [
    { level: "debug", message: "postcommit put" },
    { level: "info", message: "stored b/k" },
  ]);
  const fail = hook.call("post_log", commit({ bucket: "b", key: "fail" }));
  assert.equal(fail.status, STATUS_ERROR);
  assert.equal(fail.text, "asked to fail");
});

test("abort logs the message and traps", async () => {
  const h = await loadHook(wasm);
  const logs = [];
  const h2 = await loadHook(wasm, { onLog: (level, message) => logs.push({ level, message }) });
  assert.throws(() => h2.call("boom", "x"), WebAssembly.RuntimeError);
  assert.equal(logs.length, 1);
  assert.equal(logs[0].level, "error");
  assert.match(logs[0].message, /^abort: boom at test\/fixtures\/sdk\.ts:\d+:\d+$|^abort: boom at .*sdk\.ts:\d+:\d+$/);
  assert.equal(h.call("json_echo", "1").text, "1");
});

test("memory stays flat across many calls (the collector runs)", async () => {
  const h = await loadHook(wasm);
  const input = JSON.stringify({ list: Array.from({ length: 50 }, (_, i) => ({ i, s: "x".repeat(i) })) });
  for (let i = 0; i < 3000; i++) {
    const r = h.call("churn", input);
    assert.equal(r.status, STATUS_OK);
  }
  assert.ok(h.memoryBytes() <= 4 << 20, `memory grew to ${h.memoryBytes()} bytes`);
});

test("large inputs: cairn_alloc grows and is reused", async () => {
  const h = await loadHook(wasm);
  const big = JSON.stringify(["y".repeat(3 << 20)]);
  const r = h.call("json_echo", big);
  assert.equal(r.status, STATUS_OK);
  assert.equal(r.text.length, big.length);
  const before = h.memoryBytes();
  for (let i = 0; i < 20; i++) assert.equal(h.call("json_echo", "[1]").text, "[1]");
  assert.equal(h.memoryBytes(), before);
});
