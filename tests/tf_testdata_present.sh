#!/usr/bin/env bash
# Says whether TensorFlow's files (tf_testdata) are there for the tests that
# check against them; when they are not, this test is listed first among
# the skipped ones, with where it looked and how to point elsewhere.
# usage: tf_testdata_present.sh SHARED_DIR   ($GRAPHRT_SHARED_DIR wins)
d="${GRAPHRT_SHARED_DIR:-$1}/tf_testdata"
if [[ -d "$d" ]]; then
  echo "found $d"
  exit 0
fi
echo "SKIPPED: $d not found; the tests that need TensorFlow's files skip (set GRAPHRT_SHARED_DIR to the folder that holds tf_testdata)"
exit 77  # CTest's skip code (SKIP_RETURN_CODE)
