// Runs the expect.json cases of the AssemblyScript and WAT examples against their
// committed .wasm files, and checks that each committed .wasm is what its source builds
// to today (WAT only when wat2wasm is installed).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile, SDK_DIR } from "./compile.mjs";
import { loadHook, runExpect } from "../harness.mjs";

const EXAMPLES = join(SDK_DIR, "..", "..", "wasm-examples");

function examples(lang) {
  const dir = join(EXAMPLES, lang);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "expect.json")))
    .map((d) => ({ name: d.name, dir: join(dir, d.name), wasm: join(dir, d.name, `${d.name}.wasm`) }));
}

function hasWat2wasm() {
  try {
    execFileSync("wat2wasm", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

for (const lang of ["assemblyscript", "wat"]) {
  for (const ex of examples(lang)) {
    test(`${lang}/${ex.name}: expect.json`, async () => {
      const failures = await runExpect(ex.wasm, join(ex.dir, "expect.json"));
      assert.deepEqual(failures, []);
    });

    test(`${lang}/${ex.name}: imports only cairn.*`, async () => {
      const mod = await WebAssembly.compile(await readFile(ex.wasm));
      for (const imp of WebAssembly.Module.imports(mod)) assert.equal(imp.module, "cairn", `${imp.module}.${imp.name}`);
    });

    test(`${lang}/${ex.name}: committed .wasm matches its source`, async (t) => {
      if (lang === "wat" && !hasWat2wasm()) {
        t.skip("wat2wasm not installed (Debian: apt-get install wabt)");
        return;
      }
      const tmp = await mkdtemp(join(tmpdir(), "cairn-ex-"));
      try {
        const out = join(tmp, "out.wasm");
        let built;
        if (lang === "assemblyscript") {
          built = await compile(join(ex.dir, `${ex.name}.ts`), out);
        } else {
          execFileSync("wat2wasm", [join(ex.dir, `${ex.name}.wat`), "-o", out]);
          built = await readFile(out);
        }
        const committed = await readFile(ex.wasm);
        assert.ok(built.equals(committed), `${ex.wasm} is stale: run ${join(ex.dir, "build.sh")}`);
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
    });
  }
}

test("prefix-keyfun: keys that share a prefix share a hash", async () => {
  const hook = await loadHook(join(EXAMPLES, "assemblyscript", "prefix-keyfun", "prefix-keyfun.wasm"));
  const hash = (bucket, key) => hook.call("prefix_hash", { bucket_type: "default", bucket, key }).output.toString("hex");
  assert.equal(hash("users", "user42:profile"), hash("users", "user42:orders"));
  assert.equal(hash("users", "user42:a:b"), hash("users", "user42"));
  assert.notEqual(hash("users", "user42:profile"), hash("users", "user43:profile"));
  assert.notEqual(hash("users", "user42:profile"), hash("people", "user42:profile"));
  // The length prefix keeps ("ab", "c") and ("a", "bc") apart.
  assert.notEqual(hash("ab", "c"), hash("a", "bc"));
  assert.equal(hash("users", "user42:profile").length, 40);
});
