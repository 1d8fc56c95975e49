"""Which endpoint answers: the one place that decides, for the kernel and the server alike.

``ChapyterExtApp.models`` maps a name the user picks in the sidebar to the fields of an
:class:`chapyter_ext.llm.Endpoint`. Fields an entry leaves out come from the shared
``Chapyter`` settings, except the credentials: the shared key and extra headers only go to the
shared base URL, so a ``local`` entry pointing at Ollama never receives the OpenAI key.

With no endpoint configured at all, the one entry is the bundled local model
(:mod:`chapyter_ext.local_model`), whose URL and key are known only once its server runs:
:meth:`ModelRegistry.resolve` / :meth:`ModelRegistry.aresolve` start it when it is the answer,
so no caller ever sends a request to a local model that is not running.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .llm import Endpoint

if TYPE_CHECKING:
    from .config import Chapyter
    from .local_model import LocalModelServer

__all__ = [
    "CREDENTIAL_FIELDS",
    "EndpointConfigError",
    "ModelRegistry",
    "build_endpoint",
    "describe_endpoint",
    "kernel_registry",
]

# Fields that hold or may hold secrets; only inherited by an entry aimed at the shared URL.
CREDENTIAL_FIELDS = ("api_key", "extra_headers")
_AUTO: Any = object()  # from_config's "decide for me" marker


class EndpointConfigError(ValueError):
    """``ChapyterExtApp.models`` or ``default_model`` names something that cannot work."""


def _endpoint_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(Endpoint)}


def _headers(value: Any) -> tuple[tuple[str, str], ...]:
    """Extra headers in the hashable form a frozen :class:`Endpoint` holds."""
    items = value.items() if isinstance(value, Mapping) else value
    return tuple((str(k), str(v)) for k, v in items)


def _check_types(name: str, entry: Mapping[str, Any]) -> None:
    """Refuse values of the wrong type now, not as an odd failure at the first request."""
    from .config import check_setting

    for key, value in entry.items():
        if key in ("base_url", "api_key", "model", "protocol"):
            ok = isinstance(value, str)
        elif key in ("max_tokens", "max_retries"):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif key in ("temperature", "timeout"):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif key == "extra_headers":
            ok = isinstance(value, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            )
        else:
            ok = True
        if not ok:
            raise EndpointConfigError(f"models[{name!r}][{key!r}] has a value of the wrong type.")
        problem = check_setting(key, value) if key != "protocol" else _check_protocol(value)
        if problem:
            raise EndpointConfigError(f"models[{name!r}][{key!r}]: {problem}")


def _check_protocol(value: str) -> str:
    from .llm import protocols

    known = protocols()
    return "" if value in known else f"no backend speaks {value!r} (installed: {', '.join(known)})"


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def build_endpoint(name: str, entry: Mapping[str, Any], settings: Chapyter) -> Endpoint:
    """The :class:`Endpoint` for one ``models`` entry, filled in from ``settings``.

    Unknown field names are an :class:`EndpointConfigError` (a typo would otherwise be
    silently ignored and the request sent somewhere unexpected).
    """
    if not isinstance(entry, Mapping):
        raise EndpointConfigError(f"models[{name!r}] must be a dict of endpoint fields.")
    unknown = set(entry) - _endpoint_fields()
    if unknown:
        raise EndpointConfigError(
            f"models[{name!r}] has unknown field(s) {sorted(unknown)}; "
            f"known: {sorted(_endpoint_fields())}."
        )
    _check_types(name, entry)
    shared = Endpoint.from_settings(settings)
    fields: dict[str, Any] = {
        f.name: getattr(shared, f.name) for f in dataclasses.fields(Endpoint) if f.init
    }
    backend = _backend(name, str(entry.get("protocol") or shared.protocol))
    default_url = getattr(backend, "default_base_url", "") if backend else ""
    base_url = str(entry.get("base_url") or default_url or shared.base_url)
    if not _same_url(base_url, shared.base_url):
        for key in CREDENTIAL_FIELDS:
            fields[key] = "" if key == "api_key" else ()
    fields.update(entry)
    fields["base_url"] = base_url
    fields["model"] = str(entry.get("model") or name)
    fields["extra_headers"] = _headers(fields.get("extra_headers") or ())
    key_env = getattr(backend, "key_env", "") if backend else ""
    if not fields.get("api_key") and key_env:
        import os

        fields["api_key"] = os.environ.get(key_env, "")  # its own key, kept server-side
    try:
        return Endpoint(**fields)
    except (TypeError, ValueError) as err:
        raise EndpointConfigError(f"models[{name!r}] is not a valid endpoint: {err}") from None


def _backend(name: str, protocol: str) -> Any:
    """The backend of a non-OpenAI entry (its default URL and key variable), else None."""
    if protocol == "openai":
        return None
    from .llm import LLMError, backend_for

    try:
        return backend_for(Endpoint("", protocol=protocol))
    except LLMError as err:
        raise EndpointConfigError(f"models[{name!r}]: {err}") from None


class ModelRegistry:
    """The named endpoints, in configuration order, and which one is the default."""

    def __init__(
        self,
        endpoints: Mapping[str, Endpoint],
        default: str,
        *,
        local: LocalModelServer | None = None,
        served_local: bool = False,
    ) -> None:
        from .local_model import LOCAL_MODEL_NAME

        if not endpoints:
            raise EndpointConfigError("No model endpoint is configured.")
        if default not in endpoints:
            raise EndpointConfigError(f"default_model {default!r} is not one of {list(endpoints)}.")
        self._endpoints = dict(endpoints)
        self.default = default
        #: The bundled local model's server, behind the entry named LOCAL_MODEL_NAME.
        self.local = local if LOCAL_MODEL_NAME in self._endpoints else None
        #: A kernel's one entry is the Jupyter server's model route, and the bundled model
        #: answers behind it (the server said so): its profile, without a server of its own.
        self.served_local = served_local

    @classmethod
    def from_config(
        cls,
        models: Mapping[str, Mapping[str, Any]],
        default: str,
        settings: Chapyter,
        *,
        local: LocalModelServer | None = _AUTO,
    ) -> ModelRegistry:
        """Build from the ``models`` and ``default_model`` traits and the shared settings.

        With no ``models``: the bundled local model when nothing is configured and it is
        installed (see :func:`chapyter_ext.local_model.use_local_model`), else the one endpoint
        of the shared settings, named after its model. An empty ``default`` means the first
        entry. ``local`` (for tests) gives the local model's server instead of deciding.
        """
        from .local_model import LOCAL_MODEL_NAME, local_endpoint, server_for, use_local_model

        if local is _AUTO:
            local = server_for(settings) if not models and use_local_model(settings) else None
        if models:
            endpoints = {str(n): build_endpoint(str(n), e, settings) for n, e in models.items()}
        elif local is not None:
            endpoints = {LOCAL_MODEL_NAME: local_endpoint(settings)}
        else:
            shared = Endpoint.from_settings(settings)
            endpoints = {shared.model: shared}
        return cls(endpoints, default or next(iter(endpoints)), local=local)

    def __iter__(self) -> Iterator[str]:
        return iter(self._endpoints)

    def __len__(self) -> int:
        return len(self._endpoints)

    def __contains__(self, name: object) -> bool:
        return name in self._endpoints

    def is_local(self, name: str | None) -> bool:
        """Whether ``name`` (or the default, for an empty one) is the bundled local model
        (here, or behind the server's model route)."""
        if self.served_local and self._name(name) == self.default:
            return True
        return self.local is not None and self._name(name) == self._local_name()

    def model_name(self, name: str | None, *, model: str | None = None) -> str:
        """The model :meth:`resolve` will ask for, without starting anything (for progress)."""
        endpoint = self._endpoints[self._name(name)]
        return endpoint.model if self.is_local(name) else model or endpoint.model

    def resolve(self, name: str | None, *, model: str | None = None) -> tuple[str, Endpoint]:
        """``(name, endpoint)`` for ``name``, or for the default when ``name`` is empty.

        Starts the local model's server (blocking, seconds the first time) when it is the
        endpoint. ``model`` asks the endpoint for another model (ignored by the local server,
        which has one). Unknown name: :class:`KeyError`; the local model cannot start:
        :class:`chapyter_ext.local_model.LocalModelError` (an ``LLMError``).
        """
        name = self._name(name)
        endpoint = self._endpoints[name]
        local = self._local_behind(name)
        if local is not None:
            return name, self._with_state(endpoint, local.ensure())
        return name, dataclasses.replace(endpoint, model=model) if model else endpoint

    async def aresolve(self, name: str | None, *, model: str | None = None) -> tuple[str, Endpoint]:
        """:meth:`resolve` for the event loop: the local model starts in a thread."""
        name = self._name(name)
        endpoint = self._endpoints[name]
        local = self._local_behind(name)
        if local is not None:
            return name, self._with_state(endpoint, await local.aensure())
        return name, dataclasses.replace(endpoint, model=model) if model else endpoint

    def public_info(self) -> list[dict[str, Any]]:
        """What the browser may know of each endpoint: no key, no header values, no full URL."""
        from .local_model import NOTICE

        info: list[dict[str, Any]] = []
        for name, ep in self._endpoints.items():
            entry: dict[str, Any] = {"name": name, "model": ep.model, "host": ep.host}
            local = self._local_behind(name)
            if local is not None:
                running = local.state or local.running()
                if running is not None:
                    entry["host"] = self._with_state(ep, running).host
                entry.update(local=True, notice=NOTICE)
            info.append(entry)
        return info

    def secrets(self) -> tuple[str, ...]:
        """Every key and extra header value in use, for redaction before anything is stored."""
        found: set[str] = set()
        for ep in self._endpoints.values():
            if ep.api_key:
                found.add(ep.api_key)
            found.update(v for _, v in _headers(ep.extra_headers) if v)
        if self.local is not None and self.local.api_key:
            found.add(self.local.api_key)
        return tuple(sorted(found))

    def close(self) -> None:
        """Stop the local model's server if this process started it (waits a few seconds)."""
        if self.local is not None:
            self.local.stop()

    async def aclose(self) -> None:
        """:meth:`close` off the event loop."""
        if self.local is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.local.stop)

    # -- internals ---------------------------------------------------------------------------

    def _name(self, name: str | None) -> str:
        return name or self.default

    def _local_behind(self, name: str) -> LocalModelServer | None:
        if self.local is not None and self._name(name) == self._local_name():
            return self.local
        return None

    def _local_name(self) -> str:
        from .local_model import LOCAL_MODEL_NAME

        return LOCAL_MODEL_NAME

    @staticmethod
    def _with_state(endpoint: Endpoint, state: Any) -> Endpoint:
        # The port and key are only known once the server runs.
        return dataclasses.replace(endpoint, base_url=state.base_url, api_key=state.api_key)


