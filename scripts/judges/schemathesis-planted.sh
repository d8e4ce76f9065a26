#!/usr/bin/env bash
# The Schemathesis judge's planted-fault self-test (issue #37), run by .ci/run:
# the very invocation of scripts/judges/schemathesis-run.sh against a small
# deliberately broken API (scripts/judges/planted-fault-server.mjs). It must
# pass the faithful server and fail each planted fault (a property the schema
# forbids, a 5xx); otherwise the judge catches nothing and this script fails.
# A few operations and examples: seconds, not minutes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
"$ROOT/scripts/judges/venv.sh"
export MAX_EXAMPLES=20
server=""
stop() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; }
trap stop EXIT

# Starts the planted server with FAULT=$1; sets $server and $base once it printed its port (its readiness signal).
start() {
  stop
  local portfile
  portfile="$(mktemp)"
  FAULT="$1" node "$ROOT/scripts/judges/planted-fault-server.mjs" >"$portfile" &
  server=$!
  until [ -s "$portfile" ]; do
    kill -0 "$server" 2>/dev/null || { echo "the planted-fault server exited" >&2; exit 1; }
    sleep 0.1
  done
  base="http://127.0.0.1:$(head -1 "$portfile")"
  rm -f "$portfile"
}

judge() { "$ROOT/scripts/judges/schemathesis-run.sh" "$base/openapi.json" "$base" planted >/tmp/schemathesis-planted.$$.log 2>&1; }

status=0
start none
if judge; then echo "schemathesis self-test: the faithful server passes"; else
  echo "schemathesis self-test: the faithful server FAILED the judge:" >&2; cat /tmp/schemathesis-planted.$$.log >&2; status=1
fi
for fault in extra-field server-error; do
  start "$fault"
  if judge; then
    echo "schemathesis self-test: planted fault '$fault' was NOT caught:" >&2; cat /tmp/schemathesis-planted.$$.log >&2; status=1
  else
    echo "schemathesis self-test: planted fault '$fault' caught ($(grep -m1 -oE 'Response violates schema|Server error|[A-Z][a-z]+ [a-z ]+violat[a-z]+' /tmp/schemathesis-planted.$$.log || echo 'failed'))"
  fi
done
rm -f /tmp/schemathesis-planted.$$.log
exit $status
