"""@-mentions through the real server and the loopback model: a mentioned variable's summary,
a cell's source and outputs and a file's head are sent pinned ahead of the context, within the
budget (the small model's too); a ``..`` path and a symbolic link out of the root are refused
in one line; the stored message keeps its mentions and the export shows them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from chapyter_ext.context import describe_variables

from .agent_browser import Browser

NOTEBOOK = "work/analysis.ipynb"
# As the kernel summarises them (the browser sends them in the snapshot as they came).
VARIABLES = describe_variables(
    {
        "sales": pd.DataFrame({"region": ["north", "south", "east"], "sales": [120, 80, 95]}),
        "other": 7,
    }
)
CELL = {
    "kind": "cell",
    "cellId": "c-1",
    "label": "cell [4]",
    "source": "sales.groupby('region').sum()",
    "outputs": "region\nnorth    120",
}


def snapshot(**extra: Any) -> dict[str, Any]:
    return {"path": NOTEBOOK, "cell_count": 5, "variables": VARIABLES, **extra}


def body(mentions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "notebook": NOTEBOOK,
        "message": "What is in these?",
        "context": snapshot(),
        "mentions": mentions,
        **extra,
    }


def sent_context(fake: Any) -> str:
    return fake.requests[-1].messages[-1]["content"]


@pytest.fixture
def files(jp_root_dir: Path) -> Path:
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "sales.csv").write_text(
        "region,sales\n" + "".join(f"r{i},{i}\n" for i in range(200))
    )
    (jp_root_dir / "data" / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (jp_root_dir.parent / "outside.txt").write_text("TOP SECRET OUTSIDE\n")
    os.symlink(jp_root_dir.parent / "outside.txt", jp_root_dir / "data" / "link.txt")
    return jp_root_dir


async def test_each_mention_is_sent_pinned_and_stored(files, post_chat, fake, get_json):
    fake.script("Done.")
    mentions = [
        {"kind": "variable", "name": "sales", "label": "sales"},
        CELL,
        {"kind": "file", "path": "data/sales.csv", "label": "data/sales.csv"},
        {"kind": "file", "path": "data/blob.bin", "label": "data/blob.bin"},
        {"kind": "file", "path": "data/gone.csv", "label": "data/gone.csv"},
        # Not in the snapshot: the browser read it through the kernel.
        {
            "kind": "variable",
            "name": "late",
            "label": "late",
            "variable": {"name": "late", "type": "list", "summary": "[1, 2, 3] (3 items)"},
        },
    ]
    response, reader = await post_chat(body(mentions))
    assert response.code == 200 and reader.names[-1] == "done"
    text = sent_context(fake)
    pinned = text.index("Mentioned by the user (always sent):")
    assert pinned < text.index("Variables (most")  # ahead of the rest of the context
    # Its schema and a few rows, as the chat's context shows a table.
    assert "Variable sales:\n- sales (DataFrame): 3 rows × 2 columns\n    columns: 'region'" in text
    assert "north | 120" in text
    assert "Cell [4]:\nsales.groupby('region').sum()\nOutputs:\nregion\nnorth    120" in text
    assert "File data/sales.csv (first 40 lines):\nregion,sales\nr0,0" in text
    assert "r38,38" in text and "r39,39" not in text
    assert "File data/blob.bin: binary, not shown." in text
    assert "File data/gone.csv: not found under the server's root." in text
    assert "Variable late:" in text and "[1, 2, 3]" in text

    status, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert status == 200
    [user] = [m for m in view["messages"] if m["role"] == "user"]
    assert user["mentions"][:3] == [
        {"kind": "variable", "label": "sales", "name": "sales"},
        {"kind": "cell", "label": "cell [4]", "cellId": "c-1"},
        {"kind": "file", "label": "data/sales.csv", "path": "data/sales.csv"},
    ]
    assert "source" not in str(user["mentions"])  # what was sent is not stored
    status, export = await get_json(
        "chapyter-ext", "history", "export", params={"notebook": NOTEBOOK}
    )
    assert status == 200
    assert (
        "> Mentioned: variable `sales`, cell `cell [4]`, file `data/sales.csv`"
        in (export["markdown"])
    )


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../outside.txt", "must be a path under the server's root"),
        ("/etc/passwd", "must be a path under the server's root"),
        ("data/link.txt", "leads outside the server's root"),
    ],
)
async def test_a_path_out_of_the_root_is_refused_in_one_line(files, path, says, get_json, fake):
    mention = {"kind": "file", "path": path, "label": path}
    status, answer = await get_json("chapyter-ext", "chat", method="POST", body=body([mention]))
    assert status == 400
    message = answer["error"]["message"]
    assert says in message and "\n" not in message
    assert not fake.requests  # nothing was sent
    _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
    assert not view.get("messages")  # nor saved


async def test_bad_mentions_are_refused_naming_the_field(get_json):
    for mentions, says in [
        ([{"kind": "kernel", "label": "x"}], "'mentions[].kind'"),
        ([{"kind": "variable", "label": "x"}], "'mentions[].name'"),
        ([{"kind": "variable", "name": "x", "label": "x"}] * 21, "at most 20"),
        ("df", "'mentions' must be a list"),
        ([{"kind": "cell", "cellId": "c", "label": "x" * 201}], "'mentions[].label'"),
    ]:
        status, answer = await get_json("chapyter-ext", "chat", method="POST", body=body(mentions))
        assert status == 400 and says in answer["error"]["message"], answer


@pytest.mark.chapyter_config({"Chapyter": {"prompt_style": "small", "context_budget": 6000}})
async def test_the_small_budget_clips_with_a_note_and_drops_nothing(files, post_chat, fake):
    fake.script("Done.")
    big = dict(CELL, source="x = 1\n" * 2000)
    mentions = [
        big,
        {"kind": "variable", "name": "sales", "label": "sales"},
        {"kind": "file", "path": "data/sales.csv", "label": "data/sales.csv"},
    ]
    await post_chat(body(mentions))
    text = sent_context(fake)
    start = text.index("Mentioned by the user")
    pinned = text[start:]
    assert len(text) < 900 + 400  # the small budget (900) plus the message around it
    assert pinned.count("[… clipped to fit the context budget]") >= 1
    for name in ("Cell [4]:", "Variable sales:", "File data/sales.csv"):
        assert name in pinned  # each one kept, clipped if need be


async def test_agent_turns_get_the_mentions_too(files, jp_fetch, get_json, fake):
    mentions = [CELL, {"kind": "file", "path": "data/sales.csv", "label": "data/sales.csv"}]
    reader = await Browser(jp_fetch, get_json).run(body(mentions), lambda step: None)
    assert reader.names[-1] == "done"
    text = fake.requests[0].messages[-1]["content"]
    assert "Cell [4]:\nsales.groupby" in text and "File data/sales.csv" in text


class TestAdminLocksContextOff:
    """An administrator who locks ``send_context`` off keeps @-mentions and files in too: the
    request is refused in one line and nothing is sent or saved (the user's own switch, by
    contrast, never holds back what the user named)."""

    @pytest.fixture
    def jp_server_config(self, jp_server_config, jp_system_config_path):
        admin = {"Chapyter": {"send_context": False, "locked": ["send_context"]}}
        (jp_system_config_path / "jupyter_server_config.json").write_text(json.dumps(admin))
        return jp_server_config

    async def test_a_mention_is_refused_in_one_line(self, files, get_json, fake):
        mention = {"kind": "file", "path": "data/sales.csv", "label": "sales.csv"}
        status, answer = await get_json("chapyter-ext", "chat", method="POST", body=body([mention]))
        assert status == 400
        message = answer["error"]["message"]
        assert "Chapyter.send_context is locked off" in message and "\n" not in message
        assert not fake.requests
        _, view = await get_json("chapyter-ext", "history", params={"notebook": NOTEBOOK})
        assert not view.get("messages")
