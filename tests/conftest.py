"""Shared pytest fixtures: the loopback OpenAI-compatible server, a fresh in-process IPython
shell, and a real kernel with chapyter_ext loaded that talks to the loopback server.

A module tailors the module-scoped ones by overriding a smaller fixture (pytest's way): its
``models`` (what the server lists), its ``kernel_env`` (the kernel's key and model) or its
``kernel_setup`` (code run once the extension is loaded).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import FakeOpenAIServer
from tests.kernel_harness import Kernel


def _resolve_lazy_imports() -> None:
    """Import, once and in this thread, what servers under test import later from threads of
    their own: anyio's lazily imported names (anyio reads its own source with ``ast`` to find
    them, and pytest rewrites the asserts of every module of a plugin's distribution, anyio's
    included), and the MCP SDK that pulls them in. CPython 3.11 converts ASTs with one recursion
    counter shared by all threads (python/cpython#106905): two threads doing so at once make one
    of them raise a spurious ``SystemError``."""
    import warnings

    import anyio
    import mcp  # noqa: F401

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in dir(anyio):
            getattr(anyio, name, None)


_resolve_lazy_imports()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started loopback OpenAI-compatible server (``.base_url``, ``.script()``, ``.requests``)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A new IPython InteractiveShell: its own namespace, in-memory history, no last exception.

    ``InteractiveShell.instance()`` alone would hand back a shell made earlier in the process (by
    another test or module), ignoring this configuration and keeping what that shell holds.
    """
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        monkeypatch.delattr(sys, name, raising=False)
    InteractiveShell.clear_instance()
    sh = InteractiveShell.instance(config=config)
    yield sh
    sh.reset(new_session=False)
    InteractiveShell.clear_instance()


@pytest.fixture(scope="module")
def models() -> tuple[str, ...]:
    """The models the module's ``server`` lists."""
    return ("fake-model",)


@pytest.fixture(scope="module")
def server(models: tuple[str, ...]) -> Iterator[FakeOpenAIServer]:
    """A loopback OpenAI-compatible server for the whole module."""
    with FakeOpenAIServer(models=models) as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel_env(server: FakeOpenAIServer) -> dict[str, str]:
    """The module's kernel's environment: its server as the endpoint, a key, the model."""
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test-KERNEL-0123456789",
        "CHAPYTER_MODEL": "fake-model",
    }


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    """Code the module's kernel runs once chapyter_ext is loaded (settings, data)."""
    return ""


@pytest.fixture(scope="module")
def kernel(kernel_env: dict[str, str], kernel_setup: str) -> Iterator[Kernel]:
    """A real IPython kernel for the whole module, chapyter_ext loaded, talking to ``server``."""
    k = Kernel(kernel_env)
    assert k.run("%load_ext chapyter_ext").status == "ok"
    if kernel_setup:
        assert k.run(kernel_setup).status == "ok"
    yield k
    k.shutdown()


@pytest.fixture(scope="module")
def llm_clients() -> Iterator[None]:
    """One shared pool of SDK clients serves a module's tests (as it would a notebook): closed
    at its end. ``pytestmark = pytest.mark.usefixtures("llm_clients")``."""
    yield
    from chapyter_ext import llm

    llm.close_clients()
