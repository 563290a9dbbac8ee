# Sourced by the examples' tests: installs the build tree BUILD into a fresh
# prefix, as a user would, and defines fail(). Sets BUILD, SRC, PY, TMP
# (removed at exit), PREFIX and GRAPHRT (the installed CLI).
# usage (from a test): source examples_install.sh BUILD_DIR SOURCE_DIR
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Only what is installed may be used: no plugin directories from the
# environment (ctest may set one for the build tree).
unset GRAPHRT_PLUGIN_PATH

echo "== install into $PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" ||
  { cat "$TMP/install.log" >&2; fail "cmake --install"; }
GRAPHRT="$PREFIX/bin/graphrt"
[[ -x "$GRAPHRT" ]] || fail "$GRAPHRT was not installed"

# build_linked_example NAME: configures and builds examples/NAME (a program
# that links the installed core) into $TMP/NAME. A sanitizer build tree's
# libraries need the same compiler and sanitizer runtime in the program.
build_linked_example() {
  local name=$1 flags extra=()
  cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
  if [[ "$(cache_value GRAPHRT_SANITIZE)" == "ON" ]]; then
    flags="-fsanitize=address,undefined"
    [[ "$(cache_value GRAPHRT_FUZZ)" == "ON" ]] && flags="$flags -fsanitize=fuzzer-no-link"
    extra=(-DCMAKE_CXX_COMPILER="$(cache_value CMAKE_CXX_COMPILER)" -DCMAKE_CXX_FLAGS="$flags")
  fi
  echo "== build examples/$name against the install"
  cmake -S "$SRC/examples/$name" -B "$TMP/$name" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >"$TMP/configure.log" 2>&1 ||
    { cat "$TMP/configure.log" >&2; fail "configuring examples/$name"; }
  cmake --build "$TMP/$name" -j 2 >"$TMP/build.log" 2>&1 ||
    { cat "$TMP/build.log" >&2; fail "building examples/$name"; }
}
