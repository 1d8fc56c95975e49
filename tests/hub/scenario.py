"""What every user does through the hub, and what must hold, for both deployments (kernels
local to each server, kernels on a Kernel Gateway)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx

from chapyter_ext.testing.openai_server import FakeOpenAIServer, RecordedRequest, Reply

from .client import Kernel, User, output_text
from .deploy_doc import snippet
from .harness import USERS, Hub

BUDGET_USER = "carol"


def keys_for(run: str) -> dict[str, str]:
    """Each user's gateway key (distinct per run, so no log can hold an old one)."""
    return {name: f"sk-{run}-{name}-{'0123456789abcdef' * 2}" for name in USERS}


def asked_with(fake: FakeOpenAIServer, words: str) -> list[RecordedRequest]:
    """The model requests whose last user message holds ``words``."""
    found = []
    for request in fake.requests:
        users = [m for m in request.messages if m.get("role") == "user"]
        if users and words in str(users[-1].get("content")):
            found.append(request)
    assert found, f"no model request with {words!r}"
    return found


def check_key_and_model(requests: list[RecordedRequest], key: str, model: str) -> None:
    for request in requests:
        assert request.headers["authorization"] == f"Bearer {key}"
        assert request.body["model"] == model


def log_in_everyone(hub: Hub, users: dict[str, User]) -> dict[str, User]:
    """Each user logs in with the form (which starts their server), opens JupyterLab."""
    users.update({name: User(hub, name) for name in USERS})
    for user in users.values():
        user.log_in()
    for name in USERS:  # the hub starts them side by side
        hub.start(name)
    for name, user in users.items():
        hub.wait_ready(name)
        user.token = hub.token(name)
        page = user.browser.get(f"/user/{name}/lab")
        assert page.status_code == 200 and str(page.url).endswith(f"/user/{name}/lab")
        # JupyterLab's page config lists the prebuilt extension: no per-user step.
        assert '"name": "chapyter-ext"' in page.text or '"chapyter-ext"' in page.text
    return users


#: A user who owns a server config of their own (``~/.jupyter``) that tries to replace what the
#: page's admin-server locks: their own models and default, completion back on.
OWN_CONFIG_USER = "bob"
OWN_CONFIG = {
    "ChapyterExtApp": {"models": {"mine": {"model": "my-model"}}, "default_model": "mine"},
    "Chapyter": {"inline_completion": True, "agent_max_steps": 50},
}


def write_own_config(homes: Path) -> None:
    """The user's own ``~/.jupyter/jupyter_server_config.json``, before their server starts."""
    folder = homes / OWN_CONFIG_USER / ".jupyter"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jupyter_server_config.json").write_text(json.dumps(OWN_CONFIG))


def check_admin_settings(user: User, *, own_config: bool = False) -> None:
    """The administrator's server config (the page's admin-server) reached this user, and
    holds against their own config (``own_config``): each setting it overrode one line."""
    config = user.get("chapyter-ext/config").json()
    if own_config:
        overridden = sorted(line.split(" ", 1)[0] for line in config["notices"])
        assert overridden == [
            "Chapyter.agent_max_steps",
            "Chapyter.inline_completion",
            "ChapyterExtApp.default_model",
            "ChapyterExtApp.models",
        ], config["notices"]
        assert all("locked by the administrator" in line for line in config["notices"])
    else:
        assert config["notices"] == []
    assert [m["name"] for m in config["models"]] == ["class", "big"], config
    assert config["default"] == "class"
    assert config["agent"]["policy"] == "risky"
    assert config["agent"]["policy_floor"] == "risky"
    assert config["agent"]["max_steps"] == 8
    assert config["inline_completion"] is False
    refused = user.post("chapyter-ext/complete", {"prefix": "x = ", "suffix": ""})
    assert refused.status_code == 403 and refused.json()["error"]["kind"] == "disabled"


#: What each user's %%ai answer reports it used (counted in their notebook's usage when the
#: kernel calls the model through its server).
MAGIC_USAGE = {"prompt_tokens": 100, "completion_tokens": 10}

#: Whether the kernel holds the user's key, in os.environ or in the environment it was started
#: with; the key is named by its hash (the code the kernel runs must not hold it).
KEY_CHECK = """
import hashlib, os
def hashed(v):
    return hashlib.sha256(v.encode()).hexdigest()
with open("/proc/self/environ", "rb") as f:
    started = [e.partition("=")[2] for e in f.read().decode("utf-8", "replace").split("\\0")]
values = [*os.environ.values(), *started]
print("key-in-kernel", any(hashed(v) == {digest!r} for v in values))
"""


