#!/usr/bin/env bash
# A newcomer's build, timed: a fresh clone of HEAD built cold (ccache off)
# the way the README says, first `tools/build.sh` (what running needs), then
# `tools/build.sh --tests` (the rest). Prints wall and CPU time of each, the
# number of build steps, and the slowest translation units (.ninja_log).
# Wall time hangs on the machine and what else runs on it; CPU time (user +
# sys of the whole build) is the steadier figure -- divide it by the cores
# for an idle machine's wall time.
#
# Usage: bench/build_time.sh [JOBS]        (default: nproc; the README's -j2)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-$(nproc)}
tmp=$(mktemp -d /tmp/graphrt_build_time.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$repo" "$tmp/src"
export CCACHE_DISABLE=1 JOBS=$jobs

timed() {  # timed LABEL CMD...: runs CMD, prints "LABEL wall_s cpu_s steps"
  local label=$1
  shift
  local before after
  before=$(wc -l <"$tmp/src/build/.ninja_log" 2>/dev/null || echo 1)
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >"$tmp/$label.log" 2>&1 ||
    { tail -20 "$tmp/$label.log" >&2; exit 1; }
  after=$(wc -l <"$tmp/src/build/.ninja_log")
  read -r wall user sys <"$tmp/time"
  printf "%-22s %8.0f s wall %8.0f s CPU %6d steps\n" "$label" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
    $((after - before))
}

echo "# cold build of $(git -C "$repo" rev-parse --short HEAD), -j$jobs, $(nproc) cores, ccache off"
timed "tools/build.sh" "$tmp/src/tools/build.sh"
timed "tools/build.sh --tests" "$tmp/src/tools/build.sh" --tests
warnings=$(cat "$tmp"/*.log | grep -c "warning:" || true)
echo "compiler warnings: $warnings"
echo "# slowest steps (s)"
awk 'NR > 1 { printf "%7.1f %s\n", ($2 - $1) / 1000, $4 }' "$tmp/src/build/.ninja_log" | sort -rn | head -15
