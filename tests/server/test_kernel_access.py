"""The key stays on the server: a kernel the Jupyter server starts gets no key in its
environment but a credential for the server's model route, and ``%%ai`` reaches the model
through that route with the server's key and headers, under the server's ``base_url``
(pytest-jupyter serves at ``/a%40b/``). The credential dies with its kernel; a model the
administrator did not allow is refused at the route; ``Chapyter.kernel_keys`` gives kernels the
key back; what a kernel asks of a model counts in its notebook's usage."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from jupyter_client import BlockingKernelClient

from chapyter_ext.server.kernel_access import ENV_TOKEN, ROUTE
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import Execution, execute_request

from .conftest import API_KEY, HEADER_SECRET
from .kernel_browser import KernelThread

NOTEBOOK = "work/keys.ipynb"
#: The same key under a name of the user's own: left out too (its value is a server secret).
OTHER_NAME = "MY_PROJECT_LLM_KEY"
#: The administrator's file sets the model and locks it (a lock holds the value its file gives).
LOCKS = {"Chapyter": {"model": "fake-model", "locked": ["model"]}}


@pytest.fixture
def jp_server_config(jp_server_config, jp_system_config_path, request):
    """``@pytest.mark.admin_locks``: the administrator locks the model (system-wide config)."""
    if request.node.get_closest_marker("admin_locks") is not None:
        (jp_system_config_path / "jupyter_server_config.json").write_text(json.dumps(LOCKS))
    return jp_server_config


@pytest.fixture
def server_env(monkeypatch):
    """The server's own environment holds the key, as it does when an admin exports it."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv(OTHER_NAME, API_KEY)
    monkeypatch.setenv("X_HEADER_COPY", f"prefix-{HEADER_SECRET}")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("CHAPYTER_MODEL", raising=False)


class ServerKernel:
    """A kernel started by the server for a notebook (``POST api/sessions``), reached over its
    connection file from a thread of its own."""

    def __init__(self, serverapp: Any, kernel_id: str, thread: KernelThread) -> None:
        self.kernel_id = kernel_id
        self.thread = thread
        info = serverapp.kernel_manager.get_kernel(kernel_id).get_connection_info()
        self.kc = BlockingKernelClient()
        self.kc.load_connection_info(info)

    async def start(self) -> None:
        await self.thread.call(self.kc.start_channels)
        await self.thread.call(self.kc.wait_for_ready, 60)

    async def run(self, code: str, *, cell: str | None = None) -> Execution:
        """``code`` as JupyterLab sends it (a cell id, so ``%%ai`` generates)."""
        metadata = {"cellId": cell} if cell else {}
        return await self.thread.call(
            lambda: execute_request(self.kc, code, allow_stdin=False, metadata=metadata)
        )

    def stop(self) -> None:
        self.kc.stop_channels()


