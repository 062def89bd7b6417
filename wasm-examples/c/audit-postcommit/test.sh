#!/bin/sh
# Compiles audit.c natively against the C SDK's test stand-in and runs audit_test.c.
set -eu
cd "$(dirname "$0")"
CC=${CC:-cc}
SDK=../../../sdk/c
mkdir -p build
"$CC" -std=c99 -Wall -Wextra -Werror -g -I "$SDK" -o build/audit_test audit.c audit_test.c "$SDK/cairn.c" -lm
./build/audit_test
