"""Named model endpoints the chat can use, built from configuration: pure logic, no tornado.

``ChapyterExtApp.models`` maps a name the user picks in the sidebar to the fields of an
:class:`chapyter_ext.llm.Endpoint`. Fields an entry leaves out come from the shared
``Chapyter`` settings, except the credentials: the shared key and extra headers only go to the
shared base URL, so a ``local`` entry pointing at Ollama never receives the OpenAI key.

With no endpoint configured at all, the one entry is the bundled local model
(:mod:`chapyter_ext.local_model`), whose URL is known only once its server has started.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..config import Chapyter
from ..llm import Endpoint
from ..local_model import LOCAL_MODEL_NAME, NOTICE, local_endpoint

if TYPE_CHECKING:
    from ..local_model import LocalModelServer

# Fields that hold or may hold secrets; only inherited by an entry aimed at the shared URL.
CREDENTIAL_FIELDS = ("api_key", "extra_headers")


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
    for key, value in entry.items():
        if key in ("base_url", "api_key", "model"):
            ok = isinstance(value, str)
        elif key in ("max_tokens", "max_retries"):
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif key in ("temperature", "timeout"):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        elif key == "extra_headers":
            ok = isinstance(value, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            )
        else:
            ok = True
        if not ok:
            raise EndpointConfigError(f"models[{name!r}][{key!r}] has a value of the wrong type.")


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
    base_url = str(entry.get("base_url") or shared.base_url)
    if not _same_url(base_url, shared.base_url):
        for key in CREDENTIAL_FIELDS:
            fields[key] = "" if key == "api_key" else ()
    fields.update(entry)
    fields["base_url"] = base_url
    fields["model"] = str(entry.get("model") or name)
    fields["extra_headers"] = _headers(fields.get("extra_headers") or ())
    try:
        return Endpoint(**fields)
    except (TypeError, ValueError) as err:
        raise EndpointConfigError(f"models[{name!r}] is not a valid endpoint: {err}") from None


class ModelRegistry:
    """The named endpoints, in configuration order, and which one is the default."""

    def __init__(
        self,
        endpoints: Mapping[str, Endpoint],
        default: str,
        *,
        local: LocalModelServer | None = None,
    ) -> None:
        if not endpoints:
            raise EndpointConfigError("No model endpoint is configured.")
        if default not in endpoints:
            raise EndpointConfigError(f"default_model {default!r} is not one of {list(endpoints)}.")
        self._endpoints = dict(endpoints)
        self.default = default
        #: The bundled local model's server, behind the entry named LOCAL_MODEL_NAME.
        self.local = local if LOCAL_MODEL_NAME in self._endpoints else None

    @classmethod
    def from_config(
        cls,
        models: Mapping[str, Mapping[str, Any]],
        default: str,
        settings: Chapyter,
        *,
        local: LocalModelServer | None = None,
    ) -> ModelRegistry:
        """Build from the ``models`` and ``default_model`` traits and the shared settings.

        With no ``models``, the one endpoint of the shared settings is named after its model,
        or, given the ``local`` model's server, that model is the one entry.
        An empty ``default`` means the first entry.
        """
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

    def get(self, name: str | None) -> tuple[str, Endpoint]:
        """``(name, endpoint)`` for ``name``, or for the default when ``name`` is empty.

        An unknown name raises :class:`KeyError`.
        """
        name = name or self.default
        endpoint = self._endpoints[name]
        if self.is_local(name) and self.local.base_url:
            # The port is only known once the server runs (see ensure_local).
            endpoint = dataclasses.replace(endpoint, base_url=self.local.base_url)
        return name, endpoint

    def is_local(self, name: str | None) -> bool:
        """Whether ``name`` (or the default, for an empty one) is the bundled local model."""
        return self.local is not None and (name or self.default) == LOCAL_MODEL_NAME

    async def ensure_local(self, name: str | None) -> None:
        """Start (or find) the local model's server if ``name`` is that model, off the loop.

        Raises :class:`chapyter_ext.local_model.LocalModelError` (an ``LLMError``).
        """
        if self.local is not None and self.is_local(name):
            await self.local.aensure()

    def public_info(self) -> list[dict[str, Any]]:
        """What the browser may know of each endpoint: no key, no header values, no full URL."""
        info: list[dict[str, Any]] = []
        for name in self._endpoints:
            ep = self.get(name)[1]
            entry: dict[str, Any] = {"name": name, "model": ep.model, "host": ep.host}
            if self.is_local(name):
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
        return tuple(sorted(found))