async def open_kernel(jp_fetch: Any, serverapp: Any, thread: KernelThread) -> ServerKernel:
    body = {"path": NOTEBOOK, "type": "notebook", "name": "", "kernel": {"name": "python3"}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    kernel = ServerKernel(serverapp, json.loads(response.body)["kernel"]["id"], thread)
    await kernel.start()
    loaded = await kernel.run("%load_ext chapyter_ext")
    assert loaded.status == "ok", loaded.errors
    return kernel


@pytest.fixture
def thread():
    pool = KernelThread()
    yield pool
    pool.close()


ENVIRONMENT_CHECK = f"""
import os
secrets = {[API_KEY, HEADER_SECRET]!r}
with open("/proc/self/environ", "rb") as f:
    raw = f.read().decode("utf-8", "replace")
print("key-in-environ", "OPENAI_API_KEY" in os.environ)
print("secret-in-environ", any(s in v for s in secrets for v in os.environ.values()))
print("secret-in-proc", any(s in raw for s in secrets))
print("other-name", {OTHER_NAME!r} in os.environ, "harmless", os.environ.get("HARMLESS_SETTING"))
"""


@pytest.mark.usefixtures("server_env")
async def test_a_kernel_holds_no_key_and_ai_reaches_the_model_through_the_server(
    jp_fetch, jp_serverapp, jp_base_url, ext_app, fake, get_json, thread
):
    kernel = await open_kernel(jp_fetch, jp_serverapp, thread)
    try:
        env = await kernel.run(ENVIRONMENT_CHECK)
        assert env.status == "ok", env.errors
        assert env.stdout.split("\n")[:4] == [
            "key-in-environ False",
            "secret-in-environ False",
            "secret-in-proc False",
            "other-name False harmless kept",
        ]

        fake.script(
            Reply("```python\nanswer = 6 * 7\nprint(answer)\n```",
                  usage={"prompt_tokens": 120, "completion_tokens": 9})
        )  # fmt: skip
        generated = await kernel.run("%%ai\nmultiply six by seven", cell="prompt-cell")
        assert generated.status == "ok", generated.errors
        # The request reached the model with the server's key and headers, through the route
        # under the server's base_url (the kernel asked its own server, not the endpoint).
        chat = [r for r in fake.requests if r.path.endswith("/chat/completions")][-1]
        assert chat.headers["authorization"] == f"Bearer {API_KEY}"
        assert chat.headers["x-test-secret"] == HEADER_SECRET
        assert chat.model == "fake-model"
        # The generated cell comes back as usual (it runs as the next cell).
        assert "answer = 6 * 7" in json.dumps(generated.payload)

        status = await kernel.run("%ai status")
        assert "through the Jupyter server that started this kernel" in status.stdout
        assert f"{jp_base_url}{ROUTE}".replace("%40", "@") not in status.stdout  # host only
        assert "none in this kernel" in status.stdout and API_KEY not in status.stdout
        models = await kernel.run("%ai models")
        assert models.status == "ok" and "fake-model" in models.stdout, models.stdout

        # What the kernel asked counts in the notebook's usage (the chat shows it).
        code, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
        assert code == 200 and view["usage"]["total_tokens"] == 129, view.get("usage")

        # An endpoint's error names that endpoint (not the kernel's server), in one line and
        # without the key it may echo.
        fake.route("this will fail", Reply(status=500, error=f"upstream broke, key: {API_KEY}"))
        failed = await kernel.run("%%ai\nthis will fail", cell="failing-cell")
        shown = failed.stdout + json.dumps(failed.outputs, default=str)
        assert f"The endpoint 127.0.0.1:{fake.port} failed with HTTP 500" in shown, shown
        assert API_KEY not in shown and "Traceback" not in shown

        token_run = await kernel.run(f"import os; print(os.environ[{ENV_TOKEN!r}])")
        token = token_run.stdout.strip()
        assert token.startswith("chapyter-kernel-")
    finally:
        kernel.stop()

    # The credential works while the kernel runs, and not after it was shut down.
    assert (await route(jp_fetch, token, "models"))[0] == 200
    await jp_fetch("api", "kernels", kernel.kernel_id, method="DELETE")
    status, body = await route(jp_fetch, token, "models")
    assert status == 403 and "not valid" in body["error"]["message"]
    status, body = await route(jp_fetch, "chapyter-kernel-made-up", "chat/completions", {})
    assert status == 403 and "\n" not in body["error"]["message"]


async def route(
    jp_fetch: Any, token: str, path: str, body: dict[str, Any] | None = None
) -> tuple[int, Any]:
    """The model route as a kernel calls it: its credential, no Jupyter token."""
    kwargs: dict[str, Any] = {"method": "GET"}
    if body is not None:
        kwargs = {"method": "POST", "body": json.dumps(body)}
    response = await jp_fetch(
        *ROUTE.split("/"),
        *path.split("/"),
        headers={"Authorization": f"Bearer {token}"},
        raise_error=False,
        **kwargs,
    )
    return response.code, json.loads(response.body or b"null")


@pytest.mark.admin_locks
async def test_a_model_the_administrator_did_not_allow_is_refused_at_the_route(
    jp_fetch, get_json, fake
):
    asked = {"model": "gpt-5-expensive", "messages": [{"role": "user", "content": "hi"}]}
    code, body = await get_json(*ROUTE.split("/"), "chat", "completions", method="POST",
                                body=asked)  # fmt: skip
    assert code == 403
    message = body["error"]["message"]
    assert "gpt-5-expensive" in message and "administrator" in message and "\n" not in message
    assert not [r for r in fake.requests if r.path.endswith("/chat/completions")]
    # The allowed model goes through; the model list offers only what is allowed.
    fake.script("fine")
    code, body = await get_json(*ROUTE.split("/"), "chat", "completions", method="POST",
                                body={**asked, "model": "fake-model"})  # fmt: skip
    assert code == 200 and body["choices"][0]["message"]["content"] == "fine"
    code, body = await get_json(*ROUTE.split("/"), "models")
    assert code == 200 and [m["id"] for m in body["data"]] == ["fake-model"]


async def test_a_kernel_credential_is_only_good_for_the_model_route(
    jp_fetch, jp_serverapp, ext_app
):
    """A kernel's credential is no Jupyter token: the rest of the server refuses it."""
    kernel_id = await jp_serverapp.kernel_manager.start_kernel()
    try:
        token = ext_app.kernel_access.issue(kernel_id)
        assert (await route(jp_fetch, token, "models"))[0] == 200
        status, body = await route(jp_fetch, token, "files", {})
        assert status == 404 and body["error"]["message"].startswith("No such route")
        big = {"model": "fake-model", "messages": [{"role": "user", "content": "x" * 5_000_000}]}
        status, body = await route(jp_fetch, token, "chat/completions", big)
        assert status == 413 and "larger than" in body["error"]["message"]
        response = await jp_fetch(
            "api", "contents", headers={"Authorization": f"Bearer {token}"}, raise_error=False
        )
        assert response.code == 403
        response = await jp_fetch("chapyter-ext", "config",
                                  headers={"Authorization": f"token {token}"},
                                  raise_error=False)  # fmt: skip
        assert response.code == 403
    finally:
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)


