"""Kernel websockets without Nagle's algorithm, so that each output reaches the browser at once.

A cell run sends the browser a handful of small messages in quick succession (``status``,
``execute_input``, the outputs, ``execute_reply``). jupyter_server leaves Nagle's algorithm on for
the kernel websocket, so each small write after the first waits until the browser has ACKed the
one before, and Linux delays that ACK by up to 40 ms: a ``print`` cell took ~35 ms from request to
output on loopback instead of a few, and a ``%%ai`` cell (two runs) paid it twice
(``benchmarks/shift_enter``). Writes are whole messages already, so nothing is gained by
coalescing them.

:func:`kernel_websockets_without_nagle` wraps whatever kernel websocket connection class the server
is configured with (the default, a gateway's, another extension's) in a subclass that turns
``TCP_NODELAY`` on when the websocket opens, and changes nothing else.
"""

from __future__ import annotations

import contextlib
from typing import Any

_MARK = "_chapyter_nodelay"


def kernel_websockets_without_nagle(settings: dict[str, Any]) -> bool:
    """Make ``settings``' kernel websocket connections set ``TCP_NODELAY``; whether it did."""
    base = settings.get("kernel_websocket_connection_class")
    if not isinstance(base, type) or getattr(base, _MARK, False):
        return False

    def connect(self: Any) -> Any:
        handler = getattr(self, "websocket_handler", None)
        # The websocket is open by now (jupyter_server connects from its handler's open()).
        with contextlib.suppress(Exception):
            handler.set_nodelay(True)  # type: ignore[union-attr]
        return base.connect(self)  # type: ignore[attr-defined]

    # Same name: c.<Name>.* from the server's config still applies, and logs read the same.
    wrapped = type(base.__name__, (base,), {"connect": connect, _MARK: True})
    wrapped.__module__ = base.__module__
    wrapped.__doc__ = base.__doc__
    settings["kernel_websocket_connection_class"] = wrapped
    return True
