#!/usr/bin/env bash
# The Debian packages as a clean machine gets them: builds them with
# tools/package.sh, checks each package's fields and files, unpacks them into
# a scratch root, checks that every library a packaged binary loads and every
# Python module the packaged module imports comes from a package in its
# Depends closure (not from what happens to be installed on this machine),
# and uses them from the scratch root: the CLI with its plugins,
# find_package(graphrt) components without protobuf's development files (a
# plugin, a C client), the Python module.
# usage: package_deb_test.sh BUILD_DIR SOURCE_DIR
# The packages' build tree is tools/package.sh's, BUILD_DIR-package beside
# BUILD_DIR (kept, so a rerun is incremental; at BUILD_DIR's depth, so
# ccache's base_dir-relative command lines match and compiles come from the
# cache). Its GRAPHRT_ISA_BUILDS follows BUILD_DIR's (the x86-64-v4 builds
# double the plugins' compile time), and so does GRAPHRT_WERROR (a flag that
# differs would miss the cache).
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
unset GRAPHRT_PLUGIN_PATH PYTHONPATH PYTHONHOME
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ARCH=$(dpkg --print-architecture)
LIBDIR=usr/lib/$MA
PYDIR=usr/lib/python3/dist-packages
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
isa=$(cache_value GRAPHRT_ISA_BUILDS)
werror=$(cache_value GRAPHRT_WERROR)

SECONDS=0
echo "== tools/package.sh (GRAPHRT_ISA_BUILDS=${isa:-OFF})"
SETUP=0 BUILD_DIR="$BUILD-package" PACKAGE_DIR="$TMP/debs" "$SRC/tools/package.sh" \
  -DGRAPHRT_ISA_BUILDS="${isa:-OFF}" -DGRAPHRT_WERROR="${werror:-OFF}" >"$TMP/debs.txt" 2>"$TMP/package.log" ||
  { tail -50 "$TMP/package.log" >&2; fail "tools/package.sh"; }
PKGS=(libgraphrt0 libgraphrt-dev graphrt python3-graphrt)
declare -A DEB
for p in "${PKGS[@]}"; do
  DEB[$p]=$(grep "/${p}_[^_]*_${ARCH}\.deb$" "$TMP/debs.txt") || fail "no $p package: $(cat "$TMP/debs.txt")"
