#!/usr/bin/env bash
# scripts/test.sh — set up (or verify) the venv, then run pytest in it. Extra arguments go to pytest,
# e.g.  bash scripts/test.sh -k crf   or   bash scripts/test.sh -m slow
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/prepare.sh"
exec "$VENV/bin/python" -m pytest -q "$@"
