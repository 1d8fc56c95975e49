"""Administrator locks (chapyter_ext.admin): system-wide config fixes a setting that a user's
own config and %config may make stricter, never looser; logs never carry a key."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from traitlets.config import Config

from chapyter_ext.admin import admin_config_dirs, admin_locks, stricter
from chapyter_ext.config import Chapyter
from chapyter_ext.redact.logs import SecretLogFilter, install_log_redaction


@pytest.fixture
def system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A system-wide config folder (on JUPYTER_CONFIG_PATH) and a separate user folder."""
    system, user = tmp_path / "etc-jupyter", tmp_path / "user-jupyter"
    system.mkdir()
    user.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(system))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    return system


def write(folder: Path, name: str, chapyter: dict) -> None:
    (folder / name).write_text(json.dumps({"Chapyter": chapyter}))


def test_stricter_orders_policies_and_caps() -> None:
    assert stricter("agent_policy", "ask", "risky") == "ask"
    assert stricter("agent_policy", "never", "risky") == "risky"
    assert stricter("agent_policy", "bogus", "risky") == "risky"
    assert stricter("run_policy", "risky", "risky") == "risky"
    assert stricter("agent_max_steps", 3, 5) == 3
    assert stricter("agent_max_steps", 50, 5) == 5
    assert stricter("model", "gpt-4o", "class-model") == "class-model"


def test_only_system_folders_count(system: Path, tmp_path: Path) -> None:
    dirs = admin_config_dirs()
    assert str(system) in dirs and str(tmp_path / "user-jupyter") not in dirs
    # A user's own "locked" is not a lock.
    write(tmp_path / "user-jupyter", "jupyter_server_config.json", {"locked": ["model"]})
    assert not admin_locks(Chapyter)


def test_user_config_cannot_loosen_a_locked_policy(system: Path) -> None:
    write(system, "jupyter_server_config.json",
          {"agent_policy": "risky", "agent_max_steps": 5,
           "locked": ["agent_policy", "agent_max_steps", "local_model"]})  # fmt: skip
    user = {"agent_policy": "never", "agent_max_steps": 50, "local_model": True, "locked": []}
    settings = Chapyter(config=Config({"Chapyter": user}))
    assert settings.agent_policy == "risky"
    assert settings.agent_max_steps == 5
    # Locked without a value there: the default holds (local_model's is True).
    assert settings.local_model is True
    assert settings.locked == ["agent_max_steps", "agent_policy", "local_model"]
    # Stricter is allowed.
    strict = Chapyter(config=Config({"Chapyter": {"agent_policy": "ask", "agent_max_steps": 2}}))
    assert (strict.agent_policy, strict.agent_max_steps) == ("ask", 2)
    # %config goes through the same path.
    strict.update_config(Config({"Chapyter": {"agent_policy": "never"}}))
    assert strict.agent_policy == "risky"
    assert strict.allowed("agent_policy", "never") == "risky"
    assert strict.allowed("run_policy", "never") == "never"  # not locked


def test_a_locked_setting_without_order_keeps_the_admins_value(system: Path) -> None:
    (system / "ipython_kernel_config.py").write_text(
        'c.Chapyter.model = "class-model"\nc.Chapyter.locked = ["model"]\n'
    )
    settings = Chapyter(config=Config({"Chapyter": {"model": "my-own-model"}}))
    assert settings.model == "class-model"


def test_the_log_filter_replaces_keys_whoever_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hub-alice-0123456789abcdef")
    monkeypatch.setenv("JUPYTER_TOKEN", "login-token-0123456789")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test-admin-logs")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        install_log_redaction(logger, ["hdr-value-0123456789"])
        install_log_redaction(logger, ["hdr-value-0123456789"])  # replaces, never stacks
        assert sum(isinstance(f, SecretLogFilter) for f in handler.filters) == 1
        # What jupyter_server's GatewayKernelManager logs at INFO: the kernel's environment.
        env = {"OPENAI_API_KEY": "sk-hub-alice-0123456789abcdef", "H": "hdr-value-0123456789"}
        logger.info("started kernel: k1, args: %s", {"env": env})
        logger.warning("login at http://127.0.0.1:8888/lab?token=login-token-0123456789")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "sk-hub-alice" not in text and "hdr-value" not in text
    assert text.count("<redacted>") == 2 and "started kernel: k1" in text
    assert "token=login-token-0123456789" in text  # the login URL stays usable


def test_status_names_the_locked_settings(system: Path) -> None:
    from chapyter_ext.endpoints import describe_endpoint

    write(system, "ipython_config.json", {"agent_policy": "ask", "locked": ["agent_policy"]})
    settings = Chapyter(config=Config({"Chapyter": {"base_url": "http://127.0.0.1:9/v1"}}))
    lines = describe_endpoint(settings)
    assert "locked:   agent_policy (by the administrator: Chapyter.locked)" in lines
