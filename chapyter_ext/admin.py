"""What the administrator fixed: ``Chapyter`` settings locked in system-wide config files.

Jupyter and IPython read config files from the user's folder after the system-wide ones, so a
user's ``c.Chapyter.agent_policy = "never"`` overrides the administrator's ``"ask"``. A setting
named in ``c.Chapyter.locked`` *in a system-wide file* holds against that: a user's value may
be stricter (an approval policy that asks more, a lower cap), never looser; any other locked
setting keeps the administrator's value. System-wide means every config folder but the user's
own: ``JUPYTER_CONFIG_PATH``, ``{sys.prefix}/etc/jupyter``, ``/usr/local/etc/jupyter``,
``/etc/jupyter``, and IPython's ``{sys.prefix}/etc/ipython``, ``/usr/local/etc/ipython``,
``/etc/ipython``; ``locked`` in a user's own file is ignored.

This keeps settings from being loosened by configuration; it is not a sandbox (whoever can run
code in their own server can run anything there).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from traitlets.config import Configurable

__all__ = ["AdminLocks", "admin_config_dirs", "admin_locks", "stricter"]

log = logging.getLogger(__name__)

#: Settings with an order: each tuple runs from strictest to loosest.
_ORDERED = {
    "agent_policy": ("ask", "risky", "never"),
    "run_policy": ("ask", "risky", "never"),
}
#: Caps: a lower value is stricter.
_CAPS = frozenset(
    {"agent_max_steps", "agent_local_max_steps", "agent_time_limit", "agent_result_chars"}
    | {"fix_retries", "trial_time_limit", "trial_memory_mb"}
)
#: Switches whose strict position is the one given (trials on: unproven code is tried first).
_STRICT_SWITCHES = {"trials": True}
#: The config files whose ``Chapyter`` section counts (server, any Jupyter app, IPython, kernels).
_FILES = ("jupyter_config", "jupyter_server_config", "ipython_config", "ipython_kernel_config")


def stricter(name: str, value: Any, floor: Any) -> Any:
    """``value`` if it is at least as strict as ``floor`` for setting ``name``, else ``floor``.

    For a setting without an order (a model name, a URL) only ``floor`` itself is allowed.
    """
    if name in _ORDERED:
        order = _ORDERED[name]
        rank = {word: i for i, word in enumerate(order)}
        given = str(value).lower()
        if given in rank and rank[given] <= rank.get(str(floor).lower(), len(order)):
            return given
        return floor
    if name in _CAPS:
        try:
            return min(value, floor)
        except TypeError:
            return floor
    if name in _STRICT_SWITCHES:
        return value if value == _STRICT_SWITCHES[name] else floor
    return floor


@dataclass(frozen=True)
class AdminLocks:
    """The administrator's locked settings and their values."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.values)

    def allowed(self, name: str, value: Any) -> Any:
        """What ``value`` of ``name`` becomes under the locks (unchanged when not locked)."""
        if name not in self.values:
            return value
        return stricter(name, value, self.values[name])

    def describe(self, name: str) -> str:
        """How the lock on ``name`` reads in a message (``'' `` if it is not locked)."""
        if name not in self.values:
            return ""
        floor = self.values[name]
        order = _ORDERED.get(name, ())
        if str(floor).lower() in order:
            looser = order[order.index(str(floor).lower()) + 1 :]
            if looser:
                return f"at least {floor!r} (not {' or '.join(map(repr, looser))})"
            return f"{floor!r}"
        if name in _CAPS:
            return f"at most {floor!r}"
        return f"{floor!r}"


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
    """The locks on ``settings`` (the ``Chapyter`` class) of the system-wide config files as
    they are now (read once per set of folders: a changed file takes effect at the next
    start)."""
    return _locks_in(tuple(admin_config_dirs()), settings)


@lru_cache(maxsize=8)
def _locks_in(dirs: tuple[str, ...], settings: type[Configurable]) -> AdminLocks:
    section = _section(dirs, settings.__name__)
    names = section.get("locked") or []
    if not isinstance(names, (list, tuple)):
        log.warning("chapyter-ext: Chapyter.locked must be a list of setting names; ignored.")
        return AdminLocks()
    settable = set(settings.class_trait_names(config=True)) - {"locked"}
    values: dict[str, Any] = {}
    for name in names:
        if name not in settable:
            log.warning("chapyter-ext: Chapyter.locked names %r, not a setting; ignored.", name)
        elif name in section:
            values[name] = section[name]
        else:
            # Locked without a value here: the default is what holds.
            values[name] = settings.class_traits()[name].default()
    return AdminLocks(values)


def _section(dirs: tuple[str, ...], settings_name: str) -> dict[str, Any]:
    """The ``settings_name`` section (``Chapyter``) of the config files in ``dirs``, merged by
    precedence."""
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
    section = merged.get(settings_name, {})
    return dict(section) if isinstance(section, Mapping) else {}
