"""``POST chapyter-ext/warm``: a hint that a user is about to ask a model.

The first call to a model needs the ``openai`` SDK (~0.5 s to import, ~30 MB that an idle
server would otherwise hold): :func:`chapyter_ext.llm.clients.load_sdk` loads it on a thread,
once per process. The server no longer does that at start, so that a server nobody chats with
stays small; it does it when the page first shows the chat panel (this route), when a kernel
of this server loads the extension (``POST chapyter-ext/v1/warm`` with the kernel's
credential, :mod:`.model_proxy`), and in any case at the first request that calls a model,
without blocking the event loop. ``Chapyter.warm_up = False`` leaves only the last.

The answer: ``{"warm_up": true}`` when the load has started (or is done), ``false`` when the
warm-up is off. Nothing is sent to any model.
"""

from __future__ import annotations

import tornado.web

from ..llm.clients import load_sdk
from .base_handler import ChapyterHandler


def start_warm_up(app: object) -> bool:
    """Start loading the SDK unless the server's ``Chapyter.warm_up`` is off; whether it did."""
    if not getattr(app, "warm_up_sdk", False):
        return False
    load_sdk()
    return True


class WarmHandler(ChapyterHandler):
    """The page's hint (see the module)."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"warm_up": bool}`` at once; the load goes on in the background."""
        self.finish({"warm_up": start_warm_up(self.app)})


def warm_handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns (the ExtensionApp prepends the server's base_url)."""
    return [(r"chapyter-ext/warm", WarmHandler)]
