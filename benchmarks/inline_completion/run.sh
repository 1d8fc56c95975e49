#!/usr/bin/env bash
# Inline completion latency: last keystroke to first ghost text painted, in a real JupyterLab
# in Debian's Chromium, with the loopback model answering at once. Reuses the chat
# first-token benchmark's runner (it starts the fake model and JupyterLab in a temporary
# folder, runs the spec, prints the JSON result and stops what it started).
#
#   bash benchmarks/inline_completion/run.sh           # 30 suggestions (after 3 warm-up)
#   BENCH_ASKS=10 bash benchmarks/inline_completion/run.sh
#
# Ports: CHAPYTER_BENCH_LAB_PORT (18831) and CHAPYTER_BENCH_LLM_PORT (18832).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
export BENCH_DIR="$HERE" BENCH_SPEC="inline_completion.bench.ts"
export CHAPYTER_BENCH_LAB_PORT="${CHAPYTER_BENCH_LAB_PORT:-18831}"
export CHAPYTER_BENCH_LLM_PORT="${CHAPYTER_BENCH_LLM_PORT:-18832}"
export BENCH_COMMAND="${BENCH_ASKS:+BENCH_ASKS=$BENCH_ASKS }bash benchmarks/inline_completion/run.sh"
exec bash "$HERE/../chat_first_token/run.sh"
