#!/usr/bin/env bash
# scripts/setup_label_studio.sh — what the Label Studio ML backend (`eer-ner serve`) and its integration test need.
#
#   1. the `serve` extra (fastapi, uvicorn; requirements-serve.txt, pinned in constraints.txt) into the project's
#      venv (default <repo>/.venv, made first by scripts/setup_env.sh);
#   2. Label Studio (label-studio==1.23.2, pinned in constraints-label-studio.txt) into its own virtualenv
#      (default <repo>/.venv-ls, override with LS_VENV=...): its Django stack clashes with the project's pins.
#
# Idempotent: a stamp in each venv holds a sha256 of the inputs; when it matches, nothing is done. The test
# (tests/serve/test_label_studio.py) finds Label Studio at $LS_VENV/bin/label-studio (or $EER_LABEL_STUDIO)
# and skips, naming this script, when it or the extra is missing. .ci/run runs this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$(realpath -m "${VENV:-$ROOT/.venv}")"
LS_VENV="$(realpath -m "${LS_VENV:-$ROOT/.venv-ls}")"
LABEL_STUDIO="label-studio==1.23.2"
UV_VERSION="0.13.9"
say() { printf '[setup_label_studio] %s\n' "$*" >&2; }
die() { printf '[setup_label_studio] ERROR: %s\n' "$*" >&2; exit 1; }
digest() { { printf '%s\n' "$@"; sha256sum scripts/setup_label_studio.sh; } | sha256sum | cut -d' ' -f1; }
T0=$SECONDS

bash scripts/setup_env.sh
# pip's package locations (its environment variables or config), passed to uv as setup_env.sh does
uv_options() {
  local py="$1" v
  v="${PIP_FIND_LINKS:-$("$py" -m pip config get global.find-links 2>/dev/null || true)}"; for u in $v; do printf -- '--find-links\n%s\n' "$u"; done
  v="${PIP_INDEX_URL:-$("$py" -m pip config get global.index-url 2>/dev/null || true)}"; [ -z "$v" ] || printf -- '--index-url\n%s\n' "$v"
  v="${PIP_EXTRA_INDEX_URL:-$("$py" -m pip config get global.extra-index-url 2>/dev/null || true)}"
  [ -z "$v" ] || { for u in $v; do printf -- '--extra-index-url\n%s\n' "$u"; done; printf -- '--index-strategy\nunsafe-best-match\n'; }
}

# ---------------------------------------------------------------- 1. the serve extra into the project's venv
HASH="$(digest "$(sha256sum constraints.txt requirements-serve.txt)")"
if [ "$(cat "$VENV/.eer-serve-stamp" 2>/dev/null)" != "$HASH" ]; then
  say "[1/2] installing the serve extra (requirements-serve.txt) into $VENV"
  mapfile -t OPTS < <(uv_options "$VENV/bin/python")
  "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" "${OPTS[@]}" -c constraints.txt -r requirements-serve.txt \
    || die "installing the serve extra failed (see above)"
  printf '%s\n' "$HASH" > "$VENV/.eer-serve-stamp"
else
  say "[1/2] serve extra up to date in $VENV"
fi

# ---------------------------------------------------------------- 2. Label Studio in its own venv
HASH="$(digest "$LABEL_STUDIO" "$(sha256sum constraints-label-studio.txt)")"
if [ "$(cat "$LS_VENV/.eer-ls-stamp" 2>/dev/null)" != "$HASH" ] || [ ! -x "$LS_VENV/bin/label-studio" ]; then
  command -v python3.11 >/dev/null 2>&1 || die "python3.11 not found on PATH"
  [ -x "$LS_VENV/bin/python" ] || python3.11 -m venv "$LS_VENV" || die "python3.11 -m venv $LS_VENV failed"
  if [ "$("$LS_VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    "$LS_VENV/bin/python" -m pip install -q "uv==$UV_VERSION" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2) \
      || die "bootstrapping uv into $LS_VENV failed"
  fi
  say "[2/2] installing $LABEL_STUDIO into $LS_VENV (constraints-label-studio.txt; about 2 minutes)"
  mapfile -t OPTS < <(uv_options "$LS_VENV/bin/python")
  "$LS_VENV/bin/uv" pip install -q --python "$LS_VENV/bin/python" "${OPTS[@]}" -c constraints-label-studio.txt "$LABEL_STUDIO" \
    || die "installing $LABEL_STUDIO failed (see above)"
  printf '%s\n' "$HASH" > "$LS_VENV/.eer-ls-stamp"
else
  say "[2/2] $LABEL_STUDIO up to date in $LS_VENV"
fi
say "done in $((SECONDS - T0)) s: eer-ner serve in $VENV, Label Studio at $LS_VENV/bin/label-studio"
