"""docs/deploy.md: every code block is a named snippet that a test runs or checks.

The one-machine blocks run in the hub tests (``user-env`` in tests/packaging/test_wheel.py).
No Kubernetes cluster (nor Docker daemon) is available to the tests, so the Kubernetes blocks
are checked here, against what the charts and the gateway themselves say: the values, merged as
Helm merges them, validate against the jupyterhub chart's own schema and name only settings
the Enterprise Gateway chart has (both vendored in ``charts/``); every ``hub.config`` setting is
a configurable trait of its class; the hooks of ``hub.extraConfig`` run as the chart runs them,
on the auth state OAuthenticator's GenericOAuthenticator builds; what a user's server sends
with a kernel start (jupyter_server's own GatewayKernelManager, to a loopback recorder) and what
the gateway keeps of it give the kernel the key the page says, read by the kernels' config as
IPython reads it; the Dockerfiles start from the images named and install the wheel the build
makes.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import json
import os
import re
import subprocess
import types
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import tornado.web
import yaml
from IPython.core.application import SYSTEM_CONFIG_DIRS
from IPython.core.shellapp import InteractiveShellApp
from jupyter_core.paths import SYSTEM_CONFIG_PATH
from jupyterhub.app import JupyterHub
from jupyterhub.auth import Authenticator
from jupyterhub.crypto import CryptKeeper
from jupyterhub.spawner import Spawner
from oauthenticator.generic import GenericOAuthenticator
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from chapyter_ext.config import Chapyter
from chapyter_ext.endpoints import describe_endpoint
from chapyter_ext.server.app import ChapyterExtApp
from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

from .deploy_doc import (
    ALL,
    CHARTS,
    DOC,
    fenced_blocks,
    python_config,
    snippet,
    snippets,
    wheel_name,
)

pytestmark = pytest.mark.hub


def test_every_block_is_a_snippet_the_tests_run() -> None:
    found = snippets()
    assert set(found) == ALL
    assert fenced_blocks() == len(ALL)  # no unnamed block, which no test would run


def test_the_budget_refusal_is_what_the_loopback_gateway_sends() -> None:
    import httpx

    with FakeOpenAIServer() as server:
        server.script(Reply.budget_exceeded())
        response = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert response.status_code == 400
    assert response.json() == json.loads(snippets()["budget-refusal"])


def test_the_page_installs_the_wheel_the_build_makes() -> None:
    text = DOC.read_text()
    named = set(re.findall(r"chapyter_ext-[^\s/]+\.whl", text))
    assert named == {wheel_name()}, f"docs/deploy.md names {named}, the build makes {wheel_name()}"
    for name in ("user-env", "z2jh-image", "eg-kernel-image"):
        assert wheel_name() in snippet(name), name
    # The distribution is not on the package index yet: no command may install it by name.
    assert not re.search(r"pip install[^\n`]*\bchapyter-ext\b(?![-\w.])", text)


# -- the charts' values ---------------------------------------------------------------------


def chart(name: str) -> tuple[Path, str]:
    """The vendored chart folder ``charts/<name>-<version>`` and its version."""
    (folder,) = CHARTS.glob(f"{name}-*")
    return folder, folder.name.removeprefix(f"{name}-")


def values(name: str) -> dict[str, Any]:
    """A YAML snippet of the page, parsed."""
    parsed = yaml.safe_load(snippet(name))
    assert isinstance(parsed, dict), name
    return parsed


def helm_merge(base: dict[str, Any], *overrides: dict[str, Any]) -> dict[str, Any]:
    """Values files over a chart's defaults as Helm merges them: maps are merged key by key,
    anything else (lists included) replaced, and null removes a key."""
    merged = copy.deepcopy(base)
    for override in overrides:
        _merge_into(merged, override)
    return merged


def _merge_into(target: dict[str, Any], override: dict[str, Any]) -> None:
    for key, value in override.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def jupyterhub_chart_errors(*files: dict[str, Any]) -> list[str]:
    """What the jupyterhub chart's schema says of its defaults with ``files`` over them."""
    folder, _ = chart("jupyterhub")
    schema = yaml.safe_load((folder / "values.schema.yaml").read_text())
    defaults = yaml.safe_load((folder / "values.yaml").read_text())
    validator = jsonschema.Draft7Validator(schema)
    merged = helm_merge(defaults, *files)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(merged)]


