#!/bin/sh
# Builds reject-large.wasm from reject-large.wat with wabt's wat2wasm.
set -eu
cd "$(dirname "$0")"
if ! command -v wat2wasm >/dev/null 2>&1; then
  echo "build.sh: wat2wasm is required (Debian: apt-get install wabt)" >&2
  exit 1
fi
wat2wasm reject-large.wat -o reject-large.wasm
echo "built $(pwd)/reject-large.wasm"
