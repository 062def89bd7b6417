#!/bin/sh
# Builds json-schema-precommit.wasm from source with Debian's rustc 1.63 and the
# wasm32-wasi standard library (packages: see ../TOOLCHAIN), offline, against the
# crates in /usr/share/cargo/registry (see ../.cargo/config.toml).
set -eu
cd "$(dirname "$0")"
RUSTC=${RUSTC:-/usr/bin/rustc}
CARGO=${CARGO:-/usr/bin/cargo}
if [ ! -x "$RUSTC" ] || [ ! -x "$CARGO" ]; then
  echo "json-schema-precommit: Debian rustc/cargo not found ($RUSTC, $CARGO); apt-get install $(cat ../TOOLCHAIN)" >&2
  exit 1
fi
if [ ! -d "$("$RUSTC" --print sysroot)/lib/rustlib/wasm32-wasi/lib" ]; then
  echo "json-schema-precommit: no wasm32-wasi standard library for $RUSTC; apt-get install libstd-rust-dev-wasm32" >&2
  exit 1
fi
RUSTC="$RUSTC" CARGO_TARGET_DIR=../target "$CARGO" build --release --target wasm32-wasi
cp ../target/wasm32-wasi/release/json_schema_precommit.wasm json-schema-precommit.wasm
echo "json-schema-precommit: built json-schema-precommit.wasm ($(wc -c < json-schema-precommit.wasm) bytes)"
