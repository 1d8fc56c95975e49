"""The provider seam: a :class:`Backend` speaks one wire protocol, and an :class:`Endpoint`
names the protocol it speaks (``protocol``, ``"openai"`` unless configured otherwise).

Everything above :mod:`chapyter_ext.llm` talks OpenAI's message shape (``system`` / ``user`` /
``assistant`` / ``tool`` messages, ``tools`` as OpenAI function schemas) and gets text deltas,
tool calls and :class:`~.usage.Usage` back; a backend converts both ways. Backends are found by
the ``chapyter_ext.backends`` entry point, as tools are by ``chapyter_ext.tools``: the value is
a class (or a factory) that makes a backend; the built-in ones (``openai``, ``anthropic``) are
registered the same way in ``pyproject.toml``. Loading one imports its SDK, so nothing is loaded
until an endpoint of that protocol is called.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .errors import LLMError
from .steps import StepDelta, StepReply

if TYPE_CHECKING:
    from .endpoint import Endpoint

__all__ = [
    "DEFAULT_PROTOCOL",
    "ENTRY_POINT_GROUP",
    "Backend",
    "StepDelta",
    "StepReply",
    "backend_for",
    "protocols",
]

#: The entry point group backends are registered under.
ENTRY_POINT_GROUP = "chapyter_ext.backends"
#: The protocol of an endpoint that names none.
DEFAULT_PROTOCOL = "openai"

log = logging.getLogger("chapyter_ext.llm")


@runtime_checkable
class Backend(Protocol):
    """What a backend does: the calls of :mod:`.calls`, in OpenAI's shape on our side.

    :mod:`.calls` has already refused requests that could never be sent
    (:func:`~.errors.check_request`). Every failure leaves as an :class:`LLMError` (one line,
    never the key); retries follow :func:`~.retry.wait_or_raise` until text reached the caller.
    """

    #: The protocol name an endpoint gives as ``protocol`` (the entry point's name). Optional
    #: attributes: ``default_base_url`` (for an endpoint that gives none), ``key_env`` (the
    #: environment variable of the key, for an endpoint that gives none) and
    #: ``astream_fim(endpoint, prompt, suffix)`` (fill-in-the-middle, as text deltas).
    name: str

    def astream_step(
        self,
        endpoint: Endpoint,
        messages: list[dict],
        tools: list[dict] | None,
        *,
        extra_body: dict | None = None,
    ) -> AsyncGenerator[StepDelta, None]:
        """Stream one reply: ``StepDelta(text=...)`` pieces, then one ``StepDelta(done=True)``
        with the tool calls, finish reason, model and usage. Closing the generator closes the
        HTTP response."""
        ...

    def complete_step(
        self,
        endpoint: Endpoint,
        messages: list[dict],
        tools: list[dict] | None,
        on_token: Callable[[str], None] | None = None,
        *,
        stream: bool = True,
        extra_body: dict | None = None,
    ) -> StepReply:
        """The same reply, blocking; prose handed to ``on_token`` as it comes (its exceptions
        propagate unchanged)."""
        ...

    def list_models(self, endpoint: Endpoint) -> list[str]:
        """Names of the models the endpoint offers."""
        ...

    async def alist_models(self, endpoint: Endpoint) -> list[str]:
        """Async :meth:`list_models`."""
        ...


_lock = threading.Lock()
_loaded: dict[str, Backend] = {}


def protocols() -> tuple[str, ...]:
    """Names of the installed backends (entry points), without loading any of them."""
    from importlib.metadata import entry_points

    names = {point.name for point in entry_points(group=ENTRY_POINT_GROUP)}
    return tuple(sorted(names | {DEFAULT_PROTOCOL}))


def backend_for(endpoint: Endpoint) -> Backend:
    """The backend of ``endpoint``'s protocol, loaded (with its SDK) on first use."""
    name = endpoint.protocol or DEFAULT_PROTOCOL
    with _lock:
        found = _loaded.get(name)
    if found is not None:
        return found
    backend = _load(name)
    with _lock:
        return _loaded.setdefault(name, backend)


def _load(name: str) -> Backend:
    from importlib.metadata import entry_points

    points = [p for p in entry_points(group=ENTRY_POINT_GROUP) if p.name == name]
    if not points and name == DEFAULT_PROTOCOL:
        # A source checkout run without an install still speaks OpenAI.
        from .openai_backend import OpenAIBackend

        return OpenAIBackend()
    if not points:
        raise LLMError(
            "bad_request",
            f"Nothing was sent: no backend speaks the protocol {name!r} (installed: "
            f"{', '.join(protocols())}). Install its package, e.g. pip install "
            f"'chapyter-ext[{name}]'.",
        )
    try:
        factory = points[0].load()
        backend = factory() if callable(factory) else factory
    except ImportError as err:
        raise LLMError(
            "bad_request",
            f"Nothing was sent: the {name!r} backend needs a package that is not installed "
            f"({err.name or err}). Install it: pip install 'chapyter-ext[{name}]'.",
        ) from None
    if not isinstance(backend, Backend):
        raise LLMError("bad_request", f"Nothing was sent: the {name!r} backend is not a Backend.")
    return backend
