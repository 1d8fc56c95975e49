"""Every administrator default can be a lock, every feature can be off, and a configuration
that cannot be used as it is says so in one line, through the real server:
the administrator's file is the test's ``/etc/jupyter`` (pytest-jupyter's
``jp_system_config_path``), the user's is their ``~/.jupyter`` (``jp_config_dir``), which the
server reads after it.

Each class is one server: its ``admin`` and ``user`` fixtures are the two configs."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from chapyter_ext.server.app import ChapyterExtApp
from chapyter_ext.testing.openai_server import Reply

from .agent_browser import agent_body

ADMIN_MODELS = {"class": {"model": "class-model"}, "big": {"model": "big-model"}}
CHAT = {"notebook": "work/a.ipynb", "message": "hi"}


@pytest.fixture
def admin() -> dict[str, Any]:
    """The system-wide ``jupyter_server_config.json``."""
    return {}


@pytest.fixture
def user() -> dict[str, Any]:
    """The user's own settings, which come after the administrator's."""
    return {}


@pytest.fixture
def jp_server_config(
    jp_server_config, jp_system_config_path, jp_config_dir, admin, user, start_log
):
    # Written before the server starts (jp_server_config is what starts it): the system-wide
    # file, and the user's own ~/.jupyter/jupyter_server_config.json, read after it.
    (jp_system_config_path / "jupyter_server_config.json").write_text(json.dumps(admin))
    (jp_config_dir / "jupyter_server_config.json").write_text(json.dumps(user))
    return jp_server_config


@pytest.fixture
def start_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the extension logs at WARNING and above while it starts (its app's own logger,
    which does not propagate and is configured afresh when the app starts)."""
    lines: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    initialize = ChapyterExtApp.initialize_settings

    def listened(app: ChapyterExtApp) -> None:
        app.log.addHandler(handler)
        initialize(app)

    monkeypatch.setattr(ChapyterExtApp, "initialize_settings", listened)
    return lines


async def refused(get_json, route: str, body: dict[str, Any]) -> str:
    """The one line of a request refused because its feature is off (403, ``disabled``)."""
    status, answer = await get_json("chapyter-ext", route, method="POST", body=body)
    assert status == 403, answer
    assert answer["error"]["kind"] == "disabled"
    return answer["error"]["message"]


class TestModelListAndDefaultLocked:
    """The issue's case: the user's own config replaced the class's models and turned inline
    completion back on."""

    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {
            "ChapyterExtApp": {"models": ADMIN_MODELS, "default_model": "class"},
            "Chapyter": {
                "inline_completion": False,
                "locked": [
                    "ChapyterExtApp.models",
                    "ChapyterExtApp.default_model",
                    "inline_completion",
                ],
            },
        }

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        return {
            "ChapyterExtApp": {"models": {"mine": {"model": "my-model"}}, "default_model": "mine"},
            "Chapyter": {"inline_completion": True},
        }

    async def test_the_admins_models_hold_and_each_override_is_one_line(self, get_json, start_log):
        status, config = await get_json("chapyter-ext", "config")
        assert status == 200
        assert [m["name"] for m in config["models"]] == ["class", "big"]
        assert config["default"] == "class"
        assert config["inline_completion"] is False
        assert config["features"]["inline_completion"] is False
        lines = [
            "Chapyter.inline_completion is locked by the administrator to False: your True is "
            "not used.",
            "ChapyterExtApp.default_model is locked by the administrator to 'class': your "
            "'mine' is not used.",
            "ChapyterExtApp.models is locked by the administrator to {'class': …, 'big': …}: "
            "your {'mine': …} is not used.",
        ]
        assert sorted(config["notices"]) == lines
        for line in lines:
            assert start_log.count(f"chapyter-ext: {line}") == 1, start_log

    async def test_a_model_of_the_users_is_not_offered(self, get_json, ext_app):
        status, answer = await get_json("chapyter-ext", "models", params={"name": "mine"})
        assert status == 404 and "Unknown model 'mine'" in answer["error"]["message"]
        # Kernels asking the server's model route for another model are refused too.
        assert ext_app.kernel_access.models_locked is True

    async def test_completion_stays_off(self, get_json):
        line = await refused(get_json, "complete", {"prefix": "x = ", "suffix": ""})
        assert "Chapyter.inline_completion" in line


