"""A real JupyterHub with three users, set up as docs/deploy.md says (its snippets, run as they
are): each user logs in at the identity provider (the page's GenericOAuthenticator, which
keeps auth state, against a loopback OpenID Connect provider whose userinfo carries each
user's key), opens JupyterLab with chapyter-ext, runs a %%ai cell, chats and runs an agent
turn through the hub's proxy, with their own key from the hub (the page's auth_state hook)
and the administrator's settings; a spent budget is one line; nobody reaches another's chat;
no log holds a key."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .deploy_doc import python_config, snippet
from .harness import PASSWORD, USERS, running, start_hub, user_env_from_doc
from .identity_provider import REALM, IdentityProvider
from .scenario import keys_for, run_deployment

pytestmark = pytest.mark.hub


def test_three_users_on_a_hub(tmp_path: Path, fake_gateway) -> None:
    started = time.monotonic()
    env = user_env_from_doc(tmp_path / "opt-jupyter")
    keys = keys_for("hub")
    page = python_config(snippet("hub-keys-auth-state")).GenericOAuthenticator
    provider = IdentityProvider(
        client_id=page.client_id,
        client_secret=page.client_secret,
        password=PASSWORD,
        claims={name: {"llm_key": keys[name]} for name in USERS},
    )
    with provider:
        config = snippet("hub-spawner", prefix=str(env), gateway_url=fake_gateway.base_url)
        config += "\n" + snippet("hub-keys-auth-state", idp_url=provider.url)
        hub = start_hub(tmp_path / "hub", env, keys=keys, snippets=config, keyed_authenticator=True)
        with running(hub.process):
            run_deployment(hub, fake_gateway, keys, proxied=True)
    # Every login went through the identity provider (the code, the token, userinfo), and the
    # hub asked userinfo again before each spawn (OAuthenticator's refresh_pre_spawn).
    asked = provider.requests
    assert asked.count(("POST", f"{REALM}/token")) == len(USERS)
    assert asked.count(("GET", f"{REALM}/userinfo")) >= len(USERS)
    print(f"\n[hub] three users on a JupyterHub: {time.monotonic() - started:.1f} s")
