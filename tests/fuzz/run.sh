#!/usr/bin/env bash
# Fuzzes each harness of a GRAPHRT_FUZZ=ON build for SECONDS, seeded by its
# committed corpus (read, never written), and prints executions and coverage.
# Exits non-zero when any harness finds a crash, leak, timeout or OOM; the
# reproducer and the log are then in ARTIFACT_DIR/<harness>/ (default:
# BUILD_DIR/fuzz-artifacts).
#
# usage: tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]   (default: all)
#   env: ARTIFACT_DIR; CORPUS_DIR (seed corpora, one directory per harness;
#        default: the committed tests/fuzz/corpus); FUZZ_FLAGS (extra
#        libFuzzer flags, e.g. -jobs=4 -workers=4)
set -uo pipefail

if (($# < 2)); then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "${CORPUS_DIR:-$here/corpus}" && pwd) || exit 2
artifacts=${ARTIFACT_DIR:-$build/fuzz-artifacts}
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  for d in "$corpus"/*/; do harnesses+=("$(basename "$d")"); done
fi

# The CI sanitizer settings, unless the caller chose others.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:intercept_tls_get_addr=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

failed=0
printf '%-20s %12s %8s %8s %8s  %s\n' harness executions cov corpus rss_mb result
for h in "${harnesses[@]}"; do
  bin=$build/bin/$h
  if [[ ! -x $bin ]]; then
    echo "run.sh: $bin is missing (configure with -DGRAPHRT_FUZZ=ON)" >&2
    failed=1
    continue
  fi
  out=$artifacts/$h
  rm -rf "$out"
  mkdir -p "$out" "$scratch/$h"
  log=$out/fuzz.log
  # New inputs go to the scratch corpus (the first directory); the committed
  # one is only read.
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$out/" ${FUZZ_FLAGS:-} \
    "$scratch/$h" "$corpus/$h" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  cov=$(grep -o ' cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  size=$(grep -o ' corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  repro=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | head -1)
  if ((rc == 0)) && [[ -z $repro ]]; then
    result=ok
    rm -f "$log"
  else
    failed=1
    why=$(grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|terminate called' "$log")
    result="FAIL (exit $rc): ${why:-see the log}; reproducer: ${repro:-none written}; log: $log"
  fi
  printf '%-20s %12s %8s %8s %8s  %s\n' "$h" "${execs:--}" "${cov:--}" "${size:--}" "${rss:--}" "$result"
done
exit $failed
