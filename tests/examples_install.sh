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
