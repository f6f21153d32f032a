#!/usr/bin/env bash
# scripts/test.sh — set up (or verify) the venv, then run pytest in it. Extra arguments go to pytest,
# e.g.  bash scripts/test.sh -k crf   or   bash scripts/test.sh -m slow
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export VENV="$(realpath -m "${VENV:-$ROOT/.venv}")"
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$VENV/bin/python" -m pytest -q "$@"
