#!/usr/bin/env bash
# libgraphrt_c.so exports exactly the functions graphrt/c_client.h declares:
# no C++ symbol (graphrt's, protobuf's, the standard library's) leaks, and
# none of the header's functions is missing.
# The same check serves libgraphrt_tf_c (graphrt/tf_c_api.h, TF_*).
# usage: c_api_exports_test.sh LIB HEADER [PREFIX (GRC)] [VERSION_NODE (GRAPHRT_C_1)]
set -euo pipefail
lib=$1
header=$2
prefix=${3:-GRC}
node=${4:-GRAPHRT_C_1}
command -v nm >/dev/null || { echo "nm not found"; exit 1; }
# Every defined dynamic symbol with global binding (nm's upper-case types, and
# 'u' for GNU unique) but the version node (type A). Lower-case types are
# LOCAL-binding entries the linker may leave in .dynsym (the clang sanitizer
# build does, for an inlined protobuf accessor): the dynamic linker never binds
# to them, so they are not exports.
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Zu]$/ && $2 != "A" {print $3}' | sed 's/@.*//' | sort -u)
declared=$(grep -v '^#' "$header" | grep -oE "\\b${prefix}_[A-Za-z]+\\(" | tr -d '(' | sort -u)
[[ -n "$declared" ]] || { echo "FAIL: no functions found in $header"; exit 1; }
if [[ "$exported" != "$declared" ]]; then
  echo "FAIL: exported symbols differ from the header's functions"
  diff <(echo "$declared") <(echo "$exported") | sed 's/^</  declared, not exported:/; s/^>/  exported, not declared:/'
  exit 1
fi
# The version node the script names.
nm -D --defined-only "$lib" | grep -c " A ${node}\$" >/dev/null || { echo "FAIL: no ${node} version node"; exit 1; }
echo "$(echo "$exported" | wc -l) symbols exported, all declared in $(basename "$header")"
