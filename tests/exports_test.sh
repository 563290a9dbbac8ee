#!/usr/bin/env bash
# A C++ library of graphrt exports its public API and nothing else (a linker
# version script: kernel_core/graphrt_core.map, client/graphrt_client.map):
# - every exported symbol belongs to a class or function that an installed
#   header declares, or to the generated graphrt::proto classes; no internal
#   class (Executor, ResourceMgr, DirectSession, client_internal...), no
#   std::, Boost, TBB or protobuf template instance;
# - every function those headers declare out of line is exported;
# - for the core: plugins need nothing from it by symbol (they get the
#   GR_CoreApi table): none lists it as NEEDED or leaves a symbol it
#   exports undefined.
# The public names are read from the headers here, not from the map, so a
# map pattern that catches too much or too little fails the test.
# usage: exports_test.sh VERSION_NODE LIB HEADER_DIRS [PLUGIN_DIR...]
#   HEADER_DIRS: colon-separated directories whose *.h are the public API
#   (or single header files); VERSION_NODE: GRAPHRT_CORE_0, GRAPHRT_CLIENT_0.
set -euo pipefail
node=$1
lib=$2
IFS=: read -r -a header_dirs <<<"$3"
shift 3
headers=()
for h in "${header_dirs[@]}"; do
  if [[ -d $h ]]; then headers+=("$h"/*.h); else headers+=("$h"); fi
done
core=0
[[ $node == GRAPHRT_CORE_0 ]] && core=1
command -v nm >/dev/null || { echo "nm not found"; exit 1; }
command -v readelf >/dev/null || { echo "readelf not found"; exit 1; }

# Top-level declarations of the public headers (their style: namespace
# members start in column 0). Classes and structs with a body (forward
# declarations are other headers' business); functions not inline,
# constexpr or templates, which have no symbol of their own in the library.
decls=$(awk '
  FNR == 1 { tmpl = 0 }
  /^template/ { tmpl = 1; next }
  /^(class|struct) / && /\{/ {
    if (!tmpl) { l = $0; sub(/^(class|struct) (\[\[nodiscard\]\] )?/, "", l); sub(/[ ;{:].*/, "", l); print "C", l }
    tmpl = 0; next
  }
  /^[A-Za-z]/ && !/^(inline|constexpr|template|class|struct|enum|using|namespace|friend|typedef|extern)/ && /\(/ {
    if (!tmpl) { l = $0; sub(/\(.*/, "", l); n = split(l, a, /[ &*]/); if (a[n] !~ /^[A-Z0-9_]+$/) print "F", a[n] }
    tmpl = 0; next
  }
  { tmpl = 0 }' "${headers[@]}" | sort -u)
classes=$(awk '$1 == "C" {print $2}' <<<"$decls" | paste -sd'|')
functions=$(awk '$1 == "F" && $2 != "operator<<" {print $2}' <<<"$decls" | paste -sd'|')
[[ -n "$classes" && -n "$functions" ]] || { echo "FAIL: no declarations found in ${headers[*]}"; exit 1; }
if ((core)); then
  grep -qx "F operator<<" <<<"$decls" || { echo "FAIL: operator<<(ostream, Status) not found in ${headers[*]}"; exit 1; }
fi

# Demangled names of the defined dynamic symbols, version node (type A) and
# version suffix left out.
exported=$(nm -D --defined-only -C "$lib" | awk '$2 != "A"' | cut -d' ' -f3- | sed "s/@@\\?$node\$//" | sort -u)
[[ -n "$exported" ]] || { echo "FAIL: $lib exports nothing"; exit 1; }

allowed="^(vtable for |typeinfo for |typeinfo name for )?graphrt::($classes)(::.*)?\$"
allowed+="|^graphrt::($functions)(\\[abi:cxx11\\])?\\("
((core)) && allowed+="|^graphrt::operator<<\\(std::ostream&, graphrt::Status const&\\)\$"
# The generated classes: members, free functions (enum descriptors,
# default instances), vtables and typeinfo.
allowed+="|^(vtable for |typeinfo for |typeinfo name for )?graphrt::proto::[A-Za-z0-9_]+(::|\\(|\$)"
# Their member templates' instances (AttrValue::set_s<...>: clang emits
# them), whose demangled names also begin with the return type.
allowed+="|^[^(]* graphrt::proto::[A-Za-z0-9_]+::[A-Za-z0-9_]+<"
# Their arena factories (demangled: the return type first) and the per-file tables.
allowed+="|^graphrt::proto::[A-Za-z0-9_]+\\* google::protobuf::Arena::CreateMaybeMessage<graphrt::proto::[A-Za-z0-9_]+>\\("
allowed+="|^descriptor_table_graphrt_2fproto_2f[A-Za-z0-9_]+_2eproto(_getter\\(\\))?\$"
allowed+="|^TableStruct_graphrt_2fproto_2f[A-Za-z0-9_]+_2eproto::"
# A public class's private implementation (Runtime::Impl) is not API either.
offenders=$( (grep -vE "$allowed" <<<"$exported"; grep -E '^graphrt::[A-Za-z]+::Impl::' <<<"$exported") || true)
if [[ -n "$offenders" ]]; then
  echo "FAIL: $(wc -l <<<"$offenders") exported symbols are not public API:"
  sed 's/^/  /' <<<"$offenders" | cut -c1-300
  exit 1
fi

# The version node the map names.
nm -D --defined-only "$lib" | grep -c " A $node\$" >/dev/null || { echo "FAIL: no $node version node"; exit 1; }

missing=
public_functions=${functions//|/ }
((core)) && public_functions+=" operator<<"
for f in $public_functions; do
  grep -qE "^graphrt::$f(\\[abi:cxx11\\])?\\(" <<<"$exported" || missing+=" $f"
done
if [[ -n "$missing" ]]; then
  echo "FAIL: declared in ${headers[*]} but not exported:$missing"
  exit 1
fi
# The protobuf API clients use (a message, its arena factory, a descriptor table).
msg=GraphDef file=graph
((core)) || msg=MetaGraphDef file=meta_5fgraph  # protoc escapes "_" as _5f
for s in "graphrt::proto::$msg::CopyFrom(graphrt::proto::$msg const&)" "vtable for graphrt::proto::$msg" \
  "graphrt::proto::$msg* google::protobuf::Arena::CreateMaybeMessage<graphrt::proto::$msg>(google::protobuf::Arena*)" \
  "descriptor_table_graphrt_2fproto_2f${file}_2eproto"; do
  grep -qxF "$s" <<<"$exported" || { echo "FAIL: $s is not exported"; exit 1; }
done

# Plugins talk to the core through the C ABI only.
core_soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
mangled=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u)
plugins=0
for dir in "$@"; do
  for p in "$dir"/lib*.so; do
    [[ -e "$p" ]] || continue
    plugins=$((plugins + 1))
    if readelf -d "$p" | grep -cF "[$core_soname]" >/dev/null; then
      echo "FAIL: plugin $p links $core_soname"
      exit 1
    fi
    both=$(comm -12 <(nm -D --undefined-only "$p" | awk '{print $2}' | sed 's/@.*//' | sort -u) <(echo "$mangled"))
    if [[ -n "$both" ]]; then
      echo "FAIL: plugin $p leaves symbols of the core undefined:"
      sed 's/^/  /' <<<"$both"
      exit 1
    fi
  done
done
[[ $# -eq 0 || $plugins -gt 0 ]] || { echo "FAIL: no plugins found in $*"; exit 1; }

echo "$(wc -l <<<"$exported") symbols exported, all public API; $plugins plugins checked"
