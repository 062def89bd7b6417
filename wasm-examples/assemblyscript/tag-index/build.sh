#!/bin/sh
# Builds tag-index.wasm from tag-index.ts with the AssemblyScript SDK in
# sdk/assemblyscript (installing its pinned compiler with `npm ci` on first use).
set -eu
cd "$(dirname "$0")"
SDK="$(cd ../../../sdk/assemblyscript && pwd)"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "build.sh: node and npm are required (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
if [ ! -x "$SDK/node_modules/.bin/asc" ]; then
  (cd "$SDK" && npm ci --no-audit --no-fund)
fi

# asc resolves `import ... from "@cairn/hook-sdk"` through --path: a directory holding
# @cairn/hook-sdk, here a link to the SDK checkout.
PKGS="$(mktemp -d)"
trap 'rm -rf "$PKGS"' EXIT
mkdir "$PKGS/@cairn"
ln -s "$SDK" "$PKGS/@cairn/hook-sdk"

"$SDK/node_modules/.bin/asc" tag-index.ts --path "$PKGS" \
  --runtime incremental --use abort=~lib/@cairn/hook-sdk/assembly/host/cairnAbort \
  -O3 --shrinkLevel 1 -o tag-index.wasm
echo "built $(pwd)/tag-index.wasm"
