"""The commands that write notebooks write no configured secret: ``chapyter-ext agent`` (its
own process, a real kernel, the loopback model) and ``chapyter-ext regenerate`` replace the
key in every output of the file they write, whole or in part, and say so in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from chapyter_ext.redact import REDACTED
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import python3_notebook

KEY = "sk-test-WRITTEN-Key-0a1b2c3d4e5f"
HEADER = "hdr-Written-Header-9z8y7x"


@pytest.fixture(autouse=True)
def fresh(server):
    server.clear()
    server.default_reply = Reply(content="(the script ran out)")


def settings_env(server, home: Path) -> dict[str, str]:
    """The loopback endpoint and the key in the environment, a header value in the IPython
    profile in ``home``: the settings the notebook's kernel reads."""
    profile = home / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "ipython_config.py").write_text(
        f"c.Chapyter.extra_headers = {{'X-Team': {HEADER!r}}}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_", "MPL"))}
    env.update(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY=KEY,
        CHAPYTER_MODEL="fake-model",
        IPYTHONDIR=str(home),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    return env


def command(server, *args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", *args],
        capture_output=True,
        text=True,
        env=settings_env(server, home),
        timeout=180,
    )


def run_code(code: str) -> dict:
    return {"name": "run_code", "arguments": {"code": code, "purpose": "look"}}


def assert_no_secret(text: str) -> None:
    for secret in (KEY, HEADER):
        assert secret not in text
        assert secret[-10:] not in text  # nor a part of it


def test_agent_writes_no_key_the_steps_printed(server, tmp_path):
    """A step prints the key (it is in the kernel's environment), another a part of it and
    the header value; an earlier output saved with the key in it goes too. The sources stay
    as they were."""
    old = nbformat.v4.new_code_cell(
        "print('old')",
        outputs=[nbformat.v4.new_output("stream", name="stdout", text=f"old {KEY}\n")],
    )
    path = python3_notebook(tmp_path / "nb.ipynb", [old])
    header = "".join(f"\\x{ord(c):02x}" for c in HEADER)  # no header value in the code itself
    server.script(
        Reply(tool_calls=[run_code("import os\nprint(os.environ['OPENAI_API_KEY'])")]),
        Reply(tool_calls=[run_code(f"print(os.environ['OPENAI_API_KEY'][8:])\nprint('{header}')")]),
        Reply(content="Done."),
    )
    out = command(server, "agent", str(path), "Show the key", "--yes", home=tmp_path / "ipy")
    assert out.returncode == 0, out.stderr
    written = path.read_text()
    assert_no_secret(written)
    nb = nbformat.reads(written, as_version=4)
    outputs = [o.text for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs == [f"old {REDACTED}\n", f"{REDACTED}\n", f"{REDACTED}\n{REDACTED}\n"]
    assert nb.cells[1].source == "import os\nprint(os.environ['OPENAI_API_KEY'])"
    assert (
        f"chapyter-ext agent: replaced a configured secret with <redacted> in 3 outputs of "
        f"{path} before writing it"
    ) in out.stdout.splitlines()
    assert_no_secret(out.stdout + out.stderr)
    # The model never saw them either (what it is sent was redacted already).
    assert_no_secret(repr([r.messages for r in server.requests]))


def test_agent_with_nothing_to_replace_says_nothing(server, tmp_path):
    path = python3_notebook(tmp_path / "nb.ipynb", [nbformat.v4.new_code_cell("x = 1")])
    server.script(Reply(tool_calls=[run_code("print(x + 1)")]), Reply(content="2."))
    out = command(server, "agent", str(path), "x + 1?", "--yes", home=tmp_path / "ipy")
    assert out.returncode == 0, out.stderr
    assert "replaced" not in out.stdout
    assert nbformat.read(path, as_version=4).cells[1].outputs[0].text == "2\n"


def test_regenerate_writes_no_key_the_notebook_printed(server, tmp_path):
    """``chapyter-ext regenerate`` runs every cell; what printed the key (from the environment)
    or the header value (from the IPython profile) is written redacted, the rest as it ran."""
    header = "".join(f"\\x{ord(c):02x}" for c in HEADER)
    path = python3_notebook(
        tmp_path / "batch.ipynb",
        [
            nbformat.v4.new_code_cell("import os\nprint(os.environ['OPENAI_API_KEY'])"),
            nbformat.v4.new_code_cell(f"'{header}'"),
            nbformat.v4.new_code_cell("print(6 * 7)"),
        ],
    )
    out = command(server, "regenerate", str(path), home=tmp_path / "ipy")
    assert out.returncode == 0, out.stderr
    written = path.read_text()
    assert_no_secret(written)
    nb = nbformat.reads(written, as_version=4)
    assert nb.cells[0].outputs[0].text == f"{REDACTED}\n"
    assert nb.cells[1].outputs[0].data["text/plain"] == f"'{REDACTED}'"
    assert nb.cells[2].outputs[0].text == "42\n"
    assert out.stdout.splitlines()[-1] == (
        f"chapyter-ext regenerate: replaced a configured secret with <redacted> in 2 outputs "
        f"of {path} before writing it"
    )
