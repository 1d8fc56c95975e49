"""``GET config`` tells the chat whether the bundled local model's code is inserted for review
(``Chapyter.local_review``), so the panel offers no "Insert and run" for it."""

from __future__ import annotations

import pytest

from chapyter_ext.local_model import LOCAL_MODEL_NAME
from tests.test_local_model import needs_local_model

NO_ENDPOINT = {"Chapyter": {"base_url": "", "api_key": ""}}

pytestmark = needs_local_model


@pytest.mark.chapyter_config(NO_ENDPOINT)
async def test_the_local_model_is_review_first_by_default(get_json):
    status, config = await get_json("chapyter-ext", "config")
    assert status == 200
    [model] = config["models"]
    assert model["name"] == LOCAL_MODEL_NAME and model["local"] is True
    assert model["review_first"] is True


@pytest.mark.chapyter_config({"Chapyter": {**NO_ENDPOINT["Chapyter"], "local_review": False}})
async def test_local_review_off_runs_as_other_models(get_json):
    status, config = await get_json("chapyter-ext", "config")
    assert status == 200 and config["models"][0]["review_first"] is False


async def test_configured_endpoints_carry_no_review_flag(get_json):
    status, config = await get_json("chapyter-ext", "config")
    assert status == 200
    assert all("review_first" not in model for model in config["models"])