Z2JH = ("z2jh-singleuser", "z2jh-hub-keys")
WITH_GATEWAY = (*Z2JH, "eg-singleuser", "eg-hub-kernel-key")


@pytest.mark.parametrize("files", [Z2JH, WITH_GATEWAY], ids=["z2jh", "z2jh+gateway"])
def test_the_values_validate_against_the_jupyterhub_charts_schema(files: tuple[str, ...]) -> None:
    assert jupyterhub_chart_errors(*(values(name) for name in files)) == []


@pytest.mark.parametrize(
    ("name", "right", "wrong"),
    [
        ("z2jh-singleuser", "mountPath:", "mountpath:"),
        ("z2jh-singleuser", "extraEnv:", "extraEnvironment:"),
        ("z2jh-singleuser", "stringData:", "string_data:"),
        ("z2jh-hub-keys", "  config:", "  configs:"),
        ("z2jh-hub-keys", "    Authenticator:", "    authenticator:"),
    ],
)
def test_the_schema_check_finds_a_misspelt_setting(name: str, right: str, wrong: str) -> None:
    text = snippet(name)
    assert right in text
    assert jupyterhub_chart_errors(yaml.safe_load(text.replace(right, wrong, 1)))


def test_a_second_values_file_keeps_the_model_gateways_egress_rule() -> None:
    """Helm replaces lists: the gateway's values file repeats the first file's egress rule."""
    merged = helm_merge(*(values(name) for name in WITH_GATEWAY))
    rules = merged["singleuser"]["networkPolicy"]["egress"]
    first = values("z2jh-singleuser")["singleuser"]["networkPolicy"]["egress"]
    assert all(rule in rules for rule in first)
    assert set(merged["hub"]["extraConfig"]) == {"chapyter-keys.py", "chapyter-kernel-key.py"}


def test_the_gateway_charts_values_name_only_its_settings() -> None:
    folder, _ = chart("enterprise-gateway")
    defaults = yaml.safe_load((folder / "values.yaml").read_text())

    def unknown(given: dict[str, Any], known: dict[str, Any], path: str) -> list[str]:
        found = []
        for key, value in given.items():
            if key not in known:
                found.append(f"{path}{key}")
            elif isinstance(value, dict) and key != "extraEnv":  # extraEnv: any variable
                found += unknown(value, known[key], f"{path}{key}.")
        return found

    assert unknown(values("eg-gateway-values"), defaults, "") == []
    # The chart's own PATH stays (maps are merged), beside the page's variables.
    merged = helm_merge(defaults, values("eg-gateway-values"))
    assert merged["deployment"]["extraEnv"]["EG_INHERITED_ENVS"] == "PATH"


def test_the_page_names_the_releases_it_is_checked_against() -> None:
    text = DOC.read_text()
    _, z2jh = chart("jupyterhub")
    _, gateway = chart("enterprise-gateway")
    assert f"--version {z2jh}" in snippet("z2jh-singleuser")
    assert f"checked against its {z2jh} release" in " ".join(text.split())
    assert f"elyra/kernel-py:{gateway}" in snippet("eg-kernel-image")
    assert f"against its {gateway} release" in " ".join(text.split())


# -- the administrator's files and the hub's settings ----------------------------------------


def same_python(a: str, b: str) -> bool:
    """The same code, comments and layout aside."""
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def test_the_chart_mounts_the_administrators_files_of_one_machine() -> None:
    singleuser = values("z2jh-singleuser")["singleuser"]
    files = {f["mountPath"]: f for f in singleuser["extraFiles"].values()}
    assert set(files) == {
        "/etc/jupyter/jupyter_server_config.json",
        "/etc/ipython/ipython_kernel_config.py",
    }
    # Both folders are system-wide: Jupyter's and IPython's own lists.
    assert "/etc/jupyter" in SYSTEM_CONFIG_PATH and "/etc/ipython" in SYSTEM_CONFIG_DIRS
    server = files["/etc/jupyter/jupyter_server_config.json"]["data"]
    # The chart writes `data` as JSON for a .json path: the page's admin-server, as it is.
    assert json.loads(json.dumps(server)) == json.loads(snippet("admin-server")), (
        "z2jh-singleuser's /etc/jupyter/jupyter_server_config.json must be admin-server"
    )
    kernels = files["/etc/ipython/ipython_kernel_config.py"]["stringData"]
    assert same_python(kernels, snippet("admin-kernel")), (
        "z2jh-singleuser's /etc/ipython/ipython_kernel_config.py must be admin-kernel"
    )
    # The endpoint for everyone, as one machine's Spawner.environment.
    one_machine = python_config(snippet("hub-spawner"))
    assert singleuser["extraEnv"] == one_machine.Spawner.environment


