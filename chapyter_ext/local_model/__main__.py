"""``python -m chapyter_ext.local_model --watch-parent PID -- LLAMA_ARGS``: the server process.

Serves the model with llama-cpp-python's app, but demanding the API key handed over in
``CHAPYTER_EXT_LOCAL_API_KEY`` and without its CORS middleware (``allow_origins=["*"]`` with
credentials, which lets any web page the user visits call the model). Exits as soon as the
process that started it is gone, so a killed kernel leaves no model behind.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from .server import API_KEY_ENV

_WATCH_INTERVAL = 1.0  # seconds between checks that the parent still lives
_DOCS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})


def _watch_parent(parent: int) -> None:
    # When the parent dies we are re-parented: getppid() changes. Exit at once, model and all.
    while os.getppid() == parent:
        time.sleep(_WATCH_INTERVAL)
    os._exit(0)


def build_app(llama_args: list[str], api_key: str | None):
    """llama-cpp-python's FastAPI app for ``llama_args``, with ``api_key`` and no CORS."""
    import argparse

    from fastapi.middleware.cors import CORSMiddleware
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(prog="chapyter_ext.local_model")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(llama_args)
    server_settings: Any = parse_model_from_args(ServerSettings, args)
    server_settings.api_key = api_key or None
    model_settings: Any = [parse_model_from_args(ModelSettings, args)]
    app = create_app(server_settings=server_settings, model_settings=model_settings)
    # Same-origin only: the browser never talks to the model, the Jupyter server does.
    app.user_middleware[:] = [m for m in app.user_middleware if m.cls is not CORSMiddleware]
    # The interactive docs need no key: nothing to offer on a server only we call.
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", "") not in _DOCS]
    return app, server_settings


def serve(llama_args: list[str], api_key: str | None) -> None:
    """Serve until killed."""
    import uvicorn

    app, settings = build_app(llama_args, api_key)
    uvicorn.run(app, host=settings.host, port=settings.port)


def main(argv: list[str]) -> None:
    """``--watch-parent PID -- LLAMA_ARGS``: serve until the parent process is gone."""
    if len(argv) < 3 or argv[0] != "--watch-parent" or argv[2] != "--":
        sys.exit("usage: python -m chapyter_ext.local_model --watch-parent PID -- LLAMA_ARGS")
    parent = int(argv[1])
    if os.getppid() != parent:
        sys.exit(0)  # the parent died before we got here
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # Out of the environment at once: nothing this process starts should inherit it.
    api_key = os.environ.pop(API_KEY_ENV, "")
    os.environ.pop("CONFIG_FILE", None)  # create_app would read its settings from there
    serve(argv[3:], api_key)


if __name__ == "__main__":
    main(sys.argv[1:])
