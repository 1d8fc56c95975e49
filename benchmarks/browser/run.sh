#!/usr/bin/env bash
# The browser benchmarks' one runner: `bash benchmarks/browser/run.sh <folder>` runs
# benchmarks/<folder>/*.bench.ts with ui-tests' server fixture (the fake model and JupyterLab
# on their own ports, in a temporary folder, stopped by process id afterwards) and page
# fixture, prints the result as JSON (also in benchmarks/<folder>/results/latest.json; the
# servers' logs in results/logs/) and exits non-zero if the benchmark failed. Each folder's
# run.sh calls it (see BENCHMARKS.md for the commands).
#
# Needs ../../.venv with chapyter-ext installed and its labextension built, ui-tests'
# node_modules (installed by ui-tests/run.sh; never `playwright install`), /usr/bin/chromium.
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152).
# CHAPYTER_BENCH_KEEP=1 keeps the temporary folder; CHAPYTER_BENCH_LABEXTENSION=<folder> serves
# a copy of that built labextension; CHAPYTER_BENCH_LAB_ARGS adds `jupyter lab` options.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BENCH_DIR="$REPO/benchmarks/${1:?usage: run.sh <benchmark folder>}"
PLAYWRIGHT="$REPO/ui-tests/node_modules/.bin/playwright"

export PATH="$REPO/.venv/bin:$PATH"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [[ ! -x "$PLAYWRIGHT" ]]; then
  echo "no $PLAYWRIGHT: run 'npm ci' in ui-tests first" >&2
  exit 1
fi

# ui-tests' server fixture, on the benchmark's ports and folders.
export CHAPYTER_UI_LAB_PORT="${CHAPYTER_BENCH_LAB_PORT:-19151}" \
  CHAPYTER_UI_LLM_PORT="${CHAPYTER_BENCH_LLM_PORT:-19152}" \
  CHAPYTER_UI_LOGS="$BENCH_DIR/results/logs" \
  CHAPYTER_UI_KEEP="${CHAPYTER_BENCH_KEEP:-}" \
  BENCH_DIR BENCH_RESULTS="$BENCH_DIR/results/latest.json" \
  NODE_PATH="$REPO/ui-tests/node_modules"
mkdir -p "$BENCH_DIR/results"
rm -f "$BENCH_RESULTS"
"$PLAYWRIGHT" test -c "$HERE/playwright.config.ts" >&2
cat "$BENCH_RESULTS"
