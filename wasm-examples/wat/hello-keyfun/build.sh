#!/bin/sh
# Builds hello-keyfun.wasm from hello-keyfun.wat with wabt's wat2wasm.
set -eu
cd "$(dirname "$0")"
if ! command -v wat2wasm >/dev/null 2>&1; then
  echo "build.sh: wat2wasm is required (Debian: apt-get install wabt)" >&2
  exit 1
fi
wat2wasm hello-keyfun.wat -o hello-keyfun.wasm
echo "built $(pwd)/hello-keyfun.wasm"