class TestEverythingTheAdminSetIsLocked:
    """``"*"``: every setting the administrator's file sets is locked, the server's included."""

    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {
            "ChapyterExtApp": {"models": ADMIN_MODELS, "max_message_chars": 1000},
            "Chapyter": {"agent_policy": "risky", "temperature": 0.0, "locked": ["*"]},
        }

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        return {
            "ChapyterExtApp": {"models": {"mine": {"model": "my-model"}}, "max_message_chars": 9},
            "Chapyter": {"agent_policy": "ask", "temperature": 1.5, "max_tokens": 99},
        }

    async def test_every_setting_of_the_admins_file_holds(self, get_json, ext_app):
        status, config = await get_json("chapyter-ext", "config")
        assert status == 200
        assert [m["name"] for m in config["models"]] == ["class", "big"]
        assert ext_app.max_message_chars == 1000
        settings = ext_app.agent.settings
        assert settings.temperature == 0.0
        assert settings.agent_policy == "ask"  # stricter is allowed
        assert settings.max_tokens == 99  # the administrator did not set it: not locked
        assert settings.locked == [
            "agent_policy",
            "temperature",
            "ChapyterExtApp.max_message_chars",
            "ChapyterExtApp.models",
        ]
        assert len(config["notices"]) == 3


class TestChatOff:
    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {"Chapyter": {"chat": False}}

    async def test_chat_and_agent_refuse_and_the_config_says_so(self, get_json, fake):
        status, config = await get_json("chapyter-ext", "config")
        assert status == 200
        assert config["features"] == {
            "chat": False,
            "agent": False,
            "inline_completion": True,
            "mcp": False,
            "mcp_server": True,  # a setting of its own (outside agents)
        }
        assert config["notices"] == []  # nobody's setting was overridden: the admin's default
        line = "The AI Chat is turned off on this server (Chapyter.chat)."
        assert await refused(get_json, "chat", CHAT) == line
        assert await refused(get_json, "agent", agent_body()) == line
        assert fake.requests == []


class TestAgentOff:
    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {"Chapyter": {"agent": False, "locked": ["agent"]}}

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        return {"Chapyter": {"agent": True}}

    async def test_agent_refuses_and_the_chat_answers(self, get_json, post_chat, fake):
        _, config = await get_json("chapyter-ext", "config")
        assert config["features"]["agent"] is False and config["features"]["chat"] is True
        assert config["features"]["mcp"] is False
        assert config["notices"] == [
            "Chapyter.agent is locked by the administrator to False: your True is not used."
        ]
        line = await refused(get_json, "agent", agent_body())
        assert line == "Agent mode is turned off on this server (Chapyter.agent)."
        fake.script(Reply("Hello."))
        response, reader = await post_chat(CHAT)
        assert response.code == 200 and reader.first("done")


class TestMcpOff:
    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {"Chapyter": {"mcp": False}}

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        servers = {"mcpServers": {"mine": {"command": "mcp-server-that-never-starts"}}}
        return {"ChapyterExtApp": {"mcp_servers": servers}}

    async def test_no_mcp_server_is_offered(self, get_json, ext_app):
        _, config = await get_json("chapyter-ext", "config")
        assert config["features"]["mcp"] is False and config["features"]["agent"] is True
        assert config["agent"]["mcp_servers"] == []
        assert ext_app.agent.tool_source is None


