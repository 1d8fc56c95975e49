#!/usr/bin/env bash
# Shift+Enter on a %%ai cell to the generated cell's first output painted, in Debian's
# Chromium, against the fake model and a JupyterLab of its own. Prints the result as JSON
# (also in benchmarks/shift_enter/results/latest.json). The runner: benchmarks/browser/run.sh.
#
#   bash benchmarks/shift_enter/run.sh                 # 30 runs after 3 warm-ups
#   BENCH_RUNS=10 bash benchmarks/shift_enter/run.sh
#
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152).
set -euo pipefail
export BENCH_COMMAND="${BENCH_RUNS:+BENCH_RUNS=$BENCH_RUNS }bash benchmarks/shift_enter/run.sh"
exec bash "$(dirname "$0")/../browser/run.sh" shift_enter
