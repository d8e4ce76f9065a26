#!/usr/bin/env bash
# Creates (or reuses) .venv-judges, the virtual environment of the Python
# judges, with the exact pins of scripts/judges/requirements.txt.
# Prints nothing on success; the environment is at $ROOT/.venv-judges.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/.venv-judges"
REQUIREMENTS="$ROOT/scripts/judges/requirements.txt"
STAMP="$VENV/.requirements"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && cmp -s "$REQUIREMENTS" "$STAMP"; then exit 0; fi
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
cp "$REQUIREMENTS" "$STAMP"
