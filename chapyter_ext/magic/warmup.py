"""Warm what the first ``%%ai`` needs, in the background, once ``%load_ext`` has returned.

The first request of a fresh kernel used to pay for importing the ``openai`` SDK (~0.5 s, most
of it pydantic building the SDK's types), loading the CA bundle for its HTTP client (~90 ms),
the modules of the context summary and the first summary itself. :func:`start` does that on a
daemon thread while the user writes the request, so ``%load_ext`` stays as fast as before.

The thread never starts the bundled local model, never sends anything to a model, and
swallows every error: the real request reports them. A kernel whose ``%%ai`` goes through the
Jupyter server's model route first tells that server to load the SDK too (``POST v1/warm``:
the server loads it on such hints, not at start). It does not block the kernel: the user's
cells run meanwhile (sharing the GIL with it for a fraction of a second). A ``%%ai`` run before
it is done finds the modules half imported and waits on Python's import locks for the rest,
which is the time it would have spent importing them itself.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

#: The last warm-up: its thread, when it started and finished (``perf_counter``), and the
#: error that stopped it early, if any (for tests and ``benchmarks/bench_magic.py``).
state: dict[str, Any] = {"thread": None, "started": None, "finished": None, "error": None}
#: Seconds the hint to the Jupyter server may take (it answers at once).
HINT_TIMEOUT = 5.0


def start(shell: Any, settings: Any) -> threading.Thread | None:
    """Start warming on a daemon thread (unless ``Chapyter.warm_up`` is off); the thread."""
    if not settings.warm_up:
        return None
    thread = threading.Thread(
        target=_warm, args=(shell, settings), name="chapyter-ext-warm-up", daemon=True
    )
    state.update(thread=thread, started=time.perf_counter(), finished=None, error=None)
    thread.start()
    return thread


def _warm(shell: Any, settings: Any) -> None:
    try:
        _hint_server(settings)
        registry, endpoint = _warm_client(settings)
        _warm_request_path(endpoint)
        if settings.send_context:
            # The secrets %%ai passes: the summary cache starts again when they differ.
            secrets = [*registry.secrets(), settings.api_key, *settings.extra_headers.values()]
            _prime_summary(shell, settings, [s for s in secrets if s])
    except Exception as exc:  # the real request reports whatever is wrong
        state["error"] = f"{type(exc).__name__}: {exc}"
        log.debug("chapyter-ext warm-up stopped: %s", exc)
    finally:
        state["finished"] = time.perf_counter()


def _warm_client(settings: Any) -> tuple[Any, Any]:
    """Import the SDK and build the pooled client of the endpoint that will answer.

    The bundled local model is not started (seconds, and a process): its client needs the
    port and key the server picks, so only the SDK and the shared HTTP client are made.
    """
    from ..endpoints import kernel_registry
    from ..llm import LLMError
    from ..llm.clients import warm_clients

    registry = kernel_registry(settings)
    endpoint = None
    if registry.local is None:
        endpoint = registry.resolve(None)[1]
    with contextlib.suppress(LLMError):  # no key yet: the request will say so
        warm_clients(endpoint)
    return registry, endpoint


def _warm_request_path(endpoint: Any) -> None:
    """Import what the first call and its answer need (the messages, parsing, provenance)."""
    from .. import contract, messages, parsing, redact  # noqa: F401
    from ..llm import calls, tool_calls  # noqa: F401  # the stream's tool-call assembly
    from . import replay  # noqa: F401

    parsing.check_syntax("x = 1")  # IPython's input transformers, built on first use
    if endpoint is not None:
        from ..llm.errors import check_request

        check_request(endpoint, [{"role": "user", "content": "x"}])
    from ..llm.clients import warm_chunk_validator

    warm_chunk_validator()  # pydantic builds it on first use: the first streamed chunk's


def _hint_server(settings: Any) -> None:
    """A kernel whose ``%%ai`` goes through the Jupyter server's model route tells that server
    to load the SDK now (``POST v1/warm``, nothing forwarded to a model): the server no longer
    loads it at start, and the first ``%%ai`` would otherwise wait for it there."""
    if not settings.served:
        return
    import urllib.request

    request = urllib.request.Request(
        f"{settings.effective_base_url}/warm",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {settings.api_key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=HINT_TIMEOUT) as response:
            response.read()
    except OSError as exc:  # an older server, or one that is stopping: the request will tell
        log.debug("chapyter-ext: the server's warm-up hint failed: %s", exc)


def _prime_summary(shell: Any, settings: Any, secrets: list[str]) -> None:
    """One kernel summary, thrown away: imports its modules, fills the per-variable cache
    (``chapyter_ext.context.fact_cache``) with what the user's cells have defined so far."""
    from ..context import kernel_context

    # RuntimeError: the user's cell changed the namespace while it was read.
    with contextlib.suppress(RuntimeError):
        kernel_context(shell, budget=settings.context_budget, secrets=secrets)