def check_magic(
    user: User, kernel: Kernel, fake: FakeOpenAIServer, key: str, *, proxied: bool
) -> None:
    """A %%ai cell, sent as chapyter-ext's JupyterLab sends it; then the generated cell runs.
    ``proxied``: the kernel was started by the user's server, holds no key and calls the model
    through that server (else, on a gateway, it holds the key it was started with)."""
    name = user.name
    _, outputs = kernel.execute(KEY_CHECK.format(digest=hashlib.sha256(key.encode()).hexdigest()))
    assert f"key-in-kernel {not proxied}" in output_text(outputs), output_text(outputs)
    _, outputs = kernel.execute("%ai status")
    path = "through the Jupyter server" if proxied else "direct: this kernel calls the endpoint"
    assert path in output_text(outputs) and key not in output_text(outputs)
    answer = f"```python\nanswer = 'set by {name}'\n```"
    fake.route(f"answer for {name}", Reply(answer, usage=MAGIC_USAGE))
    reply, outputs = kernel.execute(f"%%ai\nset the answer for {name}", chapyter_frontend=True)
    assert reply["status"] == "ok", output_text(outputs)
    inserted = [p for p in reply.get("payload", []) if p.get("source") == "set_next_input"]
    assert inserted and f"answer = 'set by {name}'" in inserted[0]["text"]
    shown = output_text(outputs)
    # Chapyter.show_usage (the page's admin-kernel): tokens and the price of class-model.
    assert "tokens (" in shown and "$" in shown, shown
    check_key_and_model(asked_with(fake, f"answer for {name}"), key, "class-model")
    # JupyterLab inserts the generated cell below and runs it.
    reply, outputs = kernel.execute(inserted[0]["text"] + "\nprint(answer)")
    assert reply["status"] == "ok" and f"set by {name}" in output_text(outputs)


def check_chat(user: User, fake: FakeOpenAIServer, key: str, *, proxied: bool) -> None:
    name = user.name
    fake.route(f"chat from {name}", f"Hello {name}.")
    sse = user.stream(
        "chapyter-ext/chat", {"notebook": f"{name}.ipynb", "message": f"chat from {name}"}
    )
    done = sse.first("done")
    assert done["text"] == f"Hello {name}."
    assert done["usage"]["total_tokens"] > 0 and done["usage"]["cost"] > 0
    check_key_and_model(asked_with(fake, f"chat from {name}"), key, "class-model")
    view = user.get("chapyter-ext/history", params={"notebook": f"{name}.ipynb"}).json()
    assert [m["content"] for m in view["messages"]] == [f"chat from {name}", f"Hello {name}."]
    # The notebook's usage: the chat's, and its kernel's %%ai where the server relayed it.
    magic = sum(MAGIC_USAGE.values()) if proxied else 0
    assert view["usage"]["total_tokens"] == done["usage"]["total_tokens"] + magic


def check_agent(user: User, kernel: Kernel, fake: FakeOpenAIServer, key: str) -> None:
    """An agent turn: its step runs in the user's kernel (as JupyterLab runs it)."""
    name = user.name
    code = f"print(6 * 7, {name!r})"
    fake.script(
        Reply(tool_calls=[{"name": "run_code", "arguments": {"code": code, "purpose": "compute"}}]),
        Reply(f"It printed 42 for {name}."),
    )
    steps: list[dict[str, Any]] = []

    def on_event(event: str, data: dict[str, Any]) -> None:
        if event == "start":
            steps.append({"message_id": data["message_id"]})
        if event != "step":
            return
        steps.append(data)
        reply, outputs = kernel.execute(data["code"])
        result = {
            "message_id": steps[0]["message_id"],
            "step_id": data["step_id"],
            "status": "ran",
            "result": {
                "cell_id": "agent-cell",
                "execution_count": reply.get("execution_count"),
                "outputs": outputs,
            },
        }
        posted = user.post("chapyter-ext/agent/result", result)
        assert posted.status_code == 200, posted.text

    body = {"notebook": f"{name}.ipynb", "message": f"agent task of {name}", "policy": "never"}
    sse = user.stream("chapyter-ext/agent", body, on_event)
    # The browser asked for "never"; the administrator's lock says at least "risky".
    assert sse.first("start")["policy"] == "risky"
    assert "administrator" in sse.first("notice")["message"]
    assert len(steps) == 2 and steps[1]["code"] == code
    assert steps[1]["needs_approval"] is False  # harmless code under "risky"
    done = sse.first("done")
    assert done["text"] == f"It printed 42 for {name}."
    requests = asked_with(fake, f"agent task of {name}")
    assert len(requests) == 2
    tool_results = [m for m in requests[1].messages if m.get("role") == "tool"]
    assert f"42 {name}" in json.dumps(tool_results)  # it ran in this user's kernel
    check_key_and_model(requests, key, "class-model")
    assert done["usage"]["total_tokens"] > 0