#: The classes the page configures, by the section names it uses.
CLASSES: dict[str, Any] = {
    "JupyterHub": JupyterHub,
    "Spawner": Spawner,
    "Authenticator": Authenticator,
    "GenericOAuthenticator": GenericOAuthenticator,
    "CryptKeeper": CryptKeeper,
    "ChapyterExtApp": ChapyterExtApp,
    "Chapyter": Chapyter,
    "InteractiveShellApp": InteractiveShellApp,
}


def unknown_settings(config: Config | dict[str, Any]) -> list[str]:
    """The ``Class.setting`` names of ``config`` that are no configurable trait."""
    unknown = []
    for section, settings in config.items():
        cls = CLASSES.get(section)
        traits = cls.class_traits(config=True) if cls is not None else {}
        unknown += [f"{section}.{name}" for name in settings if name not in traits]
    return unknown


def test_every_setting_the_page_makes_is_a_trait_of_its_class(tmp_path: Path) -> None:
    keys_file = tmp_path / "llm-keys.json"
    keys_file.write_text("{}")
    configs = {
        "hub-spawner": python_config(snippet("hub-spawner")),
        "hub-keys-auth-state": python_config(snippet("hub-keys-auth-state")),
        "hub-keys-environment": python_config(
            snippet("hub-keys-environment", keys_file=str(keys_file))
        ),
        "gateway-hub": python_config(snippet("gateway-hub")),
        "admin-server": Config(json.loads(snippet("admin-server"))),
        "admin-kernel": python_config(snippet("admin-kernel")),
        "z2jh-hub-keys": Config(values("z2jh-hub-keys")["hub"]["config"]),
    }
    found = {name: unknown_settings(config) for name, config in configs.items()}
    assert found == {name: [] for name in configs}


def test_the_charts_hub_config_is_the_hub_config_of_one_machine() -> None:
    one_machine = python_config(snippet("hub-keys-auth-state"))
    chart_config = values("z2jh-hub-keys")["hub"]["config"]
    pairs = {(s, k) for s, settings in chart_config.items() for k in settings}
    # The hook is code: the chart's is in hub.extraConfig (next test).
    assert pairs == {(s, k) for s, settings in one_machine.items() for k in settings} - {
        ("Spawner", "auth_state_hook")
    }
    for section, key in pairs:
        assert one_machine[section][key] == chart_config[section][key], f"{section}.{key}"
    # "generic-oauth" is OAuthenticator's name for GenericOAuthenticator.
    (found,) = entry_points(group="jupyterhub.authenticators", name="generic-oauth")
    assert found.load() is GenericOAuthenticator


def function(text: str, name: str) -> str:
    """The code of the function ``name`` defined in ``text``."""
    (node,) = [n for n in ast.parse(text).body if getattr(n, "name", None) == name]
    return ast.dump(node)


class HookSpawner:
    """What the page's hooks use of a spawner: its environment and its user's auth state."""

    def __init__(self, environment: dict[str, str], auth_state: dict[str, Any] | None) -> None:
        self.environment = dict(environment)

        async def get_auth_state() -> dict[str, Any] | None:
            return auth_state

        self.user = types.SimpleNamespace(name="alice", get_auth_state=get_auth_state)


def chart_hub_config(*files: dict[str, Any]) -> Config:
    """``c`` as the chart's jupyterhub_config.py leaves it: ``hub.config`` loaded section by
    section, then every ``hub.extraConfig`` entry run in the order of its name."""
    hub = helm_merge({}, *files)["hub"]
    c = Config()
    for section, settings in hub.get("config", {}).items():
        c[section].update(settings)
    for _, code in sorted(hub.get("extraConfig", {}).items()):
        exec(compile(code, "<hub.extraConfig>", "exec"), {"c": c})
    return c


def identity_provider_state(**claims: str) -> dict[str, Any]:
    """The auth state GenericOAuthenticator keeps for a login whose userinfo has ``claims``."""
    token = {"access_token": "idp-token", "token_type": "Bearer", "scope": "openid profile"}
    userinfo = {"preferred_username": "alice", **claims}
    return GenericOAuthenticator().build_auth_state_dict(token, userinfo)


