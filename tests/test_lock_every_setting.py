"""Every administrator default can be a lock: each setting of ``Chapyter``
and of ``ChapyterExtApp``, set and locked in a system-wide file, holds against a user's own
config that sets it otherwise (and, for ``Chapyter``, against ``%config`` later), saying so in
one line. A setting added without a row here fails ``test_every_setting_has_a_row``.

The server's own start with locks is tested in ``tests/server/test_admin_locks.py``."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from chapyter_ext.config import Chapyter
from chapyter_ext.server.app import ChapyterExtApp
from chapyter_ext.server.overrides import hold_app_locks

#: Chapyter's settings: (the administrator's, a user's looser or other value).
CHAPYTER = {
    "agent": (False, True),
    "agent_local_max_steps": (2, 5),
    "agent_max_steps": (5, 20),
    "agent_policy": ("risky", "never"),
    "agent_result_chars": (1000, 8000),
    "agent_time_limit": (60.0, 600.0),
    "api_key": ("sk-admin-0123456789abcdef", "sk-mine-0123456789abcdef"),
    "base_url": ("http://llm-gateway.example:4000/v1", "http://127.0.0.1:9/v1"),
    "batch_mode": ("replay", "regenerate"),
    "chat": (False, True),
    "completion_context_chars": (1000, 3000),
    "completion_fim": ({"class-model": False}, {"class-model": True}),
    "completion_max_tokens": (32, 128),
    "completion_model": ("small-model", "big-model"),
    "context_budget": (3000, 9000),
    "extra_headers": ({"X-Org": "uni-0123456789"}, {"X-Org": "mine-0123456789"}),
    "fix_retries": (1, 3),
    "image_input": ("off", "on"),
    "inline_completion": (False, True),
    "kernel_keys": (False, True),
    "local_model": (False, True),
    "local_model_path": ("/opt/models/class.gguf", "/home/me/mine.gguf"),
    "local_review": (True, False),
    "max_retries": (2, 5),
    "max_tokens": (1024, 4096),
    "mcp": (False, True),
    "mcp_server": (False, True),
    "model": ("class-model", "my-model"),
    "prices": ({"class-model": {"input": 0.15, "output": 0.6}}, {}),
    "outside_timeout": (60.0, 600.0),
    "project_rules": (False, True),
    "prompt_style": ("small", "full"),
    "rules_chars": (1000, 4000),
    "run_policy": ("risky", "never"),
    "save_chat_in_notebook": (False, True),
    "save_chat_max_bytes": (65536, 1048576),
    "secret_names": (["MYCORP_*"], []),
    "send_context": (False, True),
    "show_usage": (True, False),
    "temperature": (0.0, 1.0),
    "timeout": (30.0, 120.0),
    "tool_calling": ("off", "on"),
    "trial_memory_mb": (1024, 4096),
    "undo_memory_mb": (512, 4096),
    "undo_turns": (2, 10),
    "trial_time_limit": (5.0, 30.0),
    "trials": (True, False),
    "warm_up": (False, True),
}

#: The server's settings, the same way.
SERVER = {
    "contents_root": ("s3://uni/notebooks", "s3://mine"),
    "default_model": ("class", "mine"),
    "deleted_chat_retention_days": (7.0, 365.0),
    "history_dir": ("/srv/chats", "/home/me/chats"),
    "history_messages_sent": (10, 50),
    "kernel_nodelay": (True, False),
    "max_chats_per_notebook": (10, 500),
    "max_concurrent_streams": (2, 50),
    "max_history_messages": (100, 1000),
    "max_message_chars": (1000, 100000),
    "mcp_call_timeout": (30.0, 600.0),
    "mcp_servers": ({"mcpServers": {"site": {"command": "x"}}}, {"mcpServers": {}}),
    "mcp_start_timeout": (10.0, 100.0),
    "models": ({"class": {"model": "class-model"}}, {"mine": {"model": "my-model"}}),
    "stream_timeout": (60.0, 0.0),
}

#: Settings a user may make stricter under a lock: (the administrator's, a stricter one).
STRICTER = {
    "agent_policy": ("risky", "ask"),
    "run_policy": ("never", "ask"),
    "agent_max_steps": (10, 3),
    "agent_local_max_steps": (3, 1),
    "agent_time_limit": (300.0, 60.0),
    "agent_result_chars": (4000, 1000),
    "fix_retries": (2, 0),
    "trial_time_limit": (10.0, 2.0),
    "trial_memory_mb": (2048, 512),
    "chat": (True, False),
    "agent": (True, False),
    "inline_completion": (True, False),
    "mcp": (True, False),
    "mcp_server": (True, False),
    "outside_timeout": (120.0, 30.0),
    "trials": (False, True),
}


@pytest.fixture
def system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A system-wide config folder (on JUPYTER_CONFIG_PATH), a separate user folder, and no
    endpoint or key from the environment."""
    system, user = tmp_path / "etc-jupyter", tmp_path / "user-jupyter"
    system.mkdir()
    user.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(system))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CHAPYTER_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    return system


