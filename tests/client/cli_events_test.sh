#!/usr/bin/env bash
# End-to-end checks of `graphrt events`: an event file written here by
# Python (its own CRC32C and protobuf encoding, not graphrt's) is printed.
# usage: cli_events_test.sh BUILD_DIR
set -euo pipefail

BUILD=$(cd "$1" && pwd)
GRAPHRT="$BUILD/bin/graphrt"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[[ -x "$GRAPHRT" ]] || { echo "FAIL: $GRAPHRT is not built" >&2; exit 1; }

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
run_ok() {
  local name=$1; shift
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  OUT=$(cat "$TMP/stdout")
  if [[ $rc -ne 0 ]]; then
    fail "$name: exit $rc from: $*"; sed 's/^/    stderr: /' "$TMP/stderr" >&2; return 1
  fi
}
expect_out() {
  if grep -qF -- "$2" <<<"$OUT"; then pass "$1"; else fail "$1: '$2' not in output:"; sed 's/^/    | /' <<<"$OUT" >&2; fi
}
expect_no_out() {
  if grep -qF -- "$2" <<<"$OUT"; then fail "$1: '$2' in output"; else pass "$1"; fi
}
expect_error() {
  local name=$1 want_rc=$2 needle=$3; shift 3
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  local err; err=$(cat "$TMP/stderr")
  if [[ $rc -ne $want_rc ]]; then fail "$name: exit $rc, want $want_rc ($err)"
  elif ! grep -qF -- "$needle" <<<"$err"; then fail "$name: '$needle' not in: $err"
  else pass "$name"; fi
}

mkdir -p "$TMP/logdir"
/usr/bin/python3 - "$TMP/logdir/events.out.tfevents.1500000000.host" <<'PYEOF'
import struct, sys

def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff

def mask(c):
    return ((((c >> 15) | (c << 17)) & 0xffffffff) + 0xa282ead8) & 0xffffffff

def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload

def record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", mask(crc32c(length))) + data + struct.pack("<I", mask(crc32c(data)))

def event(step, what):
    return field(1, 1, struct.pack("<d", 1500000000.0 + step)) + field(2, 0, varint(step)) + what

scalar = lambda tag, v: field(1, 2, field(1, 2, tag) + field(2, 5, struct.pack("<f", v)))
histo = field(1, 2, field(1, 2, b"weights") + field(5, 2,
    field(1, 1, struct.pack("<d", -1.0)) + field(2, 1, struct.pack("<d", 3.0)) +
    field(3, 1, struct.pack("<d", 4.0)) + field(4, 1, struct.pack("<d", 6.0))))
with open(sys.argv[1], "wb") as f:
    f.write(record(field(1, 1, struct.pack("<d", 1500000000.0)) + field(3, 2, b"brain.Event:2")))
    f.write(record(event(10, field(5, 2, scalar(b"loss", 0.5) + scalar(b"accuracy", 0.75)))))
    f.write(record(event(20, field(5, 2, scalar(b"loss", 0.25) + histo))))
    f.write(record(event(20, field(7, 2, field(1, 0, varint(3)) + field(2, 2, b"/tmp/model.ckpt-20")))))
PYEOF
EV="$TMP/logdir/events.out.tfevents.1500000000.host"

run_ok "events file" "$GRAPHRT" events "$EV"
expect_out "events: count" "(4 events)"
expect_out "events: file_version" "step 0  file_version  brain.Event:2"
expect_out "events: scalar" "step 10  scalar  loss = 0.5"
expect_out "events: second value" "step 10  scalar  accuracy = 0.75"
expect_out "events: later step" "step 20  scalar  loss = 0.25"
expect_out "events: histogram" "step 20  histogram  weights  num 4 min -1 max 3 mean 1.5"
expect_out "events: session_log" "step 20  session_log  CHECKPOINT /tmp/model.ckpt-20"
run_ok "events dir --tag" "$GRAPHRT" events "$TMP/logdir" --tag loss
expect_out "events --tag: kept" "step 20  scalar  loss = 0.25"
expect_no_out "events --tag: others dropped" "accuracy"
expect_no_out "events --tag: non-summary events dropped" "file_version"

# The first record is 16 + 24 bytes; a byte of the second record's data
# zeroed, then the file cut inside the second record.
cp "$EV" "$TMP/bad"
printf '\x00' | dd of="$TMP/bad" bs=1 seek=60 conv=notrunc status=none
expect_error "events: corrupted" 1 "corrupted record at 40" "$GRAPHRT" events "$TMP/bad"
head -c 50 "$EV" >"$TMP/short"
expect_error "events: truncated" 1 "truncated record at 40" "$GRAPHRT" events "$TMP/short"
expect_error "events: missing" 1 "Could not open" "$GRAPHRT" events "$TMP/nothing"
expect_error "events: no PATH" 2 "missing PATH" "$GRAPHRT" events

if [[ $failures -ne 0 ]]; then echo "$failures failure(s)" >&2; exit 1; fi
echo "all passed"
