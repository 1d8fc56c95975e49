"""Kernels the server starts reach the model through the server, with a credential of their
own, never with the key.

The Jupyter server holds the endpoint's key (per user on a hub). When it starts a kernel, this
module gives that kernel's environment:

- **no secret the server uses**: ``OPENAI_API_KEY`` and any variable whose value holds one of
  the server's secrets (a key under another name, an extra header's value) are left out;
- **a credential** (``CHAPYTER_KERNEL_TOKEN``) good only for the model route of this server
  (:mod:`.model_proxy`) and only while that kernel lives, and the route's address
  (``CHAPYTER_SERVER_URL``, this server's own loopback address under its ``base_url``);
- what the kernel needs to choose its prompts: the server's default model
  (``CHAPYTER_SERVER_MODEL``) and whether it is the bundled local model
  (``CHAPYTER_SERVER_LOCAL``).

The kernel's ``Chapyter`` settings take these as their defaults (``config.py``), so ``%%ai``,
``%ai models`` and everything the kernel asks of a model go through the server unchanged.
``Chapyter.kernel_keys = True`` gives kernels the key as before (for users whose own code
calls a model SDK with it); ``%ai status`` then says the kernel holds one.

The kernel manager's ``start_kernel`` is wrapped once (its own ``env`` argument is the only
way a caller chooses a kernel's environment). Kernels the server does not start (a Kernel or
Enterprise Gateway's, terminal IPython, nbclient) keep their own configuration.
"""

from __future__ import annotations

import os
import secrets as random
from collections.abc import Callable, Iterable
from typing import Any

#: The variables a kernel of this server gets (read by ``config.py`` in the kernel).
ENV_URL = "CHAPYTER_SERVER_URL"
ENV_TOKEN = "CHAPYTER_KERNEL_TOKEN"
ENV_MODEL = "CHAPYTER_SERVER_MODEL"
ENV_LOCAL = "CHAPYTER_SERVER_LOCAL"
#: What every kernel credential starts with (the route tells it from a Jupyter token).
TOKEN_PREFIX = "chapyter-kernel-"
#: Variables never passed on, whatever their value: the endpoint's key.
SECRET_VARIABLES = ("OPENAI_API_KEY",)
#: The route's path under the server's ``base_url``.
ROUTE = "chapyter-ext/v1"


class KernelAccess:
    """The credentials of the kernels this server started, and their environment."""

    def __init__(
        self,
        kernel_manager: Any,
        secrets: Iterable[str],
        *,
        server_url: Callable[[], str | None],
        keep_keys: bool,
        model: str,
        local: bool,
        models_locked: bool = False,
        log: Any = None,
    ) -> None:
        self.kernel_manager = kernel_manager
        self.secrets = tuple(s for s in secrets if s)
        #: This server's own address (with its base_url), or None where kernels cannot
        #: reach it over HTTP (a Unix socket): they then keep their configuration.
        self.server_url = server_url
        self.keep_keys = keep_keys
        self.model = model
        self.local = local
        #: The administrator locks the models (``Chapyter.locked`` holds ``model``,
        #: ``base_url`` or the app's ``models``/``default_model``): the route offers only the
        #: registry's.
        self.models_locked = models_locked
        self.log = log
        self._tokens: dict[str, str] = {}  # credential -> kernel id
        self._installed = False

    # -- the credentials ----------------------------------------------------------------------

    def issue(self, kernel_id: str) -> str:
        """A new credential for ``kernel_id`` (a kernel restarted keeps its environment, and so
        its credential)."""
        running = self._running()  # forget the credentials of kernels gone meanwhile
        self._tokens = {t: k for t, k in self._tokens.items() if k in running}
        token = TOKEN_PREFIX + random.token_urlsafe(32)
        self._tokens[token] = kernel_id
        return token

    def kernel_for(self, token: str) -> str | None:
        """The kernel a credential belongs to, while that kernel runs; None otherwise (an
        unknown credential, or one whose kernel was shut down: forgotten then)."""
        kernel_id = self._tokens.get(token)
        if kernel_id is None:
            return None
        if kernel_id not in self._running():
            del self._tokens[token]
            return None
        return kernel_id

    def _running(self) -> set[str]:
        try:
            return set(self.kernel_manager.list_kernel_ids())
        except Exception:  # a kernel manager that cannot say: no kernel is vouched for
            return set()

    # -- the environment ------------------------------------------------------------------------

    def environment(self, env: dict[str, str], kernel_id: str) -> dict[str, str]:
        """``env`` as the kernel ``kernel_id`` gets it (see the module)."""
        url = self.server_url()
        if self.keep_keys or url is None:
            return env
        kept = {
            name: value
            for name, value in env.items()
            if name not in SECRET_VARIABLES and not any(s in value for s in self.secrets)
        }
        kept[ENV_URL] = f"{url.rstrip('/')}/{ROUTE}"
        kept[ENV_TOKEN] = self.issue(kernel_id)
        kept[ENV_MODEL] = self.model
        if self.local:
            kept[ENV_LOCAL] = "1"
        else:
            kept.pop(ENV_LOCAL, None)
        return kept

    def install(self) -> None:
        """Wrap the kernel manager's ``start_kernel`` so every new kernel gets its
        environment from :meth:`environment`. Idempotent."""
        if self._installed or self.kernel_manager is None:
            return
        start = self.kernel_manager.start_kernel
        access = self

        async def start_kernel(*args: Any, kernel_id: str | None = None, **kwargs: Any) -> str:
            import inspect
            import uuid

            if kernel_id is None or kernel_id not in access.kernel_manager:
                kernel_id = kernel_id or str(uuid.uuid4())
                env = kwargs.get("env")
                base = dict(env) if isinstance(env, dict) else dict(os.environ)
                kwargs["env"] = access.environment(base, kernel_id)
            started = start(*args, kernel_id=kernel_id, **kwargs)
            return await started if inspect.isawaitable(started) else started

        self.kernel_manager.start_kernel = start_kernel
        self._installed = True


def server_url(serverapp: Any) -> str | None:
    """This server's loopback address with its ``base_url`` (what its own kernels connect
    to), or None when it listens on a Unix socket."""
    if serverapp is None or str(getattr(serverapp, "sock", None) or ""):
        return None
    scheme = "https" if getattr(serverapp, "certfile", "") else "http"
    ip = str(getattr(serverapp, "ip", "") or "")
    if ip in ("", "0.0.0.0", "*", "localhost"):
        host = "127.0.0.1"
    elif ip == "::":
        host = "[::1]"
    else:  # the one address it listens on
        host = f"[{ip}]" if ":" in ip else ip
    base = str(getattr(serverapp, "base_url", "/") or "/")
    return f"{scheme}://{host}:{serverapp.port}{base}"
