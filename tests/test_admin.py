"""Administrator locks (chapyter_ext.admin): system-wide config fixes a setting that a user's
own config and %config may make stricter, never looser; logs never carry a key."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from traitlets import TraitError
from traitlets.config import Config

from chapyter_ext.admin import admin_config_dirs, admin_locks, stricter
from chapyter_ext.config import Chapyter, setting_trait
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


def lock_of(name: str) -> object:
    """The ``lock`` metadata of setting ``name``."""
    trait = setting_trait(name)
    return trait.metadata.get("lock") if trait is not None else None


def write(folder: Path, name: str, chapyter: dict) -> None:
    (folder / name).write_text(json.dumps({"Chapyter": chapyter}))


def test_stricter_orders_policies_and_caps() -> None:
    assert stricter(lock_of("agent_policy"), "ask", "risky") == "ask"
    assert stricter(lock_of("agent_policy"), "never", "risky") == "risky"
    assert stricter(lock_of("agent_policy"), "bogus", "risky") == "risky"
    assert stricter(lock_of("run_policy"), "risky", "risky") == "risky"
    assert stricter(lock_of("agent_max_steps"), 3, 5) == 3
    assert stricter(lock_of("agent_max_steps"), 50, 5) == 5
    assert stricter(lock_of("model"), "gpt-4o", "class-model") == "class-model"


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


def test_a_feature_locked_off_stays_off_and_one_locked_on_may_be_turned_off() -> None:
    for feature in ("chat", "agent", "inline_completion", "mcp"):
        assert stricter(lock_of(feature), True, False) is False
        assert stricter(lock_of(feature), False, True) is False
    assert stricter(lock_of("trials"), False, True) is True  # trials on is the strict side


def test_locked_names_the_servers_settings_too(system: Path, caplog) -> None:
    names = ["Chapyter.agent_policy", "ChapyterExtApp.models", "ChapyterExtApp.default_model"]
    admin = {
        "ChapyterExtApp": {"models": {"class": {"model": "class-model"}}},
        "Chapyter": {"locked": [*names, "ServerApp.ip", "nonsense"]},
    }
    (system / "jupyter_server_config.json").write_text(json.dumps(admin))
    with caplog.at_level(logging.WARNING):
        locks = admin_locks(Chapyter)
    assert locks.values == {"agent_policy": "ask"}  # locked without a value: the default
    assert locks.server["models"] == {"class": {"model": "class-model"}}
    assert "default_model" in locks.server  # its default holds (resolved by the app)
    assert locks.names() == [
        "agent_policy",
        "ChapyterExtApp.default_model",
        "ChapyterExtApp.models",
    ]
    warned = [r.getMessage() for r in caplog.records]
    assert any("'ServerApp.ip', not a setting" in line for line in warned)
    assert any("'nonsense', not a setting" in line for line in warned)
    # A kernel's settings name them all (%ai status shows them), and apply their own.
    settings = Chapyter(config=Config({"Chapyter": {"agent_policy": "never"}}))
    assert settings.locked == locks.names()
    assert settings.agent_policy == "ask"


def test_every_setting_the_admin_sets_is_locked_with_a_star(system: Path) -> None:
    (system / "ipython_kernel_config.py").write_text(
        'c.Chapyter.model = "class-model"\n'
        "c.Chapyter.secret_names.append('MYCORP_*')\n"
        'c.ChapyterExtApp.default_model = "class"\n'
        'c.Chapyter.locked = ["*"]\n'
    )
    locks = admin_locks(Chapyter)
    assert locks.values == {"model": "class-model", "secret_names": ["MYCORP_*"]}
    assert locks.server == {"default_model": "class"}
    mine = {"model": "my-model", "secret_names": ["MINE"], "temperature": 1.0}
    settings = Chapyter(config=Config({"Chapyter": mine}))
    assert (settings.model, settings.secret_names) == ("class-model", ["MYCORP_*"])
    assert settings.temperature == 1.0  # not set by the administrator: not locked
    assert settings.overridden == [
        "Chapyter.model is locked by the administrator to 'class-model': your 'my-model' is "
        "not used.",
        "Chapyter.secret_names is locked by the administrator to ['MYCORP_*']: your ['MINE'] "
        "is not used.",
    ]


def test_a_locked_secret_is_never_shown(system: Path) -> None:
    admin_key, my_key = "sk-admin-0123456789abcdef", "sk-mine-0123456789abcdef"
    write(system, "jupyter_server_config.json",
          {"api_key": admin_key, "extra_headers": {"X-Key": "hdr-admin-0123456789"},
           "locked": ["api_key", "extra_headers"]})  # fmt: skip
    mine = {"api_key": my_key, "extra_headers": {"X-Key": "hdr-mine-0123456789"}}
    settings = Chapyter(config=Config({"Chapyter": mine}))
    assert settings.api_key == admin_key
    assert settings.overridden == [
        "Chapyter.api_key is locked by the administrator: your value is not used.",
        "Chapyter.extra_headers is locked by the administrator: your value is not used.",
    ]


def test_a_refused_value_falls_back_on_the_server_and_raises_in_a_kernel(system: Path) -> None:
    write(system, "jupyter_server_config.json", {"agent_policy": "risky"})
    mine = Config({"Chapyter": {"agent_policy": "bogus", "fix_retries": 9, "temperature": 1.0}})
    # A kernel's %config and config files: one line, as before.
    with pytest.raises(TraitError, match="agent_policy must be one of ask, risky, never"):
        Chapyter(config=mine)
    # The server's: each refused setting falls back, the others stand.
    settings = Chapyter(config=mine, lenient=True)
    assert (settings.agent_policy, settings.fix_retries, settings.temperature) == ("risky", 1, 1.0)
    assert settings.overridden == [
        "Chapyter.agent_policy must be one of ask, risky, never, not 'bogus'; the "
        "administrator's 'risky' is used instead.",
        "Chapyter.fix_retries must be a whole number from 0 to 5, not 9; the default 1 is used "
        "instead.",
    ]


def test_a_lock_without_a_value_holds_the_environments_endpoint_and_key(
    system: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hub sets the endpoint and each user's key in the server's environment
    # (Spawner.environment); the administrator locks them without writing them in a file.
    hub_key = "sk-hub-0123456789abcdef"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm-gateway.example:4000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", hub_key)
    write(system, "jupyter_server_config.json", {"locked": ["base_url", "api_key"]})
    mine = {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-mine-0123456789abcdef"}
    settings = Chapyter(config=Config({"Chapyter": mine}))
    assert settings.base_url == "http://llm-gateway.example:4000/v1"
    assert settings.api_key == hub_key
    assert settings.allowed("base_url", "http://other/v1") == "http://llm-gateway.example:4000/v1"
    assert settings.overridden == [
        "Chapyter.base_url is locked by the administrator to "
        "'http://llm-gateway.example:4000/v1': your 'http://127.0.0.1:9/v1' is not used.",
        "Chapyter.api_key is locked by the administrator: your value is not used.",
    ]
    # Nobody's own value: nothing to say.
    assert Chapyter().overridden == []


def test_a_default_giving_way_to_a_lock_is_no_users_value(system: Path, capsys) -> None:
    # A kernel reads the locks of the server's file but not its values: its defaults give
    # way without a line about "your" value, which nobody set.
    write(system, "jupyter_server_config.json",
          {"inline_completion": False, "agent_max_steps": 8,
           "locked": ["inline_completion", "agent_max_steps"]})  # fmt: skip
    settings = Chapyter()
    assert (settings.inline_completion, settings.agent_max_steps) == (False, 8)
    assert settings.overridden == []
    capsys.readouterr()
    settings.update_config(Config({"Chapyter": {"agent_max_steps": 20}}))  # %config
    assert settings.agent_max_steps == 8
    line = "Chapyter.agent_max_steps is locked by the administrator to at most 8: your 20 is not "
    line += "used."
    assert settings.overridden == [line]
    # Under the %config cell, once.
    assert capsys.readouterr().err == f"chapyter-ext: {line}\n"
