"""``%%ai`` self-correction in a real kernel, against the loopback OpenAI-compatible server.

The JupyterLab executor asks for a correction by running the prompt cell again with
``RETRY_MARKER`` metadata; terminal IPython and ``--run`` elsewhere retry in the kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from chapyter_ext.contract import FRONTEND_MARKER, RETRY_MARKER, code_sha256
from tests.kernel_harness import Kernel, execute_request

BAD = "```python\nprint(undefined_name_zz + 1)\n```"
GOOD = "```python\nundefined_name_zz = 41\nprint('fixed', undefined_name_zz + 1)\n```"
FRONTEND = {"cellId": "c1", FRONTEND_MARKER: {"version": 1}}
ERROR = {
    "ename": "NameError",
    "evalue": "name 'undefined_name_zz' is not defined",
    "traceback": [
        "\x1b[31m---------------------------------------------------------------\x1b[39m",
        "\x1b[31mNameError\x1b[39m                 Traceback (most recent call last)",
        "Cell \x1b[32mIn[3]\x1b[39m\x1b[32m, line 1\x1b[39m\n----> 1 print(undefined_name_zz + 1)",
        "\x1b[31mNameError\x1b[39m: name 'undefined_name_zz' is not defined",
    ],
}


@pytest.fixture(autouse=True)
def fresh(server, kernel):
    server.clear()
    kernel.run("%config Chapyter.fix_retries = 1\n%config Chapyter.timeout = 10.0")
    kernel.run("globals().pop('undefined_name_zz', None)")
    yield


def execute(kernel: Kernel, code: str, *, allow_stdin: bool = True, metadata=None):
    """An execute_request with request metadata; returns (reply content, stdout, errors)."""
    run = execute_request(kernel.kc, code, allow_stdin=allow_stdin, metadata=metadata)
    shown = run.stdout + "".join(f"\n{p}" for p in run.displays("text/plain"))
    return run.reply["content"], shown, run.errors


def generation(reply: dict) -> dict:
    (item,) = [p for p in reply.get("payload", []) if p.get("source") == "set_next_input"]
    return item


def test_first_answer_offers_the_retries_to_our_frontend(server, kernel):
    server.script(BAD)
    reply, _, _ = execute(kernel, "%%ai\nprint the answer plus one", metadata=FRONTEND)
    assert reply["status"] == "ok"
    entry = generation(reply)["chapyter"]
    assert entry["run"] is True and entry["retries_left"] == 1
    assert len(server.requests) == 1


def test_retry_request_carries_the_code_and_the_error(server, kernel):
    server.script(GOOD)
    metadata = {**FRONTEND, RETRY_MARKER: {"attempt": 1, "code": BAD[10:-4], "error": ERROR}}
    reply, out, _ = execute(kernel, "%%ai\nprint the answer plus one", metadata=metadata)
    assert reply["status"] == "ok"
    (request,) = server.requests
    messages = request.messages
    assert messages[-2]["role"] == "assistant" and "print(undefined_name_zz + 1)" in str(
        messages[-2]["content"]
    )
    last = str(messages[-1]["content"])
    assert "NameError: name 'undefined_name_zz' is not defined" in last
    assert "----> 1 print(undefined_name_zz + 1)" in last, "the user's frame is sent"
    assert "\x1b[" not in last and "print the answer plus one" in str(messages[-3]["content"])
    item = generation(reply)
    assert "undefined_name_zz = 41" in item["text"]
    entry = item["chapyter"]
    assert "retries_left" not in entry, "the cap is reached: no more retries"
    meta = entry["metadata"]
    (change,) = meta["changes"]
    assert change["kind"] == "retry" and change["model"] == "fake-model"
    assert change["previous_code_sha256"] == code_sha256(BAD[10:-4])
    assert meta["code_sha256"] == code_sha256(item["text"])
    assert "retry 1 of 1" in out


def test_retry_beyond_the_cap_asks_nothing(server, kernel):
    metadata = {**FRONTEND, RETRY_MARKER: {"attempt": 2, "code": "x", "error": ERROR}}
    reply, _, _ = execute(kernel, "%%ai\nprint the answer plus one", metadata=metadata)
    assert reply["status"] == "error" and "No retry left" in reply["evalue"]
    assert server.requests == []


def test_fix_retries_zero_offers_no_retry(server, kernel):
    execute(kernel, "%config Chapyter.fix_retries = 0")
    server.script(BAD)
    reply, _, _ = execute(kernel, "%%ai\nprint the answer plus one", metadata=FRONTEND)
    assert "retries_left" not in generation(reply)["chapyter"]
    metadata = {**FRONTEND, RETRY_MARKER: {"attempt": 1, "code": "x", "error": ERROR}}
    reply, _, _ = execute(kernel, "%%ai\nprint the answer plus one", metadata=metadata)
    assert reply["status"] == "error" and len(server.requests) == 1


@pytest.mark.parametrize("value", [-1, 6])
def test_fix_retries_is_validated(value):
    from traitlets import TraitError

    from chapyter_ext.config import Chapyter

    settings = Chapyter()
    assert settings.fix_retries == 1
    with pytest.raises(TraitError, match=r"Chapyter\.fix_retries must be a whole number"):
        settings.fix_retries = value
    settings.fix_retries = 0
    assert settings.fix_retries == 0


def test_batch_run_never_retries(server, kernel):
    execute(kernel, '%config Chapyter.batch_mode = "regenerate"', allow_stdin=False)
    try:
        server.script(BAD)
        reply, _, _ = execute(kernel, "%%ai --run\nprint the answer plus one", allow_stdin=False)
    finally:
        execute(kernel, '%config Chapyter.batch_mode = "replay"', allow_stdin=False)
    assert reply["status"] == "ok"
    assert "retries_left" not in generation(reply)["chapyter"]
    assert len(server.requests) == 1


def test_run_option_without_our_frontend_retries_in_the_kernel(server, kernel):
    server.script(BAD, GOOD)
    reply, out, errors = execute(
        kernel, "%%ai --run\nprint the answer plus one", metadata={"cellId": "c1"}
    )
    assert len(server.requests) == 2, "1 + fix_retries requests"
    assert "NameError" in str(server.requests[1].messages[-1]["content"])
    assert [e["ename"] for e in errors] == ["NameError"]
    assert "fixed 42" in out and "✓ fixed after 1 retry" in out
    # The cell inserted below gets the corrected code.
    item = generation(reply)
    assert "undefined_name_zz = 41" in item["text"]
    assert item["chapyter"]["metadata"]["changes"][0]["kind"] == "retry"


def test_run_option_at_the_cap_keeps_the_last_error(server, kernel):
    server.script(BAD, BAD, GOOD)
    _, out, errors = execute(
        kernel, "%%ai --run\nprint the answer plus one", metadata={"cellId": "c1"}
    )
    assert len(server.requests) == 2, "bounded: 1 + fix_retries"
    assert [e["ename"] for e in errors] == ["NameError", "NameError"]
    assert "still failing after 1 retry" in out


def test_terminal_run_option_retries(server, tmp_path):
    server.script(BAD, GOOD)
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "chapyter_ext")
        shell.run_cell("%%ai --run\\nprint the answer plus one", store_history=True)
        print("NEXT:", repr(getattr(shell, "rl_next_input", None)))
        """
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))},
        "IPYTHONDIR": str(tmp_path),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test-RETRYKEY-0123456789",
        "CHAPYTER_MODEL": "fake-model",
    }
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert len(server.requests) == 2
    assert "NameError" in out.stdout + out.stderr
    assert "fixed 42" in out.stdout and "✓ fixed after 1 retry" in out.stdout
    assert "NEXT: None" in out.stdout


@pytest.mark.parametrize(
    ("retry", "expected"),
    [
        ({"attempt": 1, "code": "x", "error": ERROR}, 1),
        ({"attempt": 0, "code": "x", "error": ERROR}, None),
        ({"attempt": True, "code": "x", "error": ERROR}, None),
        ({"attempt": 1, "code": 3, "error": ERROR}, None),
        ({"attempt": 1, "code": "x"}, None),
        ("retry", None),
    ],
)
def test_identify_caller_reads_the_retry_request(retry, expected):
    from types import SimpleNamespace

    from chapyter_ext.magic.replay import identify_caller

    request = {"content": {}, "metadata": {**FRONTEND, RETRY_MARKER: retry}}
    shell = SimpleNamespace(kernel=SimpleNamespace(get_parent=lambda channel=None: request))
    caller = identify_caller(shell)
    assert caller.frontend_runs_code
    assert (caller.retry.attempt if caller.retry else None) == expected
    if caller.retry:
        assert caller.retry.error["ename"] == "NameError" and caller.retry.code == "x"
    # Without our frontend's marker a retry request is not ours: ignored.
    request["metadata"] = {"cellId": "c1", RETRY_MARKER: retry}
    assert identify_caller(shell).retry is None
