"""An ``Endpoint`` to a loopback server, for the tests of ``chapyter_ext.llm``."""

from __future__ import annotations

from typing import Any

from chapyter_ext.llm import Endpoint
from chapyter_ext.testing.openai_server import FakeOpenAIServer

#: The key these endpoints send (it must never show in an error, a log or a repr).
KEY = "sk-test-SECRET-0123456789"


def loopback_endpoint(server: FakeOpenAIServer, **changes: Any) -> Endpoint:
    """``server`` as the endpoint: ``KEY``, model ``fake-model``, 2 s timeout, 2 retries, and
    the fields in ``changes``."""
    fields: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": KEY,
        "model": "fake-model",
        "timeout": 2.0,
        "max_retries": 2,
    }
    fields.update(changes)
    return Endpoint(**fields)