def check_budget(user: User, kernel: Kernel, fake: FakeOpenAIServer) -> str:
    """A spent budget (a LiteLLM refusal) reads as one line in %%ai, the chat and the agent."""
    name = user.name
    fake.route(f"budget for {name}", Reply.budget_exceeded())
    expected = json.loads(snippet("budget-refusal"))
    line = snippet("budget-line", gateway_host=f"127.0.0.1:{fake.port}").strip()
    _, outputs = kernel.execute(f"%%ai\nspend the budget for {name}", chapyter_frontend=True)
    shown = output_text(outputs)
    assert line in shown, shown
    assert "Traceback" not in shown
    body = {"notebook": "b.ipynb", "message": f"budget for {name}"}
    chat = user.stream("chapyter-ext/chat", body)
    assert chat.first("error") == {"kind": "budget", "message": line}
    agent = user.stream("chapyter-ext/agent", body)
    assert agent.first("error") == {"kind": "budget", "message": line}
    # What the loopback gateway sent is the page's LiteLLM refusal.
    assert Reply.budget_exceeded().error == expected["error"]["message"]
    assert expected["error"]["type"] == "budget_exceeded"
    return line


def check_isolation(users: dict[str, User]) -> None:
    """No user reaches another's chat, settings or files, by token or by browser cookie."""
    alice, bob = users["alice"], users["bob"]
    for path in ("chapyter-ext/history?notebook=bob.ipynb", "chapyter-ext/config",
                 "chapyter-ext/models", "api/contents"):  # fmt: skip
        response = httpx_get(f"{bob.base}/{path}", alice.token)
        assert response.status_code == 403, (path, response.status_code)
    by_cookie = alice.browser.get("/user/bob/chapyter-ext/history?notebook=bob.ipynb")
    assert by_cookie.status_code == 403
    assert "chat from bob" not in by_cookie.text
    # Alice's own server knows nothing of Bob's chat, whatever path she names.
    for notebook in ("bob.ipynb", "../bob/bob.ipynb", "/../../bob/bob.ipynb"):
        response = alice.get("chapyter-ext/history", params={"notebook": notebook})
        messages = response.json().get("messages", []) if response.status_code == 200 else []
        assert all("bob" not in m["content"] for m in messages), notebook
    # Bob's chat is his.
    mine = bob.get("chapyter-ext/history", params={"notebook": "bob.ipynb"}).json()
    assert "chat from bob" in json.dumps(mine)


def httpx_get(url: str, token: str) -> Any:
    return httpx.get(url, headers={"Authorization": f"token {token}"}, timeout=60)


def check_logs(hub: Hub, keys: dict[str, str]) -> str:
    """No key in any line the hub, proxy, servers, kernels or gateway wrote."""
    text = hub.log_text()
    assert text.strip(), "no logs were captured"
    for name, key in keys.items():
        assert key not in text, f"{name}'s key is in the logs"
        assert key[-12:] not in text
    return text


def run_deployment(hub: Hub, fake: FakeOpenAIServer, keys: dict[str, str], *, proxied: bool) -> str:
    """Everything, for every user; returns the logs (checked for keys). ``proxied``: kernels
    run beside their server and call the model through it (not on a gateway)."""
    users: dict[str, User] = {}
    kernels: dict[str, Kernel] = {}
    write_own_config(hub.workdir / "home")  # the glue's home_dir_template
    try:
        log_in_everyone(hub, users)
        kernels = {name: users[name].kernel(f"{name}.ipynb") for name in USERS}
        for name, user in users.items():
            check_admin_settings(user, own_config=name == OWN_CONFIG_USER)
            if name == BUDGET_USER:
                check_budget(user, kernels[name], fake)
                continue
            check_magic(user, kernels[name], fake, keys[name], proxied=proxied)
            check_chat(user, fake, keys[name], proxied=proxied)
            check_agent(user, kernels[name], fake, keys[name])
        check_isolation(users)
    finally:
        for kernel in kernels.values():
            kernel.close()
        for user in users.values():
            user.browser.close()
    return check_logs(hub, keys)
