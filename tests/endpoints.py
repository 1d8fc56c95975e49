"""An ``Endpoint`` to a loopback server, and a coroutine run, for the tests of
``chapyter_ext.llm``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from chapyter_ext import llm
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


T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    """Run a coroutine on a fresh loop, closing that loop's cached SDK clients afterwards."""

    async def main() -> T:
        try:
            return await coro
        finally:
            await llm.aclose_clients()

    return asyncio.run(main())
