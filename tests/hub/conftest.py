"""Fixtures of the JupyterHub tests: the loopback model the whole deployment talks to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chapyter_ext.testing.openai_server import FakeOpenAIServer


@pytest.fixture(scope="module")
def fake_gateway() -> Iterator[FakeOpenAIServer]:
    """The OpenAI-compatible gateway every user's server and kernel talks to (loopback)."""
    with FakeOpenAIServer(models=("class-model", "big-model")) as server:
        yield server