done
[[ $(wc -l <"$TMP/debs.txt") -eq ${#PKGS[@]} ]] || fail "packages other than ${PKGS[*]}: $(cat "$TMP/debs.txt")"
VERSION=$(dpkg-deb -f "${DEB[libgraphrt0]}" Version)

echo "   ${SECONDS}s"
echo "== fields"
for p in "${PKGS[@]}"; do dpkg-deb -f "${DEB[$p]}" >"$TMP/$p.control"; done
field() {  # package field: its value (continuation lines too)
  awk -v k="$2:" '$1 == k {sub(/^[^:]*: ?/, ""); print; on = 1; next} on && /^[ \t]/ {print; next} {on = 0}' \
    "$TMP/$1.control"
}
expect_field() {  # package field regex
  local v
  v=$(field "$1" "$2")
  grep -qE "$3" <<<"$v" || fail "$1: $2 is '$v', expected /$3/"
}
declare -A SECTION=([libgraphrt0]=libs [libgraphrt-dev]=libdevel [graphrt]=utils [python3-graphrt]=python)
for p in "${PKGS[@]}"; do
  expect_field "$p" Package "^$p\$"
  expect_field "$p" Version "^${VERSION//./\\.}\$"
  expect_field "$p" Section "^${SECTION[$p]}\$"
  expect_field "$p" Maintainer '^[^<]+ <[^@>]+@[^>]+\.[a-z]+>$'
  if field "$p" Maintainer | grep -qi localhost; then fail "$p: Maintainer $(field "$p" Maintainer)"; fi
  expect_field "$p" Description '.'
done
exact="libgraphrt0 \(= ${VERSION//./\\.}\)"
for p in libgraphrt-dev graphrt python3-graphrt; do
  expect_field "$p" Depends "(^|, )$exact(,|\$)"
done
expect_field libgraphrt0 Depends 'libprotobuf[0-9]'
expect_field libgraphrt0 Depends 'libtbb'
expect_field graphrt Depends 'libboost-program-options'
for d in 'python3 \(>= 3\.[0-9]+\)' 'python3 \(<< 3\.[0-9]+\)' python3-numpy 'python3-protobuf( \(>= [0-9.]+\))?'; do
  expect_field python3-graphrt Depends "(^|, )$d(,|\$)"
done
# The C++ headers need protobuf's, but the SDK and the C APIs do not.
if field libgraphrt-dev Depends | grep -q libprotobuf-dev; then fail "libgraphrt-dev depends on libprotobuf-dev"; fi
expect_field libgraphrt-dev Recommends 'libprotobuf-dev'

echo "== contents"
for p in "${PKGS[@]}"; do
  dpkg-deb -c "${DEB[$p]}" | awk '{print $6}' | sed 's|^\./||; s|/$||' >"$TMP/$p.files"
  dpkg-deb -c "${DEB[$p]}" | awk '$1 !~ /^d/ {print $6}' >"$TMP/$p.nondirs"
done
has() {  # package path...
  local p=$1 f
  shift
  for f in "$@"; do grep -qxF "$f" "$TMP/$p.files" || fail "$f is not in $p"; done
}
has_not() {  # package regex
  if grep -E "$2" "$TMP/$1.files"; then fail "$1 has files matching $2 (above)"; fi
}
has libgraphrt0 "$LIBDIR/libgraphrt_core.so.0" "$LIBDIR/libgraphrt_client.so.0" "$LIBDIR/libgraphrt_c.so.0" \
  "$LIBDIR/libgraphrt_tf_c.so.0" "$LIBDIR/graphrt/plugins/libgraphrt_device_cpu.so" \
  "$LIBDIR/graphrt/plugins/libgraphrt_ops_math_cpu.so"
has_not libgraphrt0 "^$LIBDIR/lib[^/]*\\.so\$|^usr/include|/cmake/"
if [[ $isa == ON ]]; then
  has libgraphrt0 "$LIBDIR/graphrt/plugins/x86-64-v4/libgraphrt_ops_math_cpu.so"
fi
has libgraphrt-dev "$LIBDIR/libgraphrt_core.so" "$LIBDIR/libgraphrt_client.so" "$LIBDIR/libgraphrt_c.so" \
  "$LIBDIR/libgraphrt_tf_c.so" usr/include/graphrt/c_api.h usr/include/graphrt/model.h \
  usr/include/graphrt/c_client.h usr/include/graphrt/tf_c_api.h usr/include/graphrt/proto/graph.pb.h \
  usr/include/graphrt/proto/graph.proto usr/include/graphrt/proto/saved_model.proto \
  "$LIBDIR/cmake/graphrt/graphrtConfig.cmake" "$LIBDIR/cmake/graphrt/graphrtConfigVersion.cmake" \
  "$LIBDIR/cmake/graphrt/GraphrtPlugin.cmake"
for set in Sdk C Core; do
  grep -qE "^$LIBDIR/cmake/graphrt/graphrt${set}Targets(-release)?\.cmake$" "$TMP/libgraphrt-dev.files" ||
    fail "no graphrt${set}Targets in libgraphrt-dev"
done
has_not libgraphrt-dev '\.so\.[0-9]|/plugins/'
has graphrt usr/bin/graphrt
has python3-graphrt "$PYDIR/graphrt/__init__.py" "$PYDIR/graphrt/proto/graph_pb2.py"
grep -qE "^$PYDIR/graphrt/_graphrt[^/]*\.so$" "$TMP/python3-graphrt.files" || fail "no extension in python3-graphrt"
for p in "${PKGS[@]}"; do
  has "$p" "usr/share/doc/$p/copyright"
  # Multiarch: libraries and the CMake package under usr/lib/<triplet>.
  has_not "$p" '^usr/lib/(lib[^/]*\.so|graphrt|cmake)'
done
# dpkg refuses to install two packages that ship the same file.
cat "$TMP"/*.nondirs | sort | uniq -d >"$TMP/shared.txt"
[[ -s "$TMP/shared.txt" ]] && { cat "$TMP/shared.txt" >&2; fail "files in more than one package (above)"; }

echo "== unpack into a scratch root"
ROOT="$TMP/root"
for p in "${PKGS[@]}"; do
  dpkg-deb -x "${DEB[$p]}" "$ROOT"
done
for p in "${PKGS[@]}"; do
  head -1 "$ROOT/usr/share/doc/$p/copyright" |
    grep -qxF "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ||
    fail "usr/share/doc/$p/copyright is not a machine-readable copyright file"
done

echo "== every library a packaged binary needs comes from its Depends closure"
# closure.py CONTROL...: the Depends/Pre-Depends closure of each given .deb's
# package, over those packages and this machine's installed ones (only their
# package relations: which packages are installed does not matter), one
# "package: closure..." line each. Alternatives all count; virtual packages
# stand for their providers.
cat >"$TMP/closure.py" <<'PY'
import re, subprocess, sys
def parse(text):
    fields, key = {}, None
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields
def names(rel):
    return [re.split(r"[\s(:]", alt.strip())[0] for dep in rel.split(",") if dep.strip()
            for alt in dep.split("|")]
ours = {}
for path in sys.argv[1:]:
    f = parse(open(path).read())
    ours[f["Package"]] = f
out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Provides}\t${Pre-Depends}\t${Depends}\n"],
                     capture_output=True, text=True, check=True).stdout
deps, providers = {}, {}
for line in out.splitlines():
    pkg, provides, pre, dep = (line.split("\t") + ["", "", ""])[:4]
    deps.setdefault(pkg, []).extend(names(pre) + names(dep))
    for v in names(provides):
        providers.setdefault(v, set()).add(pkg)
for pkg, f in ours.items():
    deps[pkg] = names(f.get("Pre-Depends", "")) + names(f.get("Depends", ""))
for pkg in ours:
    seen, todo = set(), [pkg]
    while todo:
        p = todo.pop()
        for q in [p] + sorted(providers.get(p, ())):
            if q not in seen:
                seen.add(q)
                todo.extend(deps.get(q, []))
    print(pkg + ":", " ".join(sorted(seen)))
PY
controls=()
for p in "${PKGS[@]}"; do controls+=("$TMP/$p.control"); done
/usr/bin/python3 "$TMP/closure.py" "${controls[@]}" >"$TMP/closure.txt" || fail "the Depends closure"
in_closure() { grep "^$1:" "$TMP/closure.txt" | tr ' ' '\n' | grep -qxF "$2"; }
# owner FILE: the package that ships FILE, ours or installed (merged /usr:
# dpkg may know a library by its /lib or its /usr/lib name).
owner() {
  local f=$1 p c o
  for p in "${PKGS[@]}"; do grep -qxF "${f#"$ROOT"/}" "$TMP/$p.files" && { echo "$p"; return; }; done
  for c in "$f" "/usr$f" "${f#/usr}" "$(readlink -f "$f")"; do
    o=$(dpkg -S "$c" 2>/dev/null | head -1 | sed 's/[:,].*//')
    [[ -n "$o" ]] && { echo "$o"; return; }
  done
  return 1
}
checked=0
declare -A OWNER
for p in "${PKGS[@]}"; do
  while read -r f; do
    [[ -f "$ROOT/$f" && ! -L "$ROOT/$f" ]] && readelf -h "$ROOT/$f" >/dev/null 2>&1 || continue
    # Resolved as the dynamic loader would, the scratch root's libdir first;
    # only what the file itself names (NEEDED) is its package's business.
    LD_LIBRARY_PATH="$ROOT/$LIBDIR" ldd "$ROOT/$f" >"$TMP/ldd.txt" 2>&1 || { cat "$TMP/ldd.txt" >&2; fail "ldd $f"; }
    for lib in $(readelf -d "$ROOT/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      # "name => path (addr)", or "path (addr)" for the dynamic loader.
      path=$(awk -v l="$lib" '$1 == l && $2 == "=>" {print $3; exit}
                              {n = split($1, a, "/")} n > 1 && a[n] == l {print $1; exit}' "$TMP/ldd.txt")
      [[ -n "$path" && "$path" != "not" ]] || { cat "$TMP/ldd.txt" >&2; fail "$f: $lib not found"; }
      path=$(realpath -sm "$path")
      [[ -n "${OWNER[$path]:-}" ]] || OWNER[$path]=$(owner "$path") || fail "$f: no package ships $path"
      pkg=${OWNER[$path]}
      in_closure "$p" "$pkg" || fail "$f (in $p) needs $lib from $pkg, which is not in $p's Depends closure"
      checked=$((checked + 1))
    done
  done <"$TMP/$p.files"
done
echo "   $checked needed libraries checked (${SECONDS}s)"

echo "== the CLI runs with the packaged plugins"
GRAPHRT="$ROOT/usr/bin/graphrt"
"$GRAPHRT" run "$SRC/examples/graphs/mlp.pbtxt" >"$TMP/run.txt" 2>&1 || { cat "$TMP/run.txt" >&2; fail "graphrt run"; }
grep -q "probs:0" "$TMP/run.txt" || { cat "$TMP/run.txt" >&2; fail "no probs:0 in the output"; }
"$GRAPHRT" plugins >"$TMP/plugins.txt" 2>&1 || { cat "$TMP/plugins.txt" >&2; fail "graphrt plugins"; }
grep "ops_math_cpu" "$TMP/plugins.txt" | grep -qF "$ROOT/$LIBDIR/graphrt/plugins/" ||
  { cat "$TMP/plugins.txt" >&2; fail "ops_math_cpu was not loaded from the package"; }

# Configure and build a project against the scratch root; extra arguments go
# to cmake. Protobuf is made unfindable: the components used here must not
# need its development files.
build_against_root() {  # name source-dir cmake-args...
  local name=$1 src=$2
  shift 2
  cmake -S "$src" -B "$TMP/$name" -DCMAKE_PREFIX_PATH="$ROOT/usr" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON "$@" >"$TMP/$name.configure.log" 2>&1 ||
    { cat "$TMP/$name.configure.log" >&2; fail "configure $name"; }
  cmake --build "$TMP/$name" -j 2 >"$TMP/$name.build.log" 2>&1 ||
    { cat "$TMP/$name.build.log" >&2; fail "build $name"; }
}

echo "== find_package(graphrt COMPONENTS sdk) builds a plugin, without protobuf"
build_against_root zero_out "$SRC/examples/zero_out"
"$GRAPHRT" ops ZeroOut --plugin "$TMP/zero_out/libzero_out.so" >"$TMP/ops.txt" 2>&1 ||
  { cat "$TMP/ops.txt" >&2; fail "graphrt ops ZeroOut"; }
grep -qF "ZeroOut(to_zero: int32) -> (zeroed: int32)" "$TMP/ops.txt" || { cat "$TMP/ops.txt" >&2; fail "ZeroOut"; }

echo "== graphrt_add_plugin_isa_build from the package: a plugin's x86-64-v3 build beside it"
mkdir -p "$TMP/isa_src"
cat >"$TMP/isa_src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(zero_out_isa CXX)
find_package(graphrt REQUIRED COMPONENTS sdk)
graphrt_add_plugin(zero_out SOURCES $SRC/examples/zero_out/zero_out.cc)
graphrt_add_plugin_isa_build(zero_out x86-64-v3)
CMAKE
build_against_root isa "$TMP/isa_src"
[[ -f "$TMP/isa/x86-64-v3/libzero_out.so" ]] || fail "no x86-64-v3 build of zero_out"
# This CPU's choice (AVX2 and FMA: the x86-64-v3 build), and the file itself when capped.
want="$TMP/isa/libzero_out.so"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && want="$TMP/isa/x86-64-v3/libzero_out.so"
"$GRAPHRT" plugins --plugin "$TMP/isa/libzero_out.so" >"$TMP/isa_plugins.txt" 2>&1 || fail "graphrt plugins (isa)"
grep -qF "  $want" "$TMP/isa_plugins.txt" || { cat "$TMP/isa_plugins.txt" >&2; fail "expected $want loaded"; }
GRAPHRT_PLUGIN_ISA=x86-64 "$GRAPHRT" plugins --plugin "$TMP/isa/libzero_out.so" >"$TMP/isa_plugins.txt" 2>&1 ||
  fail "graphrt plugins (isa, capped)"
grep -qF "  $TMP/isa/libzero_out.so" "$TMP/isa_plugins.txt" || { cat "$TMP/isa_plugins.txt" >&2; fail "the cap"; }

echo "== find_package(graphrt COMPONENTS c) builds examples/c_client, without protobuf"
build_against_root c_client "$SRC/examples/c_client"
"$TMP/c_client/c_client" >"$TMP/c_client.txt" 2>&1 || { cat "$TMP/c_client.txt" >&2; fail "c_client"; }
grep -q "probs:0: dtype 1 shape \[1, 2\]" "$TMP/c_client.txt" ||
  { cat "$TMP/c_client.txt" >&2; fail "c_client output"; }
readelf -d "$TMP/c_client/c_client" | grep -q "NEEDED.*libgraphrt_c\.so\.0" ||
  fail "c_client does not link libgraphrt_c"

echo "== the C++ components need protobuf: without it they are not found, with it they are"
mkdir -p "$TMP/cxx_src"
cat >"$TMP/cxx_src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(cxx CXX)
find_package(graphrt REQUIRED COMPONENTS core client)
foreach(t core client sdk)
  if(NOT TARGET graphrt::${t})
    message(FATAL_ERROR "no graphrt::${t}")
  endif()
endforeach()
CMAKE
if cmake -S "$TMP/cxx_src" -B "$TMP/cxx_noproto" -DCMAKE_PREFIX_PATH="$ROOT/usr" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON >"$TMP/cxx_noproto.log" 2>&1; then
  fail "COMPONENTS core client configured without protobuf (so the checks above prove nothing)"
fi
cmake -S "$TMP/cxx_src" -B "$TMP/cxx" -DCMAKE_PREFIX_PATH="$ROOT/usr" >"$TMP/cxx.log" 2>&1 ||
  { cat "$TMP/cxx.log" >&2; fail "COMPONENTS core client"; }

echo "== the Python module, with only its Depends closure's Python packages"
# Only the files of python3-graphrt's Depends closure's packages, linked
# into one directory, stand for dist-packages (this machine's whole
# dist-packages would hide a missing Depends); -S -I: no site, no user or
# environment paths, so only the interpreter's standard library is there.
/usr/bin/python3 - "$TMP/pydeps" $(grep "^python3-graphrt:" "$TMP/closure.txt" | cut -d' ' -f2-) <<'PY' ||
import os, subprocess, sys
dest, pkgs = sys.argv[1], sys.argv[2:]
base = "/usr/lib/python3/dist-packages/"
for pkg in pkgs:
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    for f in r.stdout.splitlines():
        if f.startswith(base) and os.path.isfile(f):
            link = os.path.join(dest, f[len(base):])
            os.makedirs(os.path.dirname(link), exist_ok=True)
            if not os.path.lexists(link):
                os.symlink(f, link)
PY
  fail "linking the closure's Python files"
PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -S -I - "$ROOT" "$SRC" "$ROOT/$PYDIR" "$TMP/pydeps" \
  >"$TMP/py.txt" 2>&1 <<'PY' ||
import sys
root, src = sys.argv[1], sys.argv[2]
assert not [p for p in sys.path if "-packages" in p], sys.path
sys.path[:0] = sys.argv[3:5]
import numpy as np
import graphrt
import graphrt.proto.graph_pb2
assert graphrt.__file__.startswith(root), graphrt.__file__
with graphrt.Session(src + "/examples/graphs/mlp.pbtxt") as sess:
    probs = sess.run("probs:0", {"x:0": np.array([[1, 2, 3]], np.float32)})
assert probs.shape == (1, 2) and abs(float(probs.sum()) - 1.0) < 1e-5, probs
print("python ok")
PY
  { cat "$TMP/py.txt" >&2; fail "python"; }
grep -q "python ok" "$TMP/py.txt" || { cat "$TMP/py.txt" >&2; fail "python"; }
echo "PASS (${SECONDS}s)"
