"""``chapyter-ext/v1/...``: an OpenAI-compatible route that forwards a kernel's model calls to
the configured endpoint with the server's key, so the key never enters a kernel.

Routes: ``POST v1/chat/completions`` (streamed or not), ``POST v1/completions`` (fill in the
middle), ``GET v1/models``, and ``POST v1/warm`` (the kernel's hint that ``%%ai`` may
follow: :mod:`.warm`, nothing forwarded). A kernel this server started authenticates with its
own credential (``Authorization: Bearer chapyter-kernel-…``, :mod:`.kernel_access`), good only
while that kernel runs; anything else needs Jupyter's authentication, as every route of the
extension.

Which endpoint answers is the server's registry's decision (:mod:`chapyter_ext.endpoints`):
the request's ``model`` names an entry (or an entry's model id), and an unknown model goes to
the default entry, unless the administrator locked the model (``Chapyter.locked`` holding
``model``, ``base_url``, ``ChapyterExtApp.models`` or ``ChapyterExtApp.default_model``): then
only the registry's models are offered and any other is refused in one line. An entry of
another protocol (Anthropic's) is asked through its backend and answered in OpenAI's wire
format (:mod:`.model_translate`). An OpenAI entry's answer is relayed as it comes (stream chunks
as they arrive); an error body is redacted first (an endpoint may quote part of the key in
it). The usage a streamed answer reports is counted for the kernel's notebook.
"""

from __future__ import annotations

import json
from typing import Any

import tornado.iostream
import tornado.web
from jupyter_server.auth import User

from ..llm.errors import RELAYED_HEADER
from ..llm.usage import Usage
from .base_handler import STATUS_KIND, ChapyterHandler
from .kernel_access import ROUTE, TOKEN_PREFIX
from .model_translate import translate
from .warm import start_warm_up

#: What a kernel may ask for: the path under the route and its method.
PATHS = {"chat/completions": "POST", "completions": "POST", "models": "GET", "warm": "POST"}
#: Hop-by-hop and framing headers that are the proxy's own business.
_DROPPED = frozenset(
    {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}
)