def admin_file(system: Path, config: dict[str, Any]) -> None:
    (system / "jupyter_server_config.json").write_text(json.dumps(config))


def test_every_setting_has_a_row() -> None:
    assert set(CHAPYTER) == set(Chapyter.class_trait_names(config=True)) - {"locked"}
    assert set(SERVER) == set(ChapyterExtApp.class_own_traits(config=True))


@pytest.mark.parametrize("name", sorted(CHAPYTER))
def test_a_locked_chapyter_setting_holds(
    system: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs, mine = CHAPYTER[name]
    admin_file(system, {"Chapyter": {name: theirs, "locked": [name]}})
    settings = Chapyter(config=Config({"Chapyter": {name: mine}}))
    assert getattr(settings, name) == theirs
    assert len(settings.overridden) == 1
    line = settings.overridden[0]
    assert line.startswith(f"Chapyter.{name} is locked by the administrator")
    assert line.endswith("is not used.")
    # A secret's value is never in the line.
    if name in ("api_key", "extra_headers"):
        assert "0123456789" not in line
    # %config in a kernel later: the lock still holds.
    settings.update_config(Config({"Chapyter": {name: mine}}))
    assert getattr(settings, name) == theirs
    # Unlocked, the user's value is used: the row tests the lock, not the value. (The
    # system-wide files are read once per set of folders: another folder.)
    unlocked = system.parent / "etc-jupyter-unlocked"
    unlocked.mkdir()
    admin_file(unlocked, {"Chapyter": {name: theirs}})
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(unlocked))
    assert getattr(Chapyter(config=Config({"Chapyter": {name: mine}})), name) == mine


@pytest.mark.parametrize("name", sorted(SERVER))
def test_a_locked_server_setting_holds(
    system: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    theirs, mine = SERVER[name]
    admin_file(
        system,
        {"ChapyterExtApp": {name: theirs}, "Chapyter": {"locked": [f"ChapyterExtApp.{name}"]}},
    )
    app = ChapyterExtApp(config=Config({"ChapyterExtApp": {name: mine}}))
    assert getattr(app, name) == mine  # what the user's config set, before the locks
    lines = hold_app_locks(app, Chapyter)
    assert getattr(app, name) == theirs
    assert len(lines) == 1
    assert lines[0].startswith(f"ChapyterExtApp.{name} is locked by the administrator to ")
    assert lines[0].endswith("is not used.")


@pytest.mark.parametrize("name", sorted(STRICTER))
def test_a_user_may_be_stricter_than_a_lock(system: Path, name: str) -> None:
    theirs, stricter = STRICTER[name]
    admin_file(system, {"Chapyter": {name: theirs, "locked": [name]}})
    settings = Chapyter(config=Config({"Chapyter": {name: stricter}}))
    assert getattr(settings, name) == stricter
    assert settings.overridden == []


def test_a_jupyter_apps_own_setting_is_not_a_lock(
    system: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Read before the extension starts: a lock could not hold, so the administrator is told.
    admin_file(system, {"Chapyter": {"locked": ["ChapyterExtApp.log_level"]}})
    app = ChapyterExtApp(config=Config({"ChapyterExtApp": {"log_level": "DEBUG"}}))
    app.log.propagate = True
    with caplog.at_level(logging.WARNING):
        assert hold_app_locks(app, Chapyter) == []
    assert "'ChapyterExtApp.log_level', not a setting of chapyter-ext's; ignored" in caplog.text
