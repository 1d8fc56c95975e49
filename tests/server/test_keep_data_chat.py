"""The chat's code blocks with the small-model profile keep the user's data and show their
result: what **Insert below** takes is the checked code, through the real server
and the loopback model."""

from __future__ import annotations

import pandas as pd
import pytest

from chapyter_ext.context import describe_variables
from chapyter_ext.contract import code_block_key

PRICES = pd.DataFrame({"item": ["tea", "cake"], "price": [2.5, 4.0], "qty": [3, 1]})
SNAPSHOT = {
    "path": "work/a.ipynb",
    "cell_count": 3,
    "variables": describe_variables({"prices": PRICES}),
}
SMALL = pytest.mark.chapyter_config({"Chapyter": {"prompt_style": "small"}})
REBINDS = "prices = prices[prices['qty'] > 1]"


async def ask(post_chat, message: str) -> dict:
    body = {"notebook": "work/a.ipynb", "message": message, "context": SNAPSHOT}
    _, reader = await post_chat(body)
    return reader.first("done")


@SMALL
async def test_a_block_that_would_overwrite_the_data_gets_a_new_name(post_chat, get_json, fake):
    fake.script(f"Here:\n```python\n{REBINDS}\n```")
    done = await ask(post_chat, "rows of prices where qty > 1")
    code = "prices_qty_gt_1 = prices[prices['qty'] > 1]\nprices_qty_gt_1"
    assert done["text"] == f"Here:\n```python\n{code}\n```"
    assert done["checks"] == [{"block_id": code_block_key(code), "runnable": True, "problem": ""}]
    _, history = await get_json("chapyter-ext", "history", params={"notebook": "work/a.ipynb"})
    assert history["messages"][-1]["content"] == done["text"]


@SMALL
async def test_asked_to_change_it_the_block_keeps_the_name_and_shows_it(post_chat, fake):
    fake.script(f"```python\n{REBINDS}\n```")
    done = await ask(post_chat, "drop the rows of prices where qty <= 1")
    assert done["text"] == f"```python\n{REBINDS}\nprices\n```"


async def test_a_capable_model_s_blocks_are_left_as_they_are(post_chat, fake):
    fake.script(f"```python\n{REBINDS}\n```")
    done = await ask(post_chat, "rows of prices where qty > 1")
    assert done["text"] == f"```python\n{REBINDS}\n```"
