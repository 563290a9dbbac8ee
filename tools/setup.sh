#!/usr/bin/env bash
# Installs the Debian packages graphrt builds with; skips what is installed.
set -euo pipefail
packages=(
  g++ cmake ninja-build ccache pkg-config
  dpkg-dev  # dpkg-shlibdeps: the .deb's Depends (cpack)
  qemu-user  # runs tests as on an older CPU (qemu-x86_64 -cpu Haswell)
  libboost-dev libboost-program-options-dev libboost-filesystem-dev
  libprotobuf-dev protobuf-compiler
  libeigen3-dev libdnnl-dev libtbb-dev
  libleveldb-dev libisal-dev  # checkpoint .index tables (LevelDB format), CRC32C
  libgtest-dev libgmock-dev libbenchmark-dev
  libsnappy-dev python3-numpy time
  python3-dev pybind11-dev python3-pytest python3-protobuf  # the Python module (client/python)
  librandom123-dev  # Philox4x32-10 for the random ops (header-only)
  libre2-dev  # RegexReplace, StaticRegexReplace (ops/string)
  libpng-dev  # ImageSummary (ops/summary)
  nlohmann-json3-dev  # graphrt run --trace (Chrome trace JSON)
  libgrpc++-dev protobuf-compiler-grpc  # the distributed runtime (client/distributed)
  python3-grpcio  # tests speak raw MasterService from Python
  openssl  # the TLS tests make their certificates
  clang libc++-dev libc++abi-dev
  libclang-rt-14-dev  # clang's ASan/UBSan/libFuzzer runtimes (only recommended by clang-14)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
