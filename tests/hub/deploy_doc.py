"""The snippets of docs/deploy.md, as the hub tests run them.

Each fenced block of the page follows a ``<!-- snippet: NAME -->`` line; the tests take the
blocks by name and replace only the page's placeholders (the install prefix, the gateway's
address, the keys file, the Kernel Gateway's port) with this run's.
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"

#: The page's stand-ins, replaced with the test's own values.
PREFIX = "/opt/jupyter"
GATEWAY_URL = "http://llm-gateway.example:4000/v1"
GATEWAY_HOST = "llm-gateway.example:4000"
KEYS_FILE = "/srv/jupyterhub/llm-keys.json"
KG_PORT = "8889"

_BLOCK = re.compile(
    r"<!-- snippet: (?P<name>[a-z0-9-]+) -->\n```(?P<lang>[a-z]*)\n(?P<body>.*?)\n```", re.S
)

#: Every snippet of the page, each run by a hub test (test_deploy_doc checks the page has
#: exactly these and no unnamed block).
ALL = frozenset(
    {
        "hub-spawner",
        "hub-keys-auth-state",
        "hub-keys-environment",
        "admin-server",
        "admin-kernel",
        "budget-refusal",
        "budget-line",
        "gateway-run",
        "gateway-hub",
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
    ``prefix``, ``gateway_url``, ``gateway_host``, ``keys_file``, ``kg_port``."""
    text = snippets()[name]
    stand_ins = {
        "prefix": PREFIX,
        "gateway_url": GATEWAY_URL,
        "gateway_host": GATEWAY_HOST,
        "keys_file": KEYS_FILE,
        "kg_port": KG_PORT,
    }
    for key, value in values.items():
        text = text.replace(stand_ins[key], value)
    return text
