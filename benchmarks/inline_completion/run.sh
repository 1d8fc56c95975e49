#!/usr/bin/env bash
# Inline completion latency: last keystroke to first ghost text painted, in a real JupyterLab
# in Debian's Chromium, with the loopback model answering at once. Prints the result as JSON
# (also in benchmarks/inline_completion/results/latest.json). The runner:
# benchmarks/browser/run.sh.
#
#   bash benchmarks/inline_completion/run.sh           # 30 suggestions (after 3 warm-up)
#   BENCH_ASKS=10 bash benchmarks/inline_completion/run.sh
#
# Ports: CHAPYTER_BENCH_LAB_PORT (18831) and CHAPYTER_BENCH_LLM_PORT (18832).
set -euo pipefail
export CHAPYTER_BENCH_LAB_PORT="${CHAPYTER_BENCH_LAB_PORT:-18831}"
export CHAPYTER_BENCH_LLM_PORT="${CHAPYTER_BENCH_LLM_PORT:-18832}"
export BENCH_COMMAND="${BENCH_ASKS:+BENCH_ASKS=$BENCH_ASKS }bash benchmarks/inline_completion/run.sh"
exec bash "$(dirname "$0")/../browser/run.sh" inline_completion
