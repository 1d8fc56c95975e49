"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chapyter_ext.testing.openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started loopback OpenAI-compatible server (``.base_url``, ``.script()``, ``.requests``)."""
    with FakeOpenAIServer() as server:
        yield server
