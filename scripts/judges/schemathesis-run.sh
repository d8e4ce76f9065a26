#!/usr/bin/env bash
# The one Schemathesis invocation of the judges (issue #37): the checks and
# phases every run uses, against a document and a base URL, with a bearer key.
#
#   scripts/judges/schemathesis-run.sh DOCUMENT BASE_URL KEY [extra schemathesis options]
#
# Used by scripts/judges/schemathesis.sh (the real document against a local
# stack) and scripts/judges/schemathesis-planted.sh (its planted-fault self-test).
# Fails on a 5xx or any answer the document does not describe (status, body
# schema, content type, headers).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
document="$1"
base="$2"
key="$3"
shift 3
exec "$ROOT/.venv-judges/bin/schemathesis" --no-color run "$document" \
  --url "$base" \
  --header "Authorization: Bearer $key" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${MAX_EXAMPLES:-10}" \
  --workers 2 \
  --seed 37 \
  "$@"
