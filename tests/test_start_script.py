"""``scripts/start.sh --no-install``: the address it tells the newcomer to open has the port,
ip and base_url JupyterLab is given. The script runs for real; ``--version`` (passed on to
``jupyter lab``, last) makes JupyterLab print its version and exit instead of serving."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def start_script(tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "JUPYTER_PORT"}
    environment.update(
        CHAPYTER_NOTEBOOK_DIR=str(tmp_path / "notebooks"),
        CHAPYTER_LAB_SETTINGS_DIR=str(tmp_path / "lab-settings"),
        **(env or {}),
    )
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "start.sh"), "--no-install", *args, "--version"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def hint(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("Starting JupyterLab")]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
@pytest.mark.parametrize(
    ("args", "env", "address"),
    [
        (["--port", "19153"], None, "http://localhost:19153/lab?token=..."),
        (
            ["--port=19154", "--ip=127.0.0.1", "--ServerApp.base_url=/ghost/"],
            None,
            "http://127.0.0.1:19154/ghost/lab?token=...",
        ),
        (
            ["--ServerApp.ip", "::1", "--ServerApp.base_url", "team"],
            None,
            "http://[::1]:8888/team/lab",
        ),
        ([], {"JUPYTER_PORT": "19155"}, "http://localhost:19155/lab?token=..."),
        (["--ip", "0.0.0.0"], None, "http://localhost:8888/lab?token=..."),
    ],
)
def test_the_address_hint_has_the_given_port(
    tmp_path: Path, args: list[str], env: dict[str, str] | None, address: str
) -> None:
    output = start_script(tmp_path, args, env)
    assert f" {address}" in hint(output)
    # The arguments reached JupyterLab: it printed its version (and started nothing).
    assert output.strip().splitlines()[-1][0].isdigit()
