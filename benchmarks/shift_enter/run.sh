#!/usr/bin/env bash
# Shift+Enter on a %%ai cell to the generated cell's first output painted, in Debian's
# Chromium: the chat benchmark's runner (fake model and JupyterLab on their own ports, in a
# temporary folder) with this folder's spec. Prints the result as JSON (also in
# benchmarks/shift_enter/results/latest.json).
#
#   bash benchmarks/shift_enter/run.sh                 # 30 runs after 3 warm-ups
#   BENCH_RUNS=10 bash benchmarks/shift_enter/run.sh
#
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152), as for the chat.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
export BENCH_DIR="$HERE" BENCH_SPEC=shift_enter.bench.ts \
  BENCH_COMMAND="${BENCH_RUNS:+BENCH_RUNS=$BENCH_RUNS }bash benchmarks/shift_enter/run.sh"
exec bash "$HERE/../chat_first_token/run.sh"