class ProxyError(Exception):
    """A request refused here: its status and one line (OpenAI's error shape)."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def resolve_model(registry: Any, asked: str, *, locked: bool) -> tuple[str, str | None]:
    """``(entry name, model to ask for or None)`` for the model a kernel named: an entry's
    name or model id, else (not locked) that model at the default entry; none named, the
    default entry."""
    if not asked:
        return registry.default, None
    for name in registry:
        if asked == name:
            return name, None
    for name in registry:
        if asked == registry.model_name(name):
            return name, None
    if locked:
        offered = ", ".join(sorted(set(registry) | {registry.model_name(n) for n in registry}))
        raise ProxyError(
            403,
            f"The model {asked!r} is not offered here (your administrator locks the models): "
            f"ask for one of {offered}.",
            "permission_error",
        )
    if registry.is_local(None):  # the bundled model answers whatever the name
        return registry.default, None
    return registry.default, asked or None


class ModelProxyHandler(ChapyterHandler):
    """The route (see the module); ``path`` is what follows ``v1/``. Bodies stream in and
    are bounded as every route's (:class:`.ChapyterHandler`); errors carry OpenAI's ``type``
    next to the extension's ``kind``."""

    #: The kernel whose credential authenticated the request (None: a Jupyter user).
    kernel_id: str | None = None

    async def admit(self) -> None:
        """A kernel's credential, or Jupyter's authentication as every route (refused on the
        headers, the connection kept as every route's refusal keeps it)."""
        scheme, _, token = self.request.headers.get("Authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX):
            await super().admit()
            return
        access = getattr(self.extensionapp, "kernel_access", None)
        kernel = access.kernel_for(token) if access is not None else None
        if kernel is None:
            raise tornado.web.HTTPError(
                403, "This kernel's model credential is not valid any more."
            )
        self.kernel_id = kernel
        self.current_user = self._jupyter_current_user = User(username=f"kernel-{kernel}")

    def check_xsrf_cookie(self) -> None:
        if self.kernel_id is None:  # a kernel's credential is a header no browser sends
            super().check_xsrf_cookie()

    def refuse(self, status: int, message: str, kind: str) -> None:
        """Finish with one line in OpenAI's error shape (and the extension's ``kind``)."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        error = {"message": message, "type": kind, "kind": STATUS_KIND.get(status, "error")}
        self.finish(json.dumps({"error": error}))

    @tornado.web.authenticated
    async def get(self, path: str) -> None:
        """``v1/models``: the models offered (forwarded to the default endpoint, and only the
        registry's when the administrator locks them)."""
        await self._forward("GET", path, None)

    @tornado.web.authenticated
    async def post(self, path: str) -> None:
        """``v1/chat/completions`` and ``v1/completions``, forwarded; ``v1/warm``, the hint."""
        await self._forward("POST", path, self.json_body())

    async def _forward(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        app: Any = self.extensionapp
        if PATHS.get(path) != method:
            self.refuse(404, f"No such route: {method} {ROUTE}/{path}.", "invalid_request_error")
            return
        if path == "warm":  # a kernel loaded the extension: %%ai may follow (server/warm.py)
            self.finish({"warm_up": start_warm_up(app)})
            return
        registry, locked = app.registry, app.kernel_access.models_locked
        try:
            name, model = resolve_model(
                registry, str((body or {}).get("model") or ""), locked=locked
            )
        except ProxyError as err:
            self.refuse(err.status, err.message, err.kind)
            return
        if method == "GET" and locked:
            models = sorted({*registry, *(registry.model_name(n) for n in registry)})
            self.finish({"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
            return
        name, endpoint = await registry.aresolve(name, model=model)
        if endpoint.protocol != "openai":  # asked through its backend, answered as OpenAI
            await translate(self, endpoint, name, path, body, app)
            return
        if body is not None:
            body = {**body, "model": endpoint.model}
        await relay(self, endpoint, method, path, body, app)


async def relay(
    handler: Any, endpoint: Any, method: str, path: str, body: dict[str, Any] | None, app: Any
) -> None:
    """Send the request upstream with the endpoint's key and headers; relay the answer."""
    from ..llm.clients import async_http, sdk_loaded

    await sdk_loaded()  # off the event loop, if nothing loaded it yet
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    accept = handler.request.headers.get("Accept")
    if accept:
        headers["Accept"] = accept
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    headers.update(dict(endpoint.extra_headers))
    url = f"{endpoint.base_url.rstrip('/')}/{path}"
    content = json.dumps(body).encode() if body is not None else None
    http = async_http()
    redact = app.chat.redact
    streamed = bool(body and body.get("stream"))
    counter = UsageCounter() if streamed else None
    try:
        async with http.stream(
            method, url, headers=headers, content=content, timeout=endpoint.timeout
        ) as upstream:
            handler.set_status(upstream.status_code)
            for key, value in upstream.headers.items():
                if key.lower() not in _DROPPED:
                    handler.set_header(key, value)
            # The kernel's errors name the endpoint, not this server (llm.errors).
            handler.set_header(RELAYED_HEADER, endpoint.host)
            if upstream.status_code >= 400 or not streamed:
                data = await upstream.aread()
                if upstream.status_code >= 400:
                    data = redact(data.decode("utf-8", "replace")).encode()
                else:
                    counter = UsageCounter()
                    counter.feed_json(data)
                handler.finish(data)
            else:
                # Each chunk is a small write of its own: without this, the next one waits for
                # the kernel to ACK the last (Nagle), which Linux may delay.
                stream = getattr(handler.request.connection, "stream", None)
                if stream is not None and hasattr(stream, "set_nodelay"):
                    stream.set_nodelay(True)
                handler.set_header("X-Accel-Buffering", "no")
                async for chunk in upstream.aiter_bytes():
                    counter.feed(chunk)  # type: ignore[union-attr]
                    handler.write(chunk)
                    await handler.flush()
                handler.finish()
    except tornado.iostream.StreamClosedError:
        return  # the kernel went away: the upstream stream is closed on the way out
    except Exception as err:
        if not handler._headers_written:
            handler.set_header(RELAYED_HEADER, endpoint.host)
            message = redact(f"The model endpoint could not be reached: {err}")
            handler.refuse(502, " ".join(message.split()), "api_error")
        return
    if counter is not None and counter.usage is not None:
        await app.count_kernel_usage(handler.kernel_id, endpoint.model, counter.usage)


class UsageCounter:
    """The usage an answer reports: in its JSON, or in the last chunks of a stream."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self._tail = b""

    def feed_json(self, data: bytes) -> None:
        try:
            value = json.loads(data)
        except ValueError:
            return
        if isinstance(value, dict):
            self.usage = Usage.from_api(value.get("usage")) or self.usage

    def feed(self, chunk: bytes) -> None:
        lines = (self._tail + chunk).split(b"\n")
        self._tail = lines.pop()
        for line in lines:
            if line.startswith(b"data:") and b'"usage"' in line:
                self.feed_json(line[5:].strip())


def proxy_handlers() -> list[tuple[str, type]]:
    """The model route's handler (under the extension's ``chapyter-ext/v1``)."""
    return [(rf"{ROUTE}/(.+)", ModelProxyHandler)]
