#!/usr/bin/env bash
# Install the browser-test dependencies and run the browser tests; exits non-zero on failure.
#
#   ui-tests/run.sh                 # the whole suite
#   ui-tests/run.sh -g "Run All"    # extra arguments go to `playwright test`
#
# Needs: chapyter-ext installed (editable) with its labextension built in the Python
# environment (../.venv by default, or CHAPYTER_UI_PYTHON), and Chromium at /usr/bin/chromium
# (or CHAPYTER_UI_CHROMIUM). Ports 18811 to 18815 (CHAPYTER_UI_LAB_PORT, CHAPYTER_UI_LLM_PORT,
# CHAPYTER_UI_LOCAL_LAB_PORT and the two after it).
# Screenshots, logs and the HTML report go to ui-tests/artifacts/ (or CHAPYTER_UI_ARTIFACTS).
set -euo pipefail
cd "$(dirname "$0")"

if [[ -x ../.venv/bin/python && -z "${CHAPYTER_UI_PYTHON:-}" ]]; then
  export PATH="$(cd .. && pwd)/.venv/bin:$PATH"
fi
# Playwright must never fetch a browser of its own: Debian's Chromium is used.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

npm ci --no-audit --no-fund
rm -rf "${CHAPYTER_UI_ARTIFACTS:-artifacts}"
exec npx playwright test "$@"
