#!/usr/bin/env bash
# Schemathesis over every operation of docs/openapi.json (issue #37): starts
# the local stack (`npm start`) on a fresh temporary data folder and a free
# port, waits until GET /health answers 200, runs Schemathesis with the stack's
# test key (the organization's test twin: test credits, the built-in
# warehouse), and stops the stack. Fails on a 5xx or any answer the document
# does not describe (status, body schema, content type, headers).
#
#   scripts/judges/schemathesis.sh [extra schemathesis options]
#
# Needs .venv-judges (scripts/judges/venv.sh, which .ci/run calls first).
# MAX_EXAMPLES (default 10; 1,705 cases, about 4 minutes on a loaded 2-core machine) bounds the generated cases per operation and phase.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/judges/venv.sh"

data="$(mktemp -d "${TMPDIR:-/tmp}/schemathesis-stack.XXXXXX")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
log="$data.log"
stack=""
stop() {
  if [ -n "$stack" ] && kill -0 "$stack" 2>/dev/null; then
    kill -TERM "$stack" 2>/dev/null || true
    wait "$stack" 2>/dev/null || true
  fi
  rm -rf "$data" "$log" "$data.report"
}
trap stop EXIT

# Schemathesis sends thousands of requests in seconds: the stack's request windows and the test twin's storage quota are
# raised (the limits are not what it judges).
PORT="$port" RATE_LIMIT_REQUESTS=1000000 TEST_RATE_LIMIT_REQUESTS=1000000 TEST_ACCOUNT_IDS_PER_DAY=1000000000 "$ROOT/node_modules/.bin/tsx" infra/local/start.ts --data-dir "$data" >"$log" 2>&1 &
stack=$!
base="http://127.0.0.1:$port"
# Readiness, not a time budget: wait for /health 200 while the stack process lives.
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health" || true)" = "200" ]; do
  if ! kill -0 "$stack" 2>/dev/null; then
    echo "the local stack exited before it was ready:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.5
done
key="$(curl -sf "$base/local/test-key")"
case "$key" in cek_test_*) ;; *) echo "no test key from $base/local/test-key: $key" >&2; exit 1 ;; esac

# Its report goes to a file, and CI's log gets one line of it when the judge finds nothing (the whole report when it
# finds something). The report's closing rule is pytest's ("=== No issues found in 253.1s ==="), and a CI that reads
# test counts from its log took it for the summary of a test run that ran no test: since the judges joined .ci/run,
# every landing was recorded as running no test although vitest's 1,405 passed beside it.
report="$data.report"
# judge NAME [schemathesis options]: one run; one line when it finds nothing, its whole report when it finds something.
judge() {
  local name="$1"
  shift
  if "$ROOT/scripts/judges/schemathesis-run.sh" "$ROOT/docs/openapi.json" "$base" "$key" "$@" >"$report" 2>&1; then
    operations="$(grep -m1 -oE 'Tested: [0-9]+' "$report" | grep -oE '[0-9]+' || echo '?')"
    cases="$(grep -m1 -oE '[0-9]+ generated' "$report" | grep -oE '[0-9]+' || echo '?')"
    links="$(grep -m1 -oE 'API Links: +[0-9]+ covered / [0-9]+ selected' "$report" | sed -E 's/ +/ /g' || true)"
    echo "schemathesis ($name): no issue found; $operations operations, $cases generated cases${links:+, $links} (seed 37)"
    rm -f "$report"
  else
    status=$?
    cat "$report" >&2
    rm -f "$report"
    exit "$status"
  fi
}
# Schemathesis reuses what answers show as inputs of later requests (keys/list's IDs in keys/revoke and keys/rotate),
# so a run that includes those two can revoke the very key the judge calls with, after which every answer is a 401
# (until session 51 the judge ran so, and about half the operations were judged on their 401 alone). They run last.
# First every other operation through the examples, coverage and fuzzing phases. Then the stateful phase, which
# follows the document's links (create → describe, launch, revoke …) with real IDs: over the campaign operations alone
# (in a run over all operations its scenarios start from the other creates and rarely reach a campaign's), then the
# others but the keys. Last the key operations, every phase.
judge "every operation but keys/revoke and keys/rotate" --phases examples,coverage,fuzzing --exclude-path-regex '^/v1/keys/(revoke|rotate)$' "$@"
judge "campaign scenarios" --phases stateful --include-path-regex '^/v1/campaigns/' "$@"
judge "other scenarios" --phases stateful --exclude-path-regex '^/v1/(campaigns|keys)/' "$@"
judge "key operations, last" --include-path-regex '^/v1/keys/' "$@"
