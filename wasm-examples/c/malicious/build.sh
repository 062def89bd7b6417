#!/bin/sh
# Builds malicious.wasm from malicious.c and the C SDK (sdk/c) with Debian's clang
# and wasi-libc (packages: see ../TOOLCHAIN).
set -eu
cd "$(dirname "$0")"
CC=${WASI_CC:-clang}
SDK=../../../sdk/c
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "malicious: $CC not found; apt-get install $(cat ../TOOLCHAIN)" >&2
  exit 1
fi
if [ ! -d /usr/include/wasm32-wasi ] && [ -z "${WASI_SYSROOT:-}" ]; then
  echo "malicious: wasi-libc not found; apt-get install $(cat ../TOOLCHAIN)" >&2
  exit 1
fi
"$CC" --target=wasm32-wasi ${WASI_SYSROOT:+--sysroot="$WASI_SYSROOT"} -std=c99 -Wall -Wextra -Werror \
  -Os -mexec-model=reactor -Wl,--strip-all -I "$SDK" \
  -o malicious.wasm malicious.c "$SDK/cairn.c"
echo "malicious: built malicious.wasm ($(wc -c < malicious.wasm) bytes)"
