#!/usr/bin/env bash
# Chat first-token benchmark: starts the fake model and JupyterLab on their own ports in a
# temporary folder, drives the AI Chat in Debian's Chromium, prints the result as JSON (also
# in benchmarks/chat_first_token/results/latest.json) and stops what it started.
#
#   bash benchmarks/chat_first_token/run.sh          # 30 asks of each kind
#   BENCH_ASKS=10 bash benchmarks/chat_first_token/run.sh
#
# Needs ../../.venv with chapyter-ext installed and its labextension built, ui-tests'
# node_modules (installed by ui-tests/run.sh; never `playwright install`), /usr/bin/chromium.
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# Another browser benchmark reuses this runner: its folder and spec (see shift_enter/run.sh).
BENCH_DIR="${BENCH_DIR:-$HERE}"
BENCH_SPEC="${BENCH_SPEC:-first_token.bench.ts}"
REPO="$(cd "$HERE/../.." && pwd)"
LAB_PORT="${CHAPYTER_BENCH_LAB_PORT:-19151}"
LLM_PORT="${CHAPYTER_BENCH_LLM_PORT:-19152}"
PLAYWRIGHT="$REPO/ui-tests/node_modules/.bin/playwright"

export PATH="$REPO/.venv/bin:$PATH"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [[ ! -x "$PLAYWRIGHT" ]]; then
  echo "no $PLAYWRIGHT: run 'npm ci' in ui-tests first" >&2
  exit 1
fi
for port in "$LAB_PORT" "$LLM_PORT"; do
  if python -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$port))!=0)"; then
    echo "port $port is in use: set CHAPYTER_BENCH_LAB_PORT / CHAPYTER_BENCH_LLM_PORT" >&2
    exit 1
  fi
done

ROOT="$(mktemp -d "${TMPDIR:-/tmp}/chapyter-bench-XXXXXX")"
mkdir -p "$ROOT/notebooks" "$BENCH_DIR/results" \
  "$ROOT/settings/@jupyterlab/apputils-extension"
echo '{"fetchNews": "false", "checkForUpdates": false}' \
  > "$ROOT/settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
TOKEN="$(python -c 'import secrets; print(secrets.token_hex(24))')"
PIDS=()

stop() {
  # JupyterLab first (SIGTERM: it shuts its kernels down), then the model; each only by the
  # process id this script started, and its process group if it lingers.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid="${PIDS[i]}"
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  if [[ -n "${CHAPYTER_BENCH_KEEP:-}" ]]; then
    echo "kept $ROOT (server logs in $ROOT/logs)" >&2
  else
    rm -rf "$ROOT"
  fi
}
trap stop EXIT

export OPENAI_BASE_URL="http://127.0.0.1:$LLM_PORT/v1" OPENAI_API_KEY=sk-test \
  CHAPYTER_MODEL=fake-model PYTHONUNBUFFERED=1 \
  JUPYTER_CONFIG_DIR="$ROOT/config" JUPYTER_DATA_DIR="$ROOT/data" \
  JUPYTER_RUNTIME_DIR="$ROOT/runtime" IPYTHONDIR="$ROOT/ipython"
unset MPLBACKEND
mkdir -p "$ROOT/logs"
# A built labextension to use instead of the installed one (a copy, so a rebuild of the
# working tree during the run cannot pull it away): CHAPYTER_BENCH_LABEXTENSION=<folder>.
if [[ -n "${CHAPYTER_BENCH_LABEXTENSION:-}" ]]; then
  mkdir -p "$ROOT/data/labextensions"
  cp -r "$CHAPYTER_BENCH_LABEXTENSION" "$ROOT/data/labextensions/chapyter-ext"
fi

# setsid: each server leads its own process group, so a stuck one goes with its children.
setsid python -m chapyter_ext.testing.openai_server --port "$LLM_PORT" \
  --port-file "$ROOT/llm.port" > "$ROOT/logs/fake-openai.log" 2>&1 &
PIDS+=($!)
ALLOW_ROOT=()
[[ "$(id -u)" == 0 ]] && ALLOW_ROOT=(--allow-root)
(cd "$ROOT/notebooks" && exec setsid python -m jupyterlab --no-browser --ip=127.0.0.1 \
  --port="$LAB_PORT" --ServerApp.port_retries=0 --IdentityProvider.token="$TOKEN" \
  --ServerApp.root_dir="$ROOT/notebooks" --LabApp.expose_app_in_browser=True \
  --LabApp.user_settings_dir="$ROOT/settings" \
  --LabApp.workspaces_dir="$ROOT/workspaces" "${ALLOW_ROOT[@]}" \
  ${CHAPYTER_BENCH_LAB_ARGS:-}) \
  > "$ROOT/logs/jupyterlab.log" 2>&1 &
PIDS+=($!)

ready=""
for _ in $(seq 720); do
  if [[ -s "$ROOT/llm.port" ]] && curl -fsS -o /dev/null \
    -H "Authorization: token $TOKEN" "http://127.0.0.1:$LAB_PORT/api/status" 2>/dev/null; then
    ready=1
    break
  fi
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || { tail -n 30 "$ROOT"/logs/*.log >&2; exit 1; }
  done
  sleep 0.25
done
if [[ -z "$ready" ]]; then
  echo "the servers were not ready after 180 s" >&2
  tail -n 30 "$ROOT"/logs/*.log >&2
  exit 1
fi

export CHAPYTER_UI_LAB_URL="http://127.0.0.1:$LAB_PORT" CHAPYTER_UI_TOKEN="$TOKEN" \
  CHAPYTER_UI_LLM_URL="http://127.0.0.1:$LLM_PORT" \
  BENCH_RESULTS="$BENCH_DIR/results/latest.json" BENCH_DIR BENCH_SPEC \
  BENCH_COMMAND="${BENCH_COMMAND:-${BENCH_ASKS:+BENCH_ASKS=$BENCH_ASKS }bash benchmarks/chat_first_token/run.sh}" \
  NODE_PATH="$REPO/ui-tests/node_modules"
rm -f "$BENCH_RESULTS"
"$PLAYWRIGHT" test -c "$HERE/playwright.config.ts" >&2
cat "$BENCH_RESULTS"