def test_the_hub_hooks_run_as_the_chart_runs_them() -> None:
    extra_config = values("z2jh-hub-keys")["hub"]["extraConfig"]["chapyter-keys.py"]
    assert function(extra_config, "chapyter_key") == function(
        snippet("hub-keys-auth-state"), "chapyter_key"
    ), "hub.extraConfig's hook must be the one of hub-keys-auth-state"
    c = chart_hub_config(values("z2jh-hub-keys"), values("eg-hub-kernel-key"))
    everyone = values("z2jh-singleuser")["singleuser"]["extraEnv"]

    state = identity_provider_state(llm_key="sk-alice-main", llm_kernel_key="sk-alice-small")
    spawner = HookSpawner(everyone, state)
    c.Spawner.auth_state_hook(spawner, state)  # JupyterHub: before the spawner starts
    asyncio.run(c.Spawner.pre_spawn_hook(spawner))  # then this one
    assert spawner.environment == {
        **everyone,
        "OPENAI_API_KEY": "sk-alice-main",
        "KERNEL_OPENAI_API_KEY": "sk-alice-small",
    }
    # No auth state (or no such claims): no key, and no failure.
    for nothing in (None, identity_provider_state()):
        spawner = HookSpawner(everyone, nothing)
        c.Spawner.auth_state_hook(spawner, nothing)
        asyncio.run(c.Spawner.pre_spawn_hook(spawner))
        assert spawner.environment == everyone


# -- what a kernel on the Enterprise Gateway gets ---------------------------------------------


def gateway_keeps(sent: dict[str, str], client_envs: list[str]) -> dict[str, str]:
    """What Enterprise Gateway keeps of a kernel start's environment: every KERNEL_ variable
    and those in client_envs (``MainKernelHandler._build_kernel_env`` of its 3.x releases)."""
    allowed = list(sent) if client_envs == ["*"] else client_envs
    return {k: v for k, v in sent.items() if k.startswith("KERNEL_") or k in allowed}


