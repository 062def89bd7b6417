#!/bin/sh
# Builds json-linkfun.wasm from the Go sources here with the Go toolchain alone.
# The build is reproducible: the same Go version gives the same bytes.
set -eu
cd "$(dirname "$0")"
if ! command -v go >/dev/null 2>&1; then
	echo "json-linkfun: the Go toolchain is missing; install the version in the repository's go.mod (https://go.dev/dl/)" >&2
	exit 1
fi
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false \
	-ldflags='-s -buildid=' -o json-linkfun.wasm .
