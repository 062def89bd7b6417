#!/bin/sh
# Builds audit-postcommit.wasm from audit.c and the C SDK (sdk/c) with Debian's clang
# and wasi-libc (packages: see ../TOOLCHAIN).
set -eu
cd "$(dirname "$0")"
CC=${WASI_CC:-clang}
SDK=../../../sdk/c
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "audit-postcommit: $CC not found; apt-get install $(cat ../TOOLCHAIN)" >&2
  exit 1
fi
if [ ! -d /usr/include/wasm32-wasi ] && [ -z "${WASI_SYSROOT:-}" ]; then
  echo "audit-postcommit: wasi-libc not found; apt-get install $(cat ../TOOLCHAIN)" >&2
  exit 1
fi
"$CC" --target=wasm32-wasi ${WASI_SYSROOT:+--sysroot="$WASI_SYSROOT"} -std=c99 -Wall -Wextra -Werror \
  -Os -mexec-model=reactor -Wl,--strip-all -I "$SDK" \
  -o audit-postcommit.wasm audit.c "$SDK/cairn.c"
echo "audit-postcommit: built audit-postcommit.wasm ($(wc -c < audit-postcommit.wasm) bytes)"
