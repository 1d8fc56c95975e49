#!/usr/bin/env bash
# Sets up chapyter-ext on a fresh machine and starts JupyterLab with it.
# Extra arguments go to `jupyter lab` (e.g. --port 8890 --ip 0.0.0.0).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

[ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$ROOT/.venv/bin:$PATH"
python -m pip install -q --upgrade pip
# Builds the TypeScript frontend during the install (needs node and npm).
python -m pip install -q . "jupyterlab>=4.5,<5" ipykernel pandas matplotlib

# Every IPython kernel of this environment loads the extension, so %%ai works at once.
mkdir -p "$ROOT/.venv/etc/ipython"
cat > "$ROOT/.venv/etc/ipython/ipython_config.py" <<'PY'
c.InteractiveShellApp.extensions = ["chapyter_ext"]
PY

mkdir -p notebooks
exec jupyter lab --notebook-dir=notebooks "$@"
