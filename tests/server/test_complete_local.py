"""Inline completion with the bundled local model (no endpoint configured): a short suggestion
as a plain continuation of the code (``/v1/completions``, no suffix: asked in a chat, the
model answers in English), with the local model's small token and line caps."""

from __future__ import annotations

import time

import pytest

from tests.test_local_model import needs_local_model

NO_ENDPOINT = {"Chapyter": {"base_url": "", "api_key": "", "temperature": 0.0}}

pytestmark = [needs_local_model, pytest.mark.chapyter_config(NO_ENDPOINT)]


async def test_the_local_model_suggests_a_short_completion(post_complete, ext_app):
    plan = await ext_app.completions.plan()  # starts the local model
    assert plan.local and plan.fim
    assert plan.endpoint.max_tokens <= 32 and plan.max_lines == 1

    body = {"prefix": "numbers = [3, 1, 2]\nprint(sorted(", "suffix": ")", "editor": "e1"}
    started = time.monotonic()
    response, reader = await post_complete(body, request_timeout=120)
    print(f"local suggestion in {time.monotonic() - started:.2f} s: {reader.events}")
    assert response.code == 200
    assert reader.names[-1] == "done", reader.events
    text = reader.first("done")["text"]
    assert "\n" not in text
    # Neither the code before the cursor (small models repeat it) nor a ")" too many.
    assert "numbers = [3, 1, 2]" not in text and "print(" not in text
    assert text.count(")") - text.count("(") <= 1
    await ext_app.stop_extension()
