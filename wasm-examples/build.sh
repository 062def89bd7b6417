#!/usr/bin/env bash
# Rebuilds every example module from source with its own build.sh (make wasm-examples).
# Each example's TOOLCHAIN file names the Debian or npm packages its build needs; a build
# whose toolchain is missing fails with a message saying which.
set -euo pipefail
cd "$(dirname "$0")"
failed=()
for script in */*/build.sh; do
  dir=$(dirname "$script")
  echo "== $dir"
  if ! (cd "$dir" && ./build.sh); then
    failed+=("$dir")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "wasm-examples: failed to build: ${failed[*]}" >&2
  exit 1
fi
echo "wasm-examples: all examples rebuilt"