class TestMcpServersLocked:
    @pytest.fixture
    def admin(self, jp_system_config_path) -> dict[str, Any]:
        theirs = {"mcpServers": {"site": {"command": "site-mcp-server"}}}
        (jp_system_config_path / "chapyter_ext_mcp.json").write_text(json.dumps(theirs))
        return {"Chapyter": {"locked": ["ChapyterExtApp.mcp_servers"]}}

    @pytest.fixture
    def user(self, jp_config_dir) -> dict[str, Any]:
        mine = {"mcpServers": {"mine": {"command": "my-mcp-server"}}}
        (jp_config_dir / "chapyter_ext_mcp.json").write_text(json.dumps(mine))
        return {"ChapyterExtApp": {"mcp_servers": {"mcpServers": {"also": {"command": "x"}}}}}

    async def test_only_the_admins_servers_are_offered(self, get_json):
        _, config = await get_json("chapyter-ext", "config")
        assert [s["name"] for s in config["agent"]["mcp_servers"]] == ["site"]
        assert config["notices"] == [
            "ChapyterExtApp.mcp_servers is locked by the administrator to {}: your "
            "{'mcpServers': …} is not used."
        ]


class TestBrokenUserConfig:
    """A user's config with a default model that is not in its list, an entry that is not an
    endpoint, and values the settings refuse: the extension starts anyway (a failure to load
    would fail the test: ``reraise_server_extension_failures``), each fallback one line."""

    @pytest.fixture
    def admin(self) -> dict[str, Any]:
        return {
            "ChapyterExtApp": {"models": ADMIN_MODELS, "default_model": "class"},
            "Chapyter": {"agent_policy": "risky"},
        }

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        models = {
            "mine": {"model": "my-model"},
            "class": {"model": "class-model"},
            "typo": {"modle": "x"},
        }
        return {
            "ChapyterExtApp": {
                "models": models,
                "default_model": "nope",
                "max_history_messages": 0,
            },
            "Chapyter": {"agent_policy": "bogus"},
        }

    async def test_the_server_starts_and_says_what_it_used(self, get_json, ext_app, start_log):
        status, config = await get_json("chapyter-ext", "config")
        assert status == 200
        assert [m["name"] for m in config["models"]] == ["mine", "class"]
        assert config["default"] == "class"  # the administrator's default, which is offered
        assert ext_app.max_history_messages == 200
        assert ext_app.agent.settings.agent_policy == "risky"
        known = "known: ['api_key', 'base_url', 'extra_headers', 'max_retries', 'max_tokens', "
        known += "'model', 'protocol', 'temperature', 'timeout']"
        lines = [
            "Chapyter.agent_policy must be one of ask, risky, never, not 'bogus'; the "
            "administrator's 'risky' is used instead.",
            "ChapyterExtApp.max_history_messages: max_history_messages must be at least 1; "
            "the default 200 is used instead.",
            f"ChapyterExtApp.models['typo'] has unknown field(s) ['modle']; {known}; that "
            "model is left out.",
            "ChapyterExtApp.default_model 'nope' is not one of the models ('mine', 'class'); "
            "'class' is used instead.",
        ]
        assert config["notices"] == lines
        for line in lines:
            assert start_log.count(f"chapyter-ext: {line}") == 1, start_log

    async def test_the_routes_answer(self, get_json, fake):
        fake.script(Reply("ok"))
        status, answer = await get_json("chapyter-ext", "models", params={"name": "class"})
        assert status == 200 and answer["name"] == "class"


class TestNoAdminDefaultModelNotInList:
    """The issue's own broken config, no administrator: the first model is used."""

    @pytest.fixture
    def user(self) -> dict[str, Any]:
        models = {"a": {"model": "a-model"}, "b": {"model": "b-model"}}
        return {"ChapyterExtApp": {"models": models, "default_model": "c"}}

    async def test_the_first_model_is_the_default(self, get_json):
        status, config = await get_json("chapyter-ext", "config")
        assert status == 200 and config["default"] == "a"
        assert config["notices"] == [
            "ChapyterExtApp.default_model 'c' is not one of the models ('a', 'b'); 'a' is "
            "used instead."
        ]
