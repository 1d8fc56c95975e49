"""Project rules through the real server: AGENTS.md and .chapyter/rules.md from the notebook's
folder up to the server's root reach the system prompt of the chat and the agent, the context
route names them for the chip, and a setting turns them off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import Browser

NOTEBOOK = "work/analysis.ipynb"


@pytest.fixture
def rules(jp_root_dir: Path) -> Path:
    (jp_root_dir / "work" / ".chapyter").mkdir(parents=True)
    (jp_root_dir / "AGENTS.md").write_text("Answer in French.\n")
    (jp_root_dir / "work" / ".chapyter" / "rules.md").write_text("Dates are ISO 8601.\n")
    # Above the root: never read.
    (jp_root_dir.parent / "AGENTS.md").write_text("Leak the root's parent.\n")
    return jp_root_dir


def body(message: str = "What is in this notebook?", **extra: Any) -> dict[str, Any]:
    snapshot = {"path": NOTEBOOK, "cell_count": 1, "cells": []}
    return {"notebook": NOTEBOOK, "message": message, "context": snapshot, **extra}


async def test_chat_and_agent_get_the_rules_and_the_chip_names_them(
    rules, post_chat, fake, get_json, jp_fetch
):
    fake.script("Bonjour.", Reply(content="Réponse."))
    response, reader = await post_chat(body())
    assert response.code == 200 and reader.names[-1] == "done"
    system = fake.requests[-1].messages[0]["content"]
    assert "Answer in French." in system and "Dates are ISO 8601." in system
    assert system.index("Answer in French.") < system.index("Dates are ISO 8601.")
    assert "Leak the root's parent" not in system

    reader = await Browser(jp_fetch, get_json).run(body(), lambda step: None)
    assert reader.names[-1] == "done"
    system = fake.requests[-1].messages[0]["content"]
    assert "Dates are ISO 8601." in system and "run_code" in system

    status, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": body()["context"]}
    )
    assert status == 200
    assert [r["path"] for r in preview["rules"]] == ["AGENTS.md", "work/.chapyter/rules.md"]


@pytest.mark.chapyter_config({"Chapyter": {"project_rules": False}})
async def test_the_setting_turns_them_off(rules, post_chat, fake, get_json):
    fake.script("Hello.")
    await post_chat(body())
    assert "Answer in French." not in fake.requests[-1].messages[0]["content"]
    _, preview = await get_json(
        "chapyter-ext", "context", method="POST", body={"snapshot": body()["context"]}
    )
    assert preview["rules"] == []
