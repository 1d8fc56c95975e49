"""What the server uses instead of what its configuration asked for, each with one line.

A user's own ``jupyter_server_config.py`` comes after the administrator's files, and it may
hold a typo. Neither takes the extension down nor passes unnoticed: the server starts with
what can be used and says what it did in one line per setting, in the log and in
``GET config``'s ``notices``, which the chat shows.

- A setting the administrator locked (``Chapyter.locked``, :mod:`chapyter_ext.admin`) keeps
  the administrator's value: the ``Chapyter`` settings on their own, the app's
  (``ChapyterExtApp.models``, ``default_model``, ...) through :func:`hold_app_locks`.
- A value a setting refuses: that setting takes the administrator's value, else its default
  (``Chapyter(lenient=True)``, ``ChapyterExtApp._load_config``,
  :func:`chapyter_ext.admin.fall_back`).
- ``ChapyterExtApp.mcp_servers`` locked: a user's own ``chapyter_ext_mcp.json`` adds no
  server either (:func:`mcp_files`).
- A model list that cannot be used as it is (:func:`model_registry`): an entry that is not a
  valid endpoint is left out; with none left, the administrator's list, else the one endpoint
  of ``Chapyter.model``; a default that is not in the list becomes the administrator's
  default, else the first.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..admin import SERVER, admin_config_dirs, admin_setting, hold
from ..endpoints import EndpointConfigError, ModelRegistry, build_endpoint
from ..mcp.config import CONFIG_FILE

if TYPE_CHECKING:
    from traitlets import HasTraits

    from ..config import Chapyter

__all__ = ["hold_app_locks", "mcp_files", "model_registry"]

log = logging.getLogger(__name__)


def hold_app_locks(app: HasTraits, settings: type[Chapyter]) -> list[str]:
    """Hold the app's settings that ``Chapyter.locked`` names (``ChapyterExtApp.name``) at the
    administrator's values; one line per setting replaced.

    Only chapyter-ext's own: the ones every Jupyter app has (``log_level``, ``open_browser``,
    ...) are read before the extension starts, so a lock on them could not hold."""
    locked = dict(settings.admin_locks().server)
    own = type(app).class_own_traits(config=True)
    for name in sorted(set(locked) - set(own)):
        getattr(app, "log", log).warning(
            "chapyter-ext: Chapyter.locked names %r, not a setting of chapyter-ext's; ignored.",
            f"{SERVER}.{name}",
        )
        del locked[name]
    return hold(app, SERVER, locked)


def mcp_files(settings: type[Chapyter]) -> list[str] | None:
    """The ``chapyter_ext_mcp.json`` files the MCP servers come from: with
    ``ChapyterExtApp.mcp_servers`` locked the system-wide folders' only (a user's own file
    adds no server), else None (every folder of Jupyter's config path)."""
    if "mcp_servers" not in settings.admin_locks().server:
        return None
    return [os.path.join(folder, CONFIG_FILE) for folder in reversed(admin_config_dirs())]


def model_registry(
    models: Mapping[str, Any], default: str, settings: Chapyter
) -> tuple[ModelRegistry, list[str]]:
    """The registry of ``ChapyterExtApp.models`` and ``default_model`` as far as they can be
    used (see the module), and one line per thing that could not."""
    lines: list[str] = []
    usable = _usable(models, settings, lines)
    if models and not usable:
        found, theirs = admin_setting(SERVER, "models")
        fallback = _usable(theirs, settings, []) if found and isinstance(theirs, Mapping) else {}
        if fallback and fallback != dict(models):
            usable, instead = fallback, "the administrator's models are used instead"
        else:
            instead = "the one endpoint of Chapyter.model is used instead"
        lines.append(f"None of ChapyterExtApp.models can be used: {instead}.")
    registry = ModelRegistry.from_config(usable, "", settings)
    if default and default not in registry:
        found, theirs = admin_setting(SERVER, "default_model")
        chosen = theirs if found and theirs in registry else next(iter(registry))
        names = ", ".join(map(repr, registry))
        lines.append(
            f"ChapyterExtApp.default_model {default!r} is not one of the models ({names}); "
            f"{chosen!r} is used instead."
        )
        default = chosen
    if default:
        registry = ModelRegistry.from_config(usable, default, settings, local=registry.local)
    return registry, lines


def _usable(models: Any, settings: Chapyter, lines: list[str]) -> dict[str, Any]:
    """The entries of ``models`` that make a valid endpoint; a line for each that does not."""
    usable = {}
    for name, entry in models.items():
        try:
            build_endpoint(str(name), entry, settings)
        except EndpointConfigError as err:
            reason = " ".join(str(err).split()).rstrip(".")
            lines.append(f"ChapyterExtApp.{reason}; that model is left out.")
            continue
        usable[str(name)] = entry
    return usable
