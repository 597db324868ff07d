#!/usr/bin/env bash
# Checks that the shared library exports every name of ggml's public headers
# (public-1.4.1.txt) and of its base library's backend exports (base-1.4.1.txt),
# except the names in known-missing.txt; a name listed there that IS exported
# also fails, so the list only shrinks. C++ names (lm_gguf_write_to_buf, ...)
# are compared demangled, without their parameter list.
# usage: check_api_lists.sh <liblmggml.so> <source dir>
set -euo pipefail
export LC_ALL=C # one collation for sort and comm
lib=$1
dir=$2/tests/api
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only -C "$lib" | awk '{ $1 = ""; $2 = ""; print }' | sed 's/^ *//; s/(.*//' | sort -u > "$tmp/exported"
cat "$dir/public-1.4.1.txt" "$dir/base-1.4.1.txt" | grep -v '^#' | awk 'NF >= 2 { print $2 }' | sort -u > "$tmp/wanted"
{ grep -v '^#' "$dir/known-missing.txt" || true; } | awk 'NF >= 1 { print $1 }' | sort -u > "$tmp/known"

fail=0
report() { # report <message> <file>: one line per name in file
  while read -r name; do echo "$1: $name"; fail=1; done < "$2"
}
{ grep -v '^#' "$dir/known-missing.txt" || true; } | awk 'NF == 1 { print $1 }' > "$tmp/no_reason"
report "known-missing.txt: no reason given" "$tmp/no_reason"
comm -23 "$tmp/wanted" "$tmp/exported" | comm -23 - "$tmp/known" > "$tmp/missing"
report "not exported" "$tmp/missing"
comm -12 "$tmp/known" "$tmp/exported" > "$tmp/landed"
report "exported now, remove from known-missing.txt" "$tmp/landed"
comm -23 "$tmp/known" "$tmp/wanted" > "$tmp/stray"
report "known-missing.txt: in neither list" "$tmp/stray"

echo "$(wc -l < "$tmp/wanted") names: $(wc -l < "$tmp/missing") not exported and not known," \
     "$(wc -l < "$tmp/known") known missing, $(wc -l < "$tmp/landed") of them exported now"
[ "$fail" -eq 0 ]
