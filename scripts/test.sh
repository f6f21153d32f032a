#!/usr/bin/env bash
# scripts/test.sh — set up (or verify) the venv, then run pytest in it.
#   bash scripts/test.sh           the fast set: -m "not slow and not integration" (no training, no subprocess)
#   bash scripts/test.sh --all     every test but the slow real-data runs: -m "not slow" (what CI runs)
# Extra arguments go to pytest after the marker, so a -m of their own replaces it:
#   bash scripts/test.sh -k crf    bash scripts/test.sh --all -k benchmark    bash scripts/test.sh -m slow
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/prepare.sh"
MARKERS="not slow and not integration"
if [ "${1:-}" = "--all" ]; then
  MARKERS="not slow"
  shift
fi
exec "$VENV/bin/python" -m pytest -q -m "$MARKERS" "$@"