def sent_with_a_kernel_start(
    server_env: dict[str, str], kernel_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The environment jupyter_server's GatewayKernelManager sends with a kernel start, the
    server's environment being ``server_env`` (a loopback gateway records the request)."""
    from jupyter_server.gateway.gateway_client import GatewayClient
    from jupyter_server.gateway.managers import GatewayKernelManager

    received: list[dict[str, Any]] = []

    class Kernels(tornado.web.RequestHandler):
        def post(self) -> None:
            received.append(json.loads(self.request.body))
            self.finish({"id": "9c6e1a52-4d55-4c7e-9a0d-3a0b4f1e2d11", "name": "python3"})

    async def start() -> None:
        server = tornado.web.Application([(r"/api/kernels", Kernels)]).listen(0, "127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        monkeypatch.setenv("JUPYTER_GATEWAY_URL", f"http://127.0.0.1:{port}")
        GatewayClient.clear_instance()
        try:
            await GatewayKernelManager().start_kernel(kernel_name="python3", env=kernel_env)
        finally:
            GatewayClient.clear_instance()
            server.stop()

    for name in list(os.environ):
        if name.startswith(("KERNEL_", "OPENAI_", "CHAPYTER_", "JUPYTER_GATEWAY")):
            monkeypatch.delenv(name)
    for name, value in server_env.items():
        monkeypatch.setenv(name, value)
    asyncio.run(start())
    (request,) = received
    return request["env"]


def kernel_settings(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    """``Chapyter`` in a kernel of the page's kernel image whose environment is ``env``: the
    two config files where the image puts them, loaded as IPython loads system-wide ones."""
    for name in list(os.environ):
        if name.startswith(("KERNEL_", "OPENAI_", "CHAPYTER_")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # IPython reads /etc/ipython first, then /usr/local/etc/ipython over it.
    files = {"etc": snippet("admin-kernel"), "usr-local-etc": snippet("eg-kernel-key")}
    config = Config()
    for folder, text in files.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "ipython_kernel_config.py").write_text(text)
        loader = PyFileConfigLoader("ipython_kernel_config.py", str(tmp_path / folder))
        config.merge(loader.load_config())
    assert config.InteractiveShellApp.extensions == ["chapyter_ext"]
    return Chapyter(config=config)


def test_the_kernel_image_copies_the_config_files_into_ipythons_folders() -> None:
    copies = [args for op, args in dockerfile(snippet("eg-kernel-image")) if op == "COPY"]
    assert [
        "ipython_kernel_config.py",
        "/etc/ipython/ipython_kernel_config.py",
    ] in copies
    assert ["gateway_kernel_key.py", "/usr/local/etc/ipython/ipython_kernel_config.py"] in copies
    assert SYSTEM_CONFIG_DIRS == ["/usr/local/etc/ipython", "/etc/ipython"]


@pytest.mark.parametrize("kernel_key", [True, False], ids=["own key", "no key"])
def test_a_kernel_on_the_gateway_gets_the_key_the_page_says(
    kernel_key: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's server (the chart's environment and the hub's hooks), what it sends with a
    kernel start, what the gateway keeps, the kernel's settings: its own small key or none,
    never the user's key or the server's credential; and %ai status says direct."""
    merged = helm_merge(*(values(name) for name in WITH_GATEWAY))
    c = chart_hub_config(*(values(name) for name in WITH_GATEWAY))
    claims = {"llm_key": "sk-alice-main-0123456789"}
    if kernel_key:
        claims["llm_kernel_key"] = "sk-alice-small-0123456789"
    spawner = HookSpawner(merged["singleuser"]["extraEnv"], identity_provider_state(**claims))
    state = asyncio.run(spawner.user.get_auth_state())
    c.Spawner.auth_state_hook(spawner, state)
    asyncio.run(c.Spawner.pre_spawn_hook(spawner))
    server_env = {k: v.replace("{username}", "alice") for k, v in spawner.environment.items()}
    # What chapyter-ext gives a kernel it starts (a gateway kernel gets it too, unsent).
    credential = {"CHAPYTER_SERVER_URL": "http://127.0.0.1:8888/user/alice/chapyter-ext/v1",
                  "CHAPYTER_KERNEL_TOKEN": "chapyter-kernel-0123456789"}  # fmt: skip

    sent = sent_with_a_kernel_start(server_env, credential, monkeypatch)
    client_envs = values("eg-gateway-values")["deployment"]["extraEnv"]["EG_CLIENT_ENVS"]
    kept = gateway_keeps(sent, client_envs.split(","))
    # Everything the server sends, the gateway keeps: both sides agree.
    assert kept == sent
    assert "OPENAI_API_KEY" not in kept and not set(credential) & set(kept)
    assert kept["OPENAI_BASE_URL"] == server_env["OPENAI_BASE_URL"]
    assert kept["KERNEL_USERNAME"] == "alice" and "KERNEL_IMAGE" in kept

    settings = kernel_settings(tmp_path, kept, monkeypatch)
    status = "\n".join(describe_endpoint(settings))
    assert "path:     direct" in status and not settings.served
    if kernel_key:
        assert settings.api_key == "sk-alice-small-0123456789"
        assert "api key:  set: this kernel holds the key" in status
    else:
        assert settings.api_key == ""
        assert "api key:  not set" in status


# -- the Dockerfiles -------------------------------------------------------------------------


def dockerfile(text: str) -> list[tuple[str, list[str]]]:
    """A Dockerfile's instructions: (INSTRUCTION, its arguments), continuation lines joined;
    a RUN keeps its shell command as one argument."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    found = []
    for line in filter(str.strip, joined.splitlines()):
        op, _, rest = line.strip().partition(" ")
        found.append((op, [rest.strip()] if op == "RUN" else rest.split()))
    return found


@pytest.mark.parametrize(
    ("name", "image"),
    [("z2jh-image", "quay.io/jupyter/base-notebook:"), ("eg-kernel-image", "elyra/kernel-py:")],
)
def test_the_images_install_the_wheel_the_build_makes(name: str, image: str) -> None:
    steps = dockerfile(snippet(name))
    assert steps[0][0] == "FROM" and steps[0][1][0].startswith(image)
    wheel = wheel_name()
    copies = [args for op, args in steps if op == "COPY"]
    assert ["--chown=${NB_UID}:${NB_GID}", f"dist/{wheel}", "/tmp/"] in copies
    (run,) = [args[0] for op, args in steps if op == "RUN"]
    assert f"pip install --no-cache-dir /tmp/{wheel}" in run
    assert 'fix-permissions "${CONDA_DIR}"' in run  # Docker Stacks' way, as the user
    subprocess.run(["bash", "-n", "-c", run], check=True)
