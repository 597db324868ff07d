#!/usr/bin/env bash
# Checks that the shared library exports every function that
# tests/api/spec_exports.txt lists, and that each one is called somewhere in the test suites.
# usage: check_exports.sh <liblmggml.so> <source dir>
set -euo pipefail
lib=$1
src=$2
list=$src/tests/api/spec_exports.txt
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
missing=0
untested=0
while read -r name; do
  case "$name" in ''|'#'*) continue ;; esac
  if ! grep -qx "$name" <<<"$exported"; then
    echo "not exported: $name"
    missing=$((missing + 1))
  fi
  if ! grep -rqw --include='*.cpp' --include='*.h' "$name" "$src/tests"; then
    echo "not called by any test: $name"
    untested=$((untested + 1))
  fi
done < "$list"
total=$(grep -cv '^#' "$list")
echo "$total functions: $missing not exported, $untested not exercised by a test"
[ "$missing" -eq 0 ] && [ "$untested" -eq 0 ]
