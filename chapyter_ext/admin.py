"""What the administrator fixed: settings locked in system-wide config files.

Jupyter and IPython read config files from the user's folder after the system-wide ones, so a
user's ``c.Chapyter.agent_policy = "never"`` overrides the administrator's ``"ask"``. A setting
named in ``c.Chapyter.locked`` *in a system-wide file* holds against that: a user's value may
be stricter (an approval policy that asks more, a lower cap, a feature turned off), never
looser; any other locked setting keeps the administrator's value exactly (a list or a dict
whole: a user's entries are neither added nor merged). ``locked`` names ``Chapyter`` settings
(``"agent_policy"`` or ``"Chapyter.agent_policy"``) and the server's (``"ChapyterExtApp.models"``,
``"ChapyterExtApp.default_model"``, ...); ``"*"`` locks every setting the system-wide files
set in those two sections. System-wide means every config folder but the user's own:
``JUPYTER_CONFIG_PATH``, ``{sys.prefix}/etc/jupyter``, ``/usr/local/etc/jupyter``,
``/etc/jupyter``, and IPython's ``{sys.prefix}/etc/ipython``, ``/usr/local/etc/ipython``,
``/etc/ipython``; ``locked`` in a user's own file is ignored.

Each setting a lock or a refused value replaces is one line (:func:`hold`, :func:`fall_back`)
that names it and never shows a secret: the server logs it and the chat shows it.

This keeps settings from being loosened by configuration; it is not a sandbox (whoever can run
code in their own server can run anything there).
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from traitlets import HasTraits, TraitError
from traitlets.config import Configurable

__all__ = [
    "EVERY",
    "SERVER",
    "AdminLocks",
    "admin_config_dirs",
    "admin_locks",
    "admin_setting",
    "fall_back",
    "hold",
    "shown",
    "stricter",
]

log = logging.getLogger(__name__)

#: The server's settings class, whose settings ``Chapyter.locked`` names as ``SERVER.name``.
SERVER = "ChapyterExtApp"
#: In ``Chapyter.locked``: every setting the system-wide files set (``Chapyter`` and ``SERVER``).
EVERY = "*"

#: A ``Chapyter`` trait's ``lock`` metadata says which user values a lock still allows:
#: ``"lower"`` (a cap: a lower value is stricter), ``"on"`` / ``"off"`` (a switch whose strict
#: position is that one: trials on, a feature off), or the words from strictest to loosest
#: (``("ask", "risky", "never")``). Without it a locked setting keeps the administrator's value.
_SWITCHES = {"on": True, "off": False}


def _order(lock: Any) -> tuple[str, ...]:
    return tuple(lock) if isinstance(lock, (tuple, list)) else ()


#: Settings whose values are never shown (a dict shows its keys only, whatever it is).
_SECRET = frozenset({"api_key", "extra_headers"})
#: The config files whose sections count (server, any Jupyter app, IPython, kernels).
_FILES = ("jupyter_config", "jupyter_server_config", "ipython_config", "ipython_kernel_config")


class _Default:
    """A setting locked without a value in the system-wide files: its default holds."""

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT: Any = _Default()


def stricter(lock: Any, value: Any, floor: Any) -> Any:
    """``value`` if it is at least as strict as ``floor`` for a setting whose ``lock``
    metadata is ``lock``, else ``floor``.

    For a setting without an order (a model name, a URL, a list, a dict) only ``floor`` itself
    is allowed.
    """
    order = _order(lock)
    if order:
        rank = {word: i for i, word in enumerate(order)}
        given = str(value).lower()
        if given in rank and rank[given] <= rank.get(str(floor).lower(), len(order)):
            return given
        return floor
    if lock == "lower":
        try:
            return min(value, floor)
        except TypeError:
            return floor
    if lock in _SWITCHES:
        return value if value == _SWITCHES[lock] else floor
    return floor


def shown(name: str, value: Any) -> str | None:
    """``value`` of setting ``name`` as a message may show it: a secret not at all (None), a
    dict by its keys, anything long clipped."""
    from .config_values import URL

    if name.rpartition(".")[2] in _SECRET:
        return None
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key!r}: …" for key in value) + "}"
    text = repr(URL(value)) if name.endswith("base_url") and isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _describe(name: str, floor: Any, lock: Any) -> str:
    """How a lock of ``name`` (its ``lock`` metadata) at ``floor`` reads: ``at least 'risky'
    (not 'never')``."""
    order = _order(lock)
    if str(floor).lower() in order:
        looser = order[order.index(str(floor).lower()) + 1 :]
        if looser:
            return f"at least {floor!r} (not {' or '.join(map(repr, looser))})"
        return f"{floor!r}"
    if lock == "lower":
        return f"at most {floor!r}"
    return shown(name, floor) or ""


@dataclass(frozen=True)
class AdminLocks:
    """The administrator's locked settings and their values: ``values`` the ``Chapyter``
    settings', ``server`` the ``ChapyterExtApp`` settings' (a value may be a placeholder for
    the setting's default, resolved by :func:`hold`)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    server: Mapping[str, Any] = field(default_factory=dict)
    #: Each locked ``Chapyter`` setting's ``lock`` metadata (what a lock still lets a user do).
    locks: Mapping[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.values) or bool(self.server)

    def names(self) -> list[str]:
        """Every locked setting: ``Chapyter``'s by name, then ``ChapyterExtApp.name``."""
        return [*sorted(self.values), *sorted(f"{SERVER}.{n}" for n in self.server)]

    def allowed(self, name: str, value: Any, settings: HasTraits | None = None) -> Any:
        """What ``value`` of ``name`` becomes under the locks (unchanged when not locked);
        ``settings``, the ``Chapyter`` instance, resolves a lock of a computed default."""
        if name not in self.values:
            return value
        floor = self.values[name]
        if floor is _DEFAULT and settings is not None:
            floor = _resolved(settings, name, floor)
        return stricter(self.locks.get(name), value, floor)

    def describe(self, name: str) -> str:
        """How the lock on ``name`` reads in a message (``''`` if it is not locked)."""
        if name not in self.values:
            return ""
        return _describe(name, self.values[name], self.locks.get(name))


def hold(
    obj: HasTraits, section: str, locked: Mapping[str, Any], given: Collection[str] | None = None
) -> list[str]:
    """Hold ``obj``'s settings (the ``section`` class's) that ``locked`` names at what the
    locks allow; one line for each setting ``given`` (by default: in ``obj.config``) whose
    value was replaced."""
    lines = []
    for name, value in locked.items():
        qualified = f"{section}.{name}"
        if not obj.has_trait(name) or not obj.trait_metadata(name, "config"):
            log.warning(
                "chapyter-ext: Chapyter.locked names %r, not a setting; ignored.", qualified
            )
            continue
        key = name if section != SERVER else qualified
        lock = obj.trait_metadata(name, "lock") if section != SERVER else None
        try:
            floor = _resolved(obj, name, value)
            current = getattr(obj, name)
            allowed = stricter(lock, current, floor)
            if allowed == current:
                continue
            setattr(obj, name, allowed)
        except TraitError as err:  # a bad value in the administrator's file
            log.warning("chapyter-ext: the locked %s cannot be applied: %s", qualified, err)
            continue
        if not (name in given if given is not None else _configured(obj, section, name)):
            # Nobody's own value: the default gave way to a lock whose value is in a file
            # this process does not load (a kernel reads jupyter_server_config for the locks
            # only). Nothing of the user's was overridden, so nothing to say.
            continue
        mine = shown(key, current)
        lines.append(
            f"{qualified} is locked by the administrator"
            + (f" to {_describe(key, floor, lock)}" if mine is not None else "")
            + (f": your {mine} is not used." if mine is not None else ": your value is not used.")
        )
    return lines


def _configured(obj: HasTraits, section: str, name: str) -> bool:
    """Whether a config file, the command line or ``%config`` set ``obj``'s ``section.name``."""
    config = getattr(obj, "config", None)
    return config is not None and section in config and name in config[section]


def fall_back(obj: HasTraits, section: str, name: str, err: TraitError) -> str:
    """A value of ``obj``'s setting ``name`` was refused (``err``): it takes the
    administrator's value where the system-wide files set one (else it keeps what it had,
    its default); the one line saying so."""
    found, value = admin_setting(section, name)
    if found:
        try:
            setattr(obj, name, _resolved(obj, name, value))
            used = f"the administrator's {shown(name, getattr(obj, name)) or 'value'}"
        except TraitError:
            found = False
    if not found:
        used = f"the default {shown(name, getattr(obj, name)) or 'value'}"
    reason = " ".join(str(err).split()).rstrip(".")
    if f"{section}.{name}" not in reason:
        reason = f"{section}.{name}: {reason}"
    return f"{reason}; {used} is used instead."


def _resolved(obj: HasTraits, name: str, value: Any) -> Any:
    """A locked or administrator's ``value`` as ``obj`` would hold it: the default for a lock
    without a value, ``.append``/``.update`` of a Python config file applied to the default."""
    from traitlets.config.loader import LazyConfigValue

    if value is _DEFAULT:
        return obj.trait_defaults(name)
    if isinstance(value, LazyConfigValue):
        return value.get_value(obj.trait_defaults(name))
    return copy.deepcopy(value)


def admin_config_dirs() -> list[str]:
    """The system-wide config folders, highest precedence first (the user's own excluded)."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path

    user = os.path.realpath(jupyter_config_dir())
    dirs = [d for d in jupyter_config_path() if os.path.realpath(d) != user]
    try:
        from IPython.core.application import ENV_CONFIG_DIRS, SYSTEM_CONFIG_DIRS
    except ImportError:  # pragma: no cover (IPython is a dependency)
        ENV_CONFIG_DIRS, SYSTEM_CONFIG_DIRS = [], []
    for extra in (*ENV_CONFIG_DIRS, *SYSTEM_CONFIG_DIRS):
        if extra not in dirs:
            dirs.append(extra)
    return dirs


def admin_locks(settings: type[Configurable]) -> AdminLocks:
    """The locks of the system-wide config files (``Chapyter.locked``, ``settings`` being the
    ``Chapyter`` class) as they are now (read once per set of folders: a changed file takes
    effect at the next start)."""
    return _locks_in(tuple(admin_config_dirs()), settings)


def admin_setting(section: str, name: str) -> tuple[bool, Any]:
    """Whether the system-wide config files set ``section.name``, and to what."""
    values = _sections(tuple(admin_config_dirs())).get(section, {})
    return (name in values, values.get(name))


@lru_cache(maxsize=8)
def _locks_in(dirs: tuple[str, ...], settings: type[Configurable]) -> AdminLocks:
    sections = _sections(dirs)
    section, server = sections["Chapyter"], sections[SERVER]
    names = section.get("locked") or []
    if not isinstance(names, (list, tuple)):
        log.warning("chapyter-ext: Chapyter.locked must be a list of setting names; ignored.")
        return AdminLocks()
    if EVERY in names:
        names = [*names, *section, *(f"{SERVER}.{name}" for name in server)]
    traits = settings.class_traits(config=True)
    dynamic = getattr(settings, "_trait_default_generators", {})  # the @default methods
    values: dict[str, Any] = {}
    server_values: dict[str, Any] = {}
    for entry in names:
        owner, _, name = str(entry).rpartition(".")
        if entry in (EVERY, "locked") or name == "locked":
            continue
        if owner in ("", settings.__name__) and name in traits:
            # Locked without a value here: the default is what holds. A default computed when
            # the settings are made (the endpoint from OPENAI_BASE_URL, the key from
            # OPENAI_API_KEY, e.g. a hub's Spawner.environment) is resolved by hold() then.
            if name in section:
                values[name] = _lazy(section[name], traits[name].default())
            elif name in dynamic:
                values[name] = _DEFAULT
            else:
                values[name] = traits[name].default()
        elif owner == SERVER and name.isidentifier():
            server_values[name] = server.get(name, _DEFAULT)
        else:
            log.warning("chapyter-ext: Chapyter.locked names %r, not a setting; ignored.", entry)
    locks = {name: traits[name].metadata.get("lock") for name in values}
    return AdminLocks(values, server_values, locks)


def _lazy(value: Any, default: Any) -> Any:
    from traitlets.config.loader import LazyConfigValue

    return value.get_value(default) if isinstance(value, LazyConfigValue) else value


@lru_cache(maxsize=8)
def _sections(dirs: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The ``Chapyter`` and ``ChapyterExtApp`` sections of the config files in ``dirs``,
    merged by precedence."""
    from traitlets.config.loader import Config, JSONFileConfigLoader, PyFileConfigLoader

    merged = Config()
    for folder in reversed(dirs):  # lowest precedence first: later ones override
        for name in _FILES:
            # As traitlets reads them: JSON, then Python (``.d`` folders only enable extensions).
            for path in (os.path.join(folder, f"{name}.json"), os.path.join(folder, f"{name}.py")):
                if not os.path.isfile(path):
                    continue
                json_file = path.endswith(".json")
                loader_class = JSONFileConfigLoader if json_file else PyFileConfigLoader
                loader = loader_class(os.path.basename(path), path=os.path.dirname(path), log=log)
                try:
                    merged.merge(loader.load_config())
                except Exception as err:  # a broken file is the server's to report
                    log.debug("chapyter-ext: could not read %s: %s", path, err)
    found = {}
    for section in ("Chapyter", SERVER):
        values = merged.get(section, {})
        found[section] = dict(values) if isinstance(values, Mapping) else {}
    return found
