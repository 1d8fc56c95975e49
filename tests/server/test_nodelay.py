"""Kernel websockets without Nagle's algorithm (``chapyter_ext.server.nodelay``)."""

from __future__ import annotations

from typing import Any

import pytest

from chapyter_ext.server.nodelay import kernel_websockets_without_nagle


class _Handler:
    def __init__(self) -> None:
        self.nodelay: list[bool] = []

    def set_nodelay(self, value: bool) -> None:
        self.nodelay.append(value)


class _Connection:
    """Stands in for jupyter_server's connection class: connect() once the websocket is open."""

    def __init__(self, handler: Any) -> None:
        self.websocket_handler = handler
        self.connected = False

    def connect(self) -> str:
        self.connected = True
        return "connected"


def test_wraps_the_configured_class_and_sets_nodelay_on_connect():
    settings: dict[str, Any] = {"kernel_websocket_connection_class": _Connection}
    assert kernel_websockets_without_nagle(settings)
    wrapped = settings["kernel_websocket_connection_class"]
    assert issubclass(wrapped, _Connection) and wrapped.__name__ == "_Connection"
    handler = _Handler()
    connection = wrapped(handler)
    assert connection.connect() == "connected"
    assert connection.connected and handler.nodelay == [True]
    # Twice is once: the class is not wrapped again.
    assert not kernel_websockets_without_nagle(settings)
    assert settings["kernel_websocket_connection_class"] is wrapped


def test_a_handler_without_set_nodelay_still_connects():
    settings: dict[str, Any] = {"kernel_websocket_connection_class": _Connection}
    kernel_websockets_without_nagle(settings)
    connection = settings["kernel_websocket_connection_class"](object())
    assert connection.connect() == "connected"


def test_nothing_configured_is_left_alone():
    settings: dict[str, Any] = {}
    assert not kernel_websockets_without_nagle(settings)
    assert settings == {}


def test_the_server_uses_it(jp_serverapp):
    cls = jp_serverapp.web_app.settings["kernel_websocket_connection_class"]
    assert getattr(cls, "_chapyter_nodelay", False)
    assert cls.__name__ == "ZMQChannelsWebsocketConnection"


@pytest.mark.chapyter_config({"ChapyterExtApp": {"kernel_nodelay": False}})
def test_it_can_be_turned_off(jp_serverapp):
    cls = jp_serverapp.web_app.settings["kernel_websocket_connection_class"]
    assert not getattr(cls, "_chapyter_nodelay", False)
