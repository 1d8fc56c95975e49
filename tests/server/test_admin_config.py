"""Administrator settings through the real server: a system-wide config file (the test's
``/etc/jupyter``, pytest-jupyter's ``jp_system_config_path``) sets defaults for everyone and
locks the agent policy, which the user's own config and the browser cannot loosen."""

from __future__ import annotations

import json

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import Browser, agent_body, run_code

ADMIN = {
    "Chapyter": {
        "agent_policy": "risky",
        "agent_max_steps": 4,
        "inline_completion": False,
        "locked": ["agent_policy", "agent_max_steps"],
    }
}


@pytest.fixture
def jp_server_config(jp_server_config, jp_system_config_path):
    # Written before the server starts (jp_server_config is what starts it); the user's own
    # config (the fixture's) asks for a looser policy and a higher cap.
    (jp_system_config_path / "jupyter_server_config.json").write_text(json.dumps(ADMIN))
    jp_server_config["Chapyter"].update(agent_policy="never", agent_max_steps=50)
    return jp_server_config


async def test_the_config_route_says_what_the_admin_fixed(get_json):
    status, config = await get_json("chapyter-ext", "config")
    assert status == 200
    assert config["agent"]["policy"] == "risky"
    assert config["agent"]["policy_floor"] == "risky"
    assert config["agent"]["max_steps"] == 4
    assert config["inline_completion"] is False


async def test_inline_completion_turned_off_is_refused(get_json):
    status, body = await get_json(
        "chapyter-ext", "complete", method="POST", body={"prefix": "x = ", "suffix": ""}
    )
    assert status == 403
    assert body["error"]["kind"] == "disabled"


async def test_a_browser_asking_for_a_looser_policy_gets_the_admins(jp_fetch, get_json, fake):
    fake.script(Reply(tool_calls=[run_code("import os\nos.remove('data.csv')")]), "Done.")
    browser = Browser(jp_fetch, get_json)
    reader = await browser.run(agent_body(policy="never"), lambda step: {"status": "skipped"})
    assert reader.first("start")["policy"] == "risky"
    notice = reader.first("notice")["message"]
    assert "administrator" in notice and "'risky'" in notice
    # The risky step waits for approval, as the administrator's policy says.
    assert browser.steps()[0]["needs_approval"] is True
