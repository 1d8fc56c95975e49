#!/usr/bin/env bash
# Chat first-token benchmark: drives the AI Chat in Debian's Chromium against the fake model
# and a JupyterLab of its own, prints the result as JSON (also in
# benchmarks/chat_first_token/results/latest.json). The runner: benchmarks/browser/run.sh.
#
#   bash benchmarks/chat_first_token/run.sh          # 30 asks of each kind
#   BENCH_ASKS=10 bash benchmarks/chat_first_token/run.sh
#
# Ports: CHAPYTER_BENCH_LAB_PORT (19151) and CHAPYTER_BENCH_LLM_PORT (19152).
set -euo pipefail
export BENCH_COMMAND="${BENCH_ASKS:+BENCH_ASKS=$BENCH_ASKS }bash benchmarks/chat_first_token/run.sh"
exec bash "$(dirname "$0")/../browser/run.sh" chat_first_token
