"""``%%ai`` and ``%ai`` in a real kernel, against the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chapyter_ext.contract import PROGRESS_MIME, request_sha256
from chapyter_ext.testing.jupyter_process import free_port
from chapyter_ext.testing.openai_server import Reply

SECRET_KEY = "sk-test-KERNELKEY-0123456789abcdef"
SECRET_VAR = "sk-live-VARIABLE-SECRET-9876543210zyx"
PROGRESS = PROGRESS_MIME


@pytest.fixture(scope="module")
def models() -> tuple[str, ...]:
    return ("fake-model", "other-model")


@pytest.fixture(scope="module")
def kernel_env(server) -> dict[str, str]:
    env = {"OPENAI_BASE_URL": server.base_url, "CHAPYTER_MODEL": "fake-model"}
    return {**env, "OPENAI_API_KEY": SECRET_KEY}


@pytest.fixture(autouse=True)
def fresh(server, kernel):
    server.clear()
    kernel.run("%config Chapyter.timeout = 10.0\n%config Chapyter.max_retries = 2")
    yield


def all_text(request) -> str:
    return "\n".join(str(m.get("content")) for m in request.messages)


def test_generates_code_for_next_cell_with_provenance(server, kernel):
    server.script("Here you go:\n```python\ntotal = 40 + 2\nprint(total)\n```\nEnjoy.")
    run = kernel.run("%%ai\nadd forty and two")
    assert run.status == "ok", run.error
    nxt = run.next_input
    assert nxt["text"] == "total = 40 + 2\nprint(total)"
    assert nxt["replace"] is False
    meta = nxt["chapyter"]["metadata"]
    assert nxt["chapyter"]["run"] is True
    assert meta["prompt_sha256"] == request_sha256("add forty and two")
    assert meta["model"] == "fake-model"
    assert meta["endpoint"] == f"127.0.0.1:{server.port}"
    assert meta["attempts"] == 1
    assert list(meta)[:4] == ["schema", "role", "source", "prompt_sha256"]
    assert SECRET_KEY not in json.dumps(run.reply, default=str)
    # The prompt cell ends with one line saying what happened.
    final = run.displays("text/plain")[-1]
    assert final.startswith("✓ 2 lines from fake-model") and "inserted below and run" in final
    # The code is not run by the kernel itself: the frontend runs the new cell.
    assert kernel.run("print('total' in globals())").stdout.strip() == "False"


def test_streams_progress_while_the_model_writes(server, kernel):
    code = "\n".join(f"v{i} = {i}" for i in range(40))
    server.script(Reply(content=f"```python\n{code}\n```", chunk_size=20, chunk_delay=0.02))
    run = kernel.run("%%ai\nmake forty variables")
    assert run.status == "ok"
    states = [d["state"] for d in run.displays(PROGRESS)]
    assert states[0] == "waiting"
    assert "streaming" in states
    assert states[-1] == "done"
    streamed = [d["text"] for d in run.displays(PROGRESS) if d["state"] == "streaming"]
    assert any(0 < len(t) < len(code) for t in streamed), "no partial answer was shown"


def test_context_carries_variables_and_no_secrets(server, kernel):
    kernel.run(
        "import pandas as pd\n"
        "sales = pd.DataFrame({'region': ['north', 'south'], 'revenue_eur': [1.5, 2.5]})\n"
        f"api_key = '{SECRET_VAR}'\n"
        f"note = 'my token is {SECRET_VAR}'\n"
    )
    server.script("```python\nprint(sales.revenue_eur.sum())\n```")
    assert kernel.run("%%ai\nsum the revenue").status == "ok"
    (request,) = server.requests
    text = all_text(request)
    assert "sum the revenue" in text
    assert "sales" in text and "revenue_eur" in text and "region" in text
    assert SECRET_VAR not in json.dumps(request.body)
    assert SECRET_KEY not in json.dumps(request.body)
    assert request.headers["authorization"] == f"Bearer {SECRET_KEY}"


def test_no_context_sends_only_the_request(server, kernel):
    kernel.run("only_in_kernel_zz = 123")
    server.script("```python\nprint(1)\n```")
    assert kernel.run("%%ai --no-context\nprint one").status == "ok"
    text = all_text(server.requests[0])
    assert "print one" in text
    assert "only_in_kernel_zz" not in text


def test_model_option_and_no_run(server, kernel):
    server.script("```python\nprint(2)\n```")
    run = kernel.run("%%ai --model other-model --no-run\nprint two")
    assert run.status == "ok"
    assert server.requests[0].model == "other-model"
    assert run.next_input["chapyter"]["run"] is False
    assert run.next_input["chapyter"]["metadata"]["model"] == "other-model"
    assert "inserted below." in run.displays("text/plain")[-1]


def test_config_magic_changes_the_model(server, kernel):
    server.script("```python\nprint(3)\n```")
    kernel.run("%config Chapyter.model = 'other-model'")
    try:
        assert kernel.run("%%ai\nprint three").status == "ok"
        assert server.requests[0].model == "other-model"
    finally:
        kernel.run("%config Chapyter.model = 'fake-model'")


def assert_clean_failure(kernel, run, *phrases):
    """One clear line, no payload, no traceback noise, and the kernel still works."""
    assert run.status == "error"
    assert run.next_input is None
    err = run.error
    assert err["ename"] == "ChapyterError"
    assert len(err["traceback"]) == 1, err["traceback"]
    line = err["traceback"][0]
    assert "\n" not in line.strip()
    assert "Traceback" not in line and "httpx" not in line and "openai." not in line
    assert SECRET_KEY not in line
    for phrase in phrases:
        assert phrase.lower() in line.lower(), line
    assert kernel.run("print(6 * 7)").stdout.strip() == "42"


@pytest.mark.parametrize(
    ("reply", "phrases"),
    [
        (Reply(status=401, error="Incorrect API key provided: sk-te***"), ["401"]),
        (Reply(status=404, error="model not found"), ["404"]),
        (Reply(content="", chunk_size=1), ["empty"]),
        (Reply(content="I'm sorry, I cannot help with that request."), ["without any code"]),
        (Reply(content="```python\n%ai status\n```"), ["calls %ai itself"]),
        (Reply(raw_body="{not json at all"), []),
        (Reply(content="```python\n" + "x = 1\n" * 200 + "```", cut_after=3), []),
    ],
    ids=["401", "404", "empty", "no-code", "self-call", "invalid-json", "stream-cut"],
)
def test_failures_are_one_clear_line(server, kernel, reply, phrases):
    server.script(reply)
    run = kernel.run("%%ai\ndo something")
    assert_clean_failure(kernel, run, *phrases)


def test_syntax_error_answer_is_delivered_unrun(server, kernel):
    # The answer stays visible below, never run, and says why.
    server.script("```python\nbroken_flag = True\ndef broken(:\n```")
    run = kernel.run("%%ai\ndo something")
    assert run.status == "error"
    err = run.error
    assert err["ename"] == "ChapyterError" and len(err["traceback"]) == 1
    line = err["traceback"][0]
    assert "syntax error on line 2" in line and "without running it" in line
    nxt = run.next_input
    assert nxt["text"] == "broken_flag = True\ndef broken(:"
    assert nxt["chapyter"]["run"] is False
    meta = nxt["chapyter"]["metadata"]
    assert meta["check"] == "syntax-error"
    assert meta["check_error"].startswith("The generated code has a syntax error on line 2")
    assert "\n" not in meta["check_error"]
    assert kernel.run("print('broken_flag' in globals())").stdout.strip() == "False"


@pytest.mark.parametrize(
    ("line", "phrase"),
    [
        ("--regen", "unknown option '--regen'"),
        ('-m "other-model', "unbalanced quote"),
        ("--model", "'--model' needs a model name"),
        ("--no-run plot", "unexpected word 'plot'"),
        ("--run --no-run", "contradict"),
    ],
)
def test_bad_magic_line_is_one_line_and_asks_nothing(server, kernel, line, phrase):
    run = kernel.run(f"%%ai {line}\nprint two")
    assert_clean_failure(kernel, run, phrase)
    assert server.requests == []


@pytest.mark.parametrize("line", ["-mother-model", "--model=other-model", "-m 'other-model'"])
def test_model_spellings(server, kernel, line):
    server.script("```python\nprint(2)\n```")
    run = kernel.run(f"%%ai {line} --no-run\nprint two")
    assert run.status == "ok", run.error
    assert server.requests[0].model == "other-model"


def test_server_errors_are_retried_then_reported(server, kernel):
    server.script(Reply(status=500, error="boom"), Reply(status=500, error="boom"))
    server.script("```python\nprint('recovered')\n```")
    run = kernel.run("%%ai\nrecover")
    assert run.status == "ok"
    assert run.next_input["chapyter"]["metadata"]["attempts"] == 3
    server.clear()
    kernel.run("%config Chapyter.max_retries = 1")
    server.script(Reply(status=500, error="boom"), Reply(status=500, error="boom"))
    assert_clean_failure(kernel, kernel.run("%%ai\nrecover"), "500")


def test_rate_limit_honours_retry_after(server, kernel):
    server.script(Reply(status=429, error="slow down", headers={"Retry-After": "0"}))
    server.script("```python\nprint('ok')\n```")
    run = kernel.run("%%ai\nrate limited")
    assert run.status == "ok"
    assert len(server.requests) == 2
    kernel.run("%config Chapyter.max_retries = 0")
    server.script(Reply(status=429, error="slow down", headers={"Retry-After": "0"}))
    assert_clean_failure(kernel, kernel.run("%%ai\nrate limited"), "429")


def test_connection_refused_and_timeout(server, kernel):
    closed_port = free_port()
    kernel.run(
        f"%config Chapyter.base_url = 'http://127.0.0.1:{closed_port}/v1'\n"
        "%config Chapyter.max_retries = 0"
    )
    try:
        assert_clean_failure(kernel, kernel.run("%%ai\nanything"), f"127.0.0.1:{closed_port}")
    finally:
        kernel.run(f"%config Chapyter.base_url = '{server.base_url}'")
    kernel.run("%config Chapyter.timeout = 0.5\n%config Chapyter.max_retries = 0")
    server.script(Reply(content="```python\nprint(1)\n```", delay=2.0))
    assert_clean_failure(kernel, kernel.run("%%ai\nslow"), "time")


def test_empty_request_is_refused_without_a_call(server, kernel):
    run = kernel.run("%%ai\n   \n")
    assert_clean_failure(kernel, run, "empty")
    assert server.requests == []


def test_status_never_shows_the_key(server, kernel):
    out = kernel.run("%ai status").stdout
    assert f"127.0.0.1:{server.port}" in out
    assert "fake-model" in out
    assert "api key:  set" in out
    assert SECRET_KEY not in out


def test_models_lists_the_endpoint_models(server, kernel):
    out = kernel.run("%ai models").stdout
    assert "* fake-model" in out and "other-model" in out
    assert server.requests[0].path.endswith("/models")


def test_help_is_the_docstring(kernel):
    run = kernel.run("%%ai?")
    pages = [p for p in run.payload if p.get("source") == "page"]
    text = pages[0]["data"]["text/plain"] if pages else run.stdout
    assert "--no-run" in text and "--model" in text and "--no-context" in text


def test_loading_does_not_import_openai():
    # With the warm-up off: otherwise its thread imports them, right after (tests/test_warmup.py).
    code = (
        "import sys\n"
        "from traitlets.config import Config\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "config = Config()\n"
        "config.Chapyter.warm_up = False\n"
        "shell = InteractiveShell.instance(config=config)\n"
        "shell.run_line_magic('load_ext', 'chapyter_ext')\n"
        "assert 'ai' in shell.magics_manager.magics['cell']\n"
        "heavy = [m for m in ('openai', 'httpx', 'httpx2', 'pandas', 'numpy', 'tornado')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# ---------------------------------------------------------------------------------------------
# Secrets never shown

HEADER_VALUE = "hdr-KERNEL-HEADER-7654321"


def key_parts(secret: str, n: int = 8) -> list[str]:
    """Runs of ``n`` characters of ``secret`` past its "sk-test-"-like prefix holding a digit."""
    core = secret.split("-", 2)[-1] if secret.startswith("sk-") else secret.split("-", 1)[1]
    runs = [core[i : i + n] for i in range(len(core) - n + 1)]
    return [run for run in runs if any(c.isdigit() for c in run)]


def shown(run) -> str:
    """Everything a run put in the notebook or the reply: outputs, displays, payload, errors
    (not the echo of the code typed)."""
    outputs = [o["content"] for o in run.outputs if o["msg_type"] != "execute_input"]
    return json.dumps([*outputs, run.reply["content"]])


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text
        assert not [part for part in key_parts(secret) if part in text], text


@pytest.fixture
def header(kernel):
    kernel.run(f"%config Chapyter.extra_headers = {{'X-Test': '{HEADER_VALUE}'}}")
    yield HEADER_VALUE
    kernel.run("%config Chapyter.extra_headers = {}")


def test_no_listing_shows_a_secret(server, kernel, header):
    listing = kernel.run("%config Chapyter")
    assert "Chapyter.api_key" in listing.stdout and "Current: <redacted>" in listing.stdout
    assert "Current: {'X-Test': <redacted>}" in listing.stdout
    value = kernel.run("%config Chapyter.api_key")
    assert '"text/plain": "<redacted>"' in shown(value)
    runs = [
        listing,
        value,
        kernel.run("%config Chapyter.extra_headers"),
        kernel.run("print(get_ipython()._chapyter_magics.settings)"),
        kernel.run("get_ipython()._chapyter_magics.settings"),
        kernel.run(
            "from chapyter_ext.config import Chapyter\n"
            "print(Chapyter.class_get_help(get_ipython()._chapyter_magics.settings))"
        ),
        kernel.run("%ai status"),
    ]
    for run in runs:
        assert run.status == "ok", run.error
        assert_no_secret(shown(run), SECRET_KEY, header)


def test_a_key_set_with_config_is_used_checked_and_never_shown(server, kernel, header):
    other = "sk-test-CONFIGURED-5551234567abcd"
    try:
        assert kernel.run(f"%config Chapyter.api_key = '{other}'").status == "ok"
        server.script("```python\nprint(1)\n```")
        run = kernel.run("%%ai\nprint one")
        assert run.status == "ok", run.error
        sent = server.requests[-1]
        assert sent.headers["authorization"] == f"Bearer {other}"
        assert sent.headers["x-test"] == header
        assert_no_secret(shown(run) + shown(kernel.run("%config Chapyter")), other, header)
        # Checked: refused (IPython logs why), the key in use stays.
        refused = kernel.run(f"%config Chapyter.api_key = '{other} with spaces'")
        assert_no_secret(shown(refused), other)
        check = f"print(get_ipython()._chapyter_magics.settings.api_key == '{other}')"
        assert kernel.run(check).stdout.strip() == "True"
    finally:
        kernel.run(f"%config Chapyter.api_key = '{SECRET_KEY}'")


def test_parts_of_the_key_never_reach_the_notebook(server, kernel, header):
    # The model echoes the key without its prefix in its code and the ends of the key and of
    # the header in its prose, streamed in 3-character pieces: neither the live display, nor
    # the cell inserted below, nor its provenance, nor the last line may show them.
    server.script(
        Reply(
            content=f"Your key ends in {SECRET_KEY[-10:]}, the header in {header[-9:]}.\n"
            f"```python\nclient = make_client('{SECRET_KEY[8:]}')\n```",
            chunk_size=3,
            chunk_delay=0.005,
        )
    )
    run = kernel.run("%%ai\nmake a client")
    assert run.status == "ok", run.error
    assert any(d["state"] == "streaming" for d in run.displays(PROGRESS))
    assert run.next_input["text"] == "client = make_client('<redacted>')"
    assert_no_secret(shown(run), SECRET_KEY, header)
    sent = json.dumps(server.requests[-1].body)
    assert SECRET_KEY not in sent and header not in sent


@pytest.mark.parametrize(
    "answer",
    [
        "I will not print the key ending …{tail}, sorry.",  # no code: the error line quotes it
        "```python\nkey = {tail} +\n```",  # a syntax error: the line is quoted twice
    ],
    ids=["no-code", "syntax-error"],
)
def test_parts_of_the_key_never_reach_an_error_line(server, kernel, answer):
    server.script(answer.format(tail=SECRET_KEY[-12:]))
    run = kernel.run("%%ai\ndo something")
    assert run.status == "error"
    assert run.error["ename"] == "ChapyterError"
    assert "<redacted>" in run.error["traceback"][0]
    assert_no_secret(shown(run), SECRET_KEY)