@pytest.mark.usefixtures("server_env")
@pytest.mark.chapyter_config({"Chapyter": {"kernel_keys": True}})
async def test_kernel_keys_gives_kernels_the_key_back_and_status_says_so(
    jp_fetch, jp_serverapp, fake, thread
):
    kernel = await open_kernel(jp_fetch, jp_serverapp, thread)
    try:
        env = await kernel.run(ENVIRONMENT_CHECK)
        assert env.stdout.split("\n")[0] == "key-in-environ True"
        # The kernel calls the endpoint itself, with the key it holds.
        await kernel.run(f"%config Chapyter.base_url = {fake.base_url!r}")
        fake.script("```python\nprint(1)\n```")
        generated = await kernel.run("%%ai\nprint one", cell="prompt-cell")
        assert generated.status == "ok", generated.errors
        chat = [r for r in fake.requests if r.path.endswith("/chat/completions")][-1]
        assert chat.headers["authorization"] == f"Bearer {API_KEY}"
        status = await kernel.run("%ai status")
        assert "set: this kernel holds the key" in status.stdout
        assert "path:     direct" in status.stdout and API_KEY not in status.stdout
    finally:
        kernel.stop()
        await jp_fetch("api", "kernels", kernel.kernel_id, method="DELETE")


def test_the_kernel_environment_is_a_pure_function_of_the_server_environment():
    """Unit: what a kernel's environment keeps, drops and gains."""
    from chapyter_ext.server.kernel_access import KernelAccess

    class Manager:
        def list_kernel_ids(self):
            return ["k1"]

    access = KernelAccess(
        Manager(), ["sk-abc", ""], server_url=lambda: "http://127.0.0.1:8888/base/",
        keep_keys=False, model="m", local=True,
    )  # fmt: skip
    env = access.environment(
        {"OPENAI_API_KEY": "sk-abc", "ALIAS": "x sk-abc y", "PATH": "/bin", "HOME": "/root"},
        "k1",
    )
    assert env["PATH"] == "/bin" and "OPENAI_API_KEY" not in env and "ALIAS" not in env
    assert env["CHAPYTER_SERVER_URL"] == "http://127.0.0.1:8888/base/chapyter-ext/v1"
    assert env["CHAPYTER_SERVER_MODEL"] == "m" and env["CHAPYTER_SERVER_LOCAL"] == "1"
    assert access.kernel_for(env[ENV_TOKEN]) == "k1"
    assert access.kernel_for("chapyter-kernel-other") is None
    # A Unix-socket server (no URL a kernel could call) leaves the environment as it is.
    access.server_url = lambda: None
    assert access.environment({"OPENAI_API_KEY": "sk-abc"}, "k2") == {"OPENAI_API_KEY": "sk-abc"}
    assert os.environ.get(ENV_TOKEN) is None  # nothing leaked into the test's own environment


def test_a_kernels_redactor_hides_its_credential_but_not_the_servers_model(monkeypatch):
    """The kernel's environment as the server gives it: the credential is a secret to the
    kernel's redactor (never in an output, a prompt or a notebook), the model's name is not
    (it is in every generated cell's provenance)."""
    from chapyter_ext.redact import Redactor

    token = "chapyter-kernel-" + "Ab3" * 14
    monkeypatch.setenv("CHAPYTER_KERNEL_TOKEN", token)
    monkeypatch.setenv("CHAPYTER_SERVER_MODEL", "SmolLM2-135M-Instruct")
    monkeypatch.setenv("CHAPYTER_MODEL", "qwen2.5-coder-7b-instruct")
    shown = Redactor()(f"{token} SmolLM2-135M-Instruct qwen2.5-coder-7b-instruct")
    assert shown == "<redacted> SmolLM2-135M-Instruct qwen2.5-coder-7b-instruct"
