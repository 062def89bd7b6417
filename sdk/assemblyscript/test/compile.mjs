// compile builds an AssemblyScript hook with the SDK's standard options, resolving
// `import … from "@cairn/hook-sdk"` to this checkout of the SDK. Used by the SDK's tests.

import { mkdir, mkdtemp, rm, symlink, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

/** SDK_DIR is the root of the SDK (the package directory of @cairn/hook-sdk). */
export const SDK_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** ASC_FLAGS are the compiler options every Cairn hook is built with. */
export const ASC_FLAGS = [
  "--runtime", "incremental",
  "--use", "abort=~lib/@cairn/hook-sdk/assembly/host/cairnAbort",
  "-O3",
  "--shrinkLevel", "1",
];

/** compile builds entry (a .ts file) into the .wasm file out and returns its bytes. */
export async function compile(entry, out) {
  // A package directory holding @cairn/hook-sdk -> SDK_DIR, for asc's --path.
  const pkgs = await mkdtemp(join(tmpdir(), "cairn-as-"));
  try {
    await mkdir(join(pkgs, "@cairn"));
    await symlink(SDK_DIR, join(pkgs, "@cairn", "hook-sdk"));
    let stderr = "";
    // Compile from the entry's directory, as the examples' build.sh do: the file names
    // that end up in abort messages are relative to it, so the output is the same.
    const args = [basename(entry), "--baseDir", dirname(resolve(entry)), "--path", pkgs, ...ASC_FLAGS, "-o", resolve(out)];
    const { error } = await asc.main(args, {
      stderr: { write: (s) => { stderr += s; } },
    });
    if (error) throw new Error(`asc ${entry}: ${error.message}\n${stderr}`);
    return await readFile(out);
  } finally {
    await rm(pkgs, { recursive: true, force: true });
  }
}
