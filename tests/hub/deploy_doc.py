"""The snippets of docs/deploy.md, as the tests run them.

Each fenced block of the page follows a ``<!-- snippet: NAME -->`` line; the tests take the
blocks by name and replace only the page's placeholders (the install prefix, the gateway's
address, the keys file, the Kernel Gateway's port, the wheel's path, the hub's and the
identity provider's addresses) with this run's. The
hub tests run the one-machine blocks; ``tests/packaging/test_wheel.py`` runs ``user-env``;
``test_deploy_doc.py`` checks the Kubernetes blocks (no cluster here) against the charts'
values vendored in ``charts/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
#: The charts' values of the releases the page is checked against (see charts/README.md).
CHARTS = Path(__file__).resolve().parent / "charts"

#: The page's stand-ins, replaced with the test's own values.
PREFIX = "/opt/jupyter"
GATEWAY_URL = "http://llm-gateway.example:4000/v1"
GATEWAY_HOST = "llm-gateway.example:4000"
KEYS_FILE = "/srv/jupyterhub/llm-keys.json"
KG_PORT = "8889"
HUB_URL = "https://hub.example.org"
IDP_URL = "https://login.example.org"


def wheel_name() -> str:
    """The name of the wheel ``python -m build`` makes (its version is package.json's)."""
    version = json.loads((ROOT / "package.json").read_text())["version"]
    return f"chapyter_ext-{version}-py3-none-any.whl"


WHEEL = f"./{wheel_name()}"

_BLOCK = re.compile(
    r"<!-- snippet: (?P<name>[a-z0-9-]+) -->\n```(?P<lang>[a-z]*)\n(?P<body>.*?)\n```", re.S
)

#: Every snippet of the page, each run or checked by a test (test_deploy_doc checks the page
#: has exactly these and no unnamed block).
ALL = frozenset(
    {
        # One machine: run by the hub tests (user-env by the wheel's test).
        "user-env",
        "hub-spawner",
        "hub-keys-auth-state",
        "hub-keys-environment",
        "admin-server",
        "admin-kernel",
        "budget-refusal",
        "budget-line",
        "gateway-run",
        "gateway-hub",
        # Kubernetes: checked by test_deploy_doc.
        "z2jh-image",
        "z2jh-singleuser",
        "z2jh-hub-keys",
        "eg-singleuser",
        "eg-gateway-values",
        "eg-kernel-image",
        "eg-kernel-key",
        "eg-hub-kernel-key",
    }
)


def snippets() -> dict[str, str]:
    """Every named block of the page: name -> text."""
    return {m["name"]: m["body"] + "\n" for m in _BLOCK.finditer(DOC.read_text())}


def fenced_blocks() -> int:
    """How many fenced blocks the page has, named or not."""
    return len(re.findall(r"^```[a-z]*$", DOC.read_text(), re.M)) // 2


def snippet(name: str, **values: str) -> str:
    """The block ``name``, with the placeholders given in ``values`` replaced:
    ``prefix``, ``gateway_url``, ``gateway_host``, ``keys_file``, ``kg_port``, ``wheel``,
    ``hub_url``, ``idp_url``."""
    text = snippets()[name]
    stand_ins = {
        "prefix": PREFIX,
        "gateway_url": GATEWAY_URL,
        "gateway_host": GATEWAY_HOST,
        "keys_file": KEYS_FILE,
        "kg_port": KG_PORT,
        "wheel": WHEEL,
        "hub_url": HUB_URL,
        "idp_url": IDP_URL,
    }
    for key, value in values.items():
        assert stand_ins[key] in text, f"{name} has no {stand_ins[key]}"
        text = text.replace(stand_ins[key], value)
    return text


def python_config(text: str) -> Config:
    """A Python config file's settings (``c``), as traitlets loads them."""
    config = Config()
    exec(compile(text, "<snippet>", "exec"), {"c": config, "get_config": lambda: config})
    return config