def kernel_registry(settings: Chapyter) -> ModelRegistry:
    """The kernel's endpoints: the Jupyter server's model route when the server that started
    the kernel holds the key (``Chapyter.served``), else the one of ``settings``, or the
    bundled local model."""
    if settings.served:
        import os

        endpoint = Endpoint.from_settings(settings)
        local = os.environ.get("CHAPYTER_SERVER_LOCAL") == "1"
        return ModelRegistry({endpoint.model: endpoint}, endpoint.model, served_local=local)
    return ModelRegistry.from_config({}, "", settings)


def describe_endpoint(settings: Chapyter) -> list[str]:
    """The lines of ``%ai status`` about the endpoint (never the key itself)."""
    from .local_model import HOST, INSTALL_HINT, LOCAL_MODEL_NAME, NOTICE

    s = settings
    context = f"on, budget {s.context_budget} characters" if s.send_context else "off"
    registry = kernel_registry(settings)
    if registry.local is not None:
        running = registry.local.running()
        state = f"{HOST}:{running.port}, running" if running else "starts on first use"
        return [
            f"endpoint: bundled local model ({state}): no endpoint is configured",
            f"model:    {LOCAL_MODEL_NAME}",
            "api key:  generated for the local server (kept in Jupyter's runtime directory)",
            f"context:  {context}",
            f"note:     {NOTICE}",
            *(
                [
                    "review:   its code waits below for your review, not run "
                    "(setting: Local review, Chapyter.local_review)"
                ]
                if s.local_review
                else []
            ),
        ]
    if s.served:
        local = " (the bundled local model answers there)" if registry.served_local else ""
        lines = [
            f"endpoint: the Jupyter server's model route ({s.endpoint_host}){local}",
            f"model:    {s.model}",
            "api key:  none in this kernel: the server calls the model with its own key "
            "(setting: Chapyter.kernel_keys)",
            "path:     through the Jupyter server that started this kernel",
            f"context:  {context}",
        ]
        if s.locked:
            lines.append(f"locked:   {', '.join(s.locked)} (by the administrator: Chapyter.locked)")
        return lines
    key = (
        "set: this kernel holds the key"
        if s.api_key
        else "not set (OPENAI_API_KEY or %config Chapyter.api_key)"
    )
    lines = [
        f"endpoint: {s.endpoint_host}",
        f"model:    {s.model}",
        f"api key:  {key}",
        "path:     direct: this kernel calls the endpoint with its own settings (a kernel the "
        "server did not start, or Chapyter.kernel_keys)",
        f"context:  {context}",
    ]
    if s.locked:
        lines.append(f"locked:   {', '.join(s.locked)} (by the administrator: Chapyter.locked)")
    if s.local_model and not s.base_url and not s.api_key:
        lines.append(
            "note:     no endpoint is configured: set OPENAI_API_KEY, or "
            f"{INSTALL_HINT} for a tiny model that runs offline."
        )
    return lines
