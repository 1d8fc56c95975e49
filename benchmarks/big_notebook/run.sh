#!/usr/bin/env bash
# Chat Send → answer painted in notebooks of 10, 200, 500 and 1,000 cells with
# outputs, in Debian's Chromium, against the fake model and a JupyterLab of its own. Prints the
# result as JSON (also in benchmarks/big_notebook/results/latest.json). The runner:
# benchmarks/browser/run.sh.
#
#   bash benchmarks/big_notebook/run.sh                      # 15 asks per size after 3 warm-ups
#   BENCH_ASKS=5 BENCH_SIZES=10,1000 bash benchmarks/big_notebook/run.sh
#   BENCH_PROFILE=1 ...                                      # + a CPU profile at the largest size
#
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152).
set -euo pipefail
export BENCH_COMMAND="${BENCH_ASKS:+BENCH_ASKS=$BENCH_ASKS }${BENCH_SIZES:+BENCH_SIZES=$BENCH_SIZES }bash benchmarks/big_notebook/run.sh"
exec bash "$(dirname "$0")/../browser/run.sh" big_notebook
