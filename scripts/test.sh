#!/usr/bin/env bash
# scripts/test.sh — set up (or verify) the venv, then run pytest in it.
# `ruff check` and `ruff format --check` run first (pyproject.toml), then pytest:
#   bash scripts/test.sh           the fast set: -m "not slow and not integration" (no training, no subprocess),
#                                  on every core (pytest-xdist: -n auto; EER_TEST_WORKERS=0 runs it in one process)
#   bash scripts/test.sh --all     every test but the slow real-data runs: -m "not slow" (what CI runs), in one
#                                  process (its tests train models and start services, each on every core)
# Extra arguments go to pytest after the marker, so a -m of their own replaces it:
#   bash scripts/test.sh -k crf    bash scripts/test.sh --all -k benchmark    bash scripts/test.sh -m slow
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/prepare.sh"
MARKERS="not slow and not integration"
WORKERS=(-n "${EER_TEST_WORKERS:-auto}" --dist worksteal)
if [ "${1:-}" = "--all" ]; then
  MARKERS="not slow"
  WORKERS=()
  shift
fi
# the linter and the formatter first (pyproject.toml's [tool.ruff]; `ruff format .` and `ruff check --fix .`
# repair what they report)
"$VENV/bin/ruff" check --quiet . || { echo "ruff check failed: run $VENV/bin/ruff check --fix . (see above)" >&2; exit 1; }
"$VENV/bin/ruff" format --check --quiet . || { echo "ruff format --check failed: run $VENV/bin/ruff format ." >&2; exit 1; }
exec "$VENV/bin/python" -m pytest -q -m "$MARKERS" "${WORKERS[@]}" "$@"
