#!/usr/bin/env bash
# Sets up everything on a fresh machine and runs every test: lint, jest, pytest, browser.
# Safe to run again: each step reuses what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

step() { printf '\n== %s\n' "$*"; }

step "system packages (Debian's chromium for the browser tests, g++ for llama-cpp-python, libseccomp2 for trial runs)"
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
# Read the whole listing first: `grep -q` closing the pipe early would fail under pipefail.
libraries=$(ldconfig -p 2>/dev/null || true)
grep -q "libseccomp.so.2" <<<"$libraries" || missing+=(libseccomp2)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

step "python environment (.venv) and the package, built with its frontend"
[ -x .venv/bin/python ] || python3 -m venv .venv
export PATH="$ROOT/.venv/bin:$PATH"
python -m pip install -q --upgrade pip
# `npm install` (not `npm ci`) on purpose: the lockfile pins every version, but it lists only
# this platform's optional native binaries (jest's resolver), which `npm ci` rejects.
npm install --no-audit --no-fund --loglevel=error
# configurable-http-proxy for the JupyterHub tests (tests/hub), pinned by its own lockfile.
(cd tests/hub && npm ci --no-audit --no-fund --loglevel=error)
# Editable, as scripts/start.sh installs it: either may run after the other ([test] holds
# start.sh's [local] extra and apps; start.sh's ipython_config.py stays).
python -m pip install -q -e ".[test]"
# Third-party MCP servers the tests talk to, from committed pins: server-everything (npm,
# package-lock.json) and mcp-server-sqlite, which needs the 1.x mcp SDK, in its own venv.
npm ci --prefix tests/mcp_servers --no-audit --no-fund --loglevel=error
if [ ! -x tests/mcp_servers/.sqlite-venv/bin/mcp-server-sqlite ]; then
  python -m venv tests/mcp_servers/.sqlite-venv
fi
tests/mcp_servers/.sqlite-venv/bin/python -m pip install -q -r tests/mcp_servers/sqlite-requirements.txt
# The editable install copied the built extension; link it so rebuilds show up at once.
jupyter labextension develop --overwrite . >/dev/null
# Read the whole listing first: `grep -q` closing the pipe early would fail under pipefail.
labext=$(jupyter labextension list 2>&1)
grep -q "chapyter-ext.*enabled.*OK" <<<"$labext" || { echo "$labext"; exit 1; }
serverext=$(jupyter server extension list 2>&1)
grep -q "chapyter_ext.*OK" <<<"$serverext" || { echo "$serverext"; exit 1; }

step "lint and type checks"
ruff check .
ruff format --check .
mypy
# No standard-library API newer than pyproject's requires-python (>=3.10).
vermin --target=3.10- --violations --eval-annotations --no-tips --quiet chapyter_ext
npx prettier --check "labextension/**/*.{ts,css,json}" --log-level warn
npx eslint --max-warnings 0 labextension/src
npx stylelint "labextension/style/**/*.css"
npx tsc --noEmit -p .

step "frontend unit tests (jest)"
npx jest --ci

step "python tests (pytest)"
python -m pytest -q

step "browser tests (Playwright + Debian chromium)"
bash ui-tests/run.sh
