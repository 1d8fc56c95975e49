"""The chat through a real Jupyter server with no endpoint configured: the bundled local model
starts on the first message, streams a real answer, and stops with the server extension."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chapyter_ext.local_model import LOCAL_MODEL_NAME, NOTICE, pid_alive, read_state
from tests.test_local_model import needs_local_model

# No base_url and no api_key: nothing configured, so the local model answers. Short and
# deterministic answers keep the test fast on two cores.
NO_ENDPOINT = {"Chapyter": {"base_url": "", "api_key": "", "max_tokens": 64, "temperature": 0.0}}

pytestmark = [needs_local_model, pytest.mark.chapyter_config(NO_ENDPOINT)]


async def test_first_message_starts_the_local_model_and_streams_its_answer(
    get_json, post_chat, ext_app, jp_runtime_dir: Path
):
    status, config = await get_json("chapyter-ext", "config")
    assert status == 200
    [model] = config["models"]
    assert model["name"] == config["default"] == LOCAL_MODEL_NAME
    assert model["local"] is True and model["notice"] == NOTICE
    assert not list(jp_runtime_dir.glob("chapyter-ext-local-*.json"))  # nothing started yet

    started = time.monotonic()
    response, reader = await post_chat(
        {"notebook": "local.ipynb", "message": "How do I reverse a list in Python?"},
        request_timeout=300,
    )
    print(f"first chat reply (model start + answer) in {time.monotonic() - started:.1f} s")
    assert response.code == 200
    assert reader.names[0] == "start" and reader.names[-1] == "done", reader.events
    assert "token" in reader.names
    assert reader.first("start")["model"] == LOCAL_MODEL_NAME
    assert reader.first("done")["status"] == "complete"

    [state_file] = jp_runtime_dir.glob("chapyter-ext-local-*.json")
    state = read_state(state_file)
    assert state is not None and pid_alive(state.pid)
    status, config = await get_json("chapyter-ext", "config")
    assert config["models"][0]["host"] == f"127.0.0.1:{state.port}"

    await ext_app.stop_extension()  # what JupyterLab does when it stops
    assert not pid_alive(state.pid)
    assert not state_file.exists()


@pytest.mark.chapyter_config(
    {"Chapyter": {**NO_ENDPOINT["Chapyter"], "local_model_path": "/nonexistent/broken.gguf"}}
)
async def test_the_chat_says_clearly_when_the_local_model_cannot_start(get_json):
    status, body = await get_json(
        "chapyter-ext",
        "chat",
        method="POST",
        body={"notebook": "local.ipynb", "message": "hello"},
        request_timeout=120,
    )
    assert status == 502, body
    assert body["error"]["kind"] == "connection"
    assert "local model server exited" in body["error"]["message"]
    assert "\n" not in body["error"]["message"]
    status, view = await get_json("chapyter-ext", "history", params={"notebook": "local.ipynb"})
    assert view["messages"] == []  # refused before anything was saved


async def test_the_models_route_starts_the_local_model_first(get_json, ext_app, jp_runtime_dir):
    # Before, it asked http://127.0.0.1/v1 (port 80) when nothing had started the model yet.
    assert not list(jp_runtime_dir.glob("chapyter-ext-local-*.json"))
    status, body = await get_json("chapyter-ext", "models", request_timeout=300)
    assert status == 200, body
    assert body == {"name": LOCAL_MODEL_NAME, "models": [LOCAL_MODEL_NAME]}
    [state_file] = jp_runtime_dir.glob("chapyter-ext-local-*.json")
    state = read_state(state_file)
    assert state is not None and state.api_key and pid_alive(state.pid)
    assert state_file.stat().st_mode & 0o777 == 0o600
    await ext_app.stop_extension()
    assert not pid_alive(state.pid)
