"""A real JupyterHub with three users, set up as docs/deploy.md says (its snippets, run as they
are): each user logs in, opens JupyterLab with chapyter-ext, runs a %%ai cell, chats and runs
an agent turn through the hub's proxy, with their own key from the hub (auth_state) and the
administrator's settings; a spent budget is one line; nobody reaches another's chat; no log
holds a key."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .deploy_doc import snippet
from .harness import running, start_hub, user_env_from_doc
from .scenario import keys_for, run_deployment

pytestmark = pytest.mark.hub


def test_three_users_on_a_hub(tmp_path: Path, fake_gateway) -> None:
    started = time.monotonic()
    env = user_env_from_doc(tmp_path / "opt-jupyter")
    keys = keys_for("hub")
    config = snippet("hub-spawner", prefix=str(env), gateway_url=fake_gateway.base_url)
    config += "\n" + snippet("hub-keys-auth-state")
    hub = start_hub(tmp_path / "hub", env, keys=keys, snippets=config, keyed_authenticator=True)
    with running(hub.process):
        run_deployment(hub, fake_gateway, keys, proxied=True)
    print(f"\n[hub] three users on a JupyterHub: {time.monotonic() - started:.1f} s")
