# Sourced by scripts/test.sh and scripts/demo.sh: go to the repository root, set up (or verify) the
# venv with scripts/setup_env.sh (a no-op when up to date), and run offline (no model hub).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export VENV="$(realpath -m "${VENV:-$ROOT/.venv}")"
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
