"""What a step changed in the kernel's memory, read in the trial before and after it ran.

- **Variables** of the user's namespace: created, rebound, changed in place (a cheap
  :func:`~.fingerprint.fingerprint`) or deleted, each with a one-line summary.
- **State that outlives the step for every later cell**: attributes of loaded modules
  (``ssl._create_default_https_context = ...``, a patched builtin), the environment, the import
  machinery (``sys.path``, ``meta_path``, ``path_hooks``), the working folder, IPython's own
  registries (event callbacks, input and AST transformers, display formatters, magics,
  ``sys.excepthook``/``displayhook``), threads still running, native modules loaded from
  outside the installed packages. Any of these is an attempt: the step would change the
  session itself, not only its data.

The snapshots hold identities and fingerprints only (no copy of any value), and builtins are
bound here at import, so a step that rebinds ``len`` or ``id`` does not blind the check.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .attempts import ENVIRONMENT, INTERPRETER, LIBRARY_ENVIRONMENT, Attempt, native_outside
from .fingerprint import fingerprint

_id, _len, _sorted, _isinstance, _vars, _list = id, len, sorted, isinstance, vars, list
_dict, _set, _tuple, _type = dict, set, tuple, type
#: The interpreter's own table of modules (a step may rebind ``sys.modules``, not this).
_loaded = sys.modules
_MISSING = object()
#: Module attributes that interpreters and libraries change as they run, harmlessly.
_BENIGN_ATTRIBUTES = frozenset({"__warningregistry__", "_", "__", "___", "exit", "quit"})
#: Variables listed per kind in the report.
MAX_VARIABLES = 30


@dataclass
class Snapshot:
    """The state before the step (see the module)."""

    names: dict[str, tuple[int, tuple]]
    modules: dict[str, tuple[Any, dict[str, Any]]]
    environ: dict[str, str]
    paths: tuple
    cwd: str
    ipython: tuple
    threads: frozenset[int]
    #: Names of the modules loaded before the step.
    loaded: frozenset[str]


@dataclass
class Changes:
    """The step's variables: created, changed (rebound or in place) and deleted, one line
    each."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def user_names(shell: Any) -> dict[str, Any]:
    """The user's variables: the namespace less IPython's own names and ``_``-names."""
    hidden = getattr(shell, "user_ns_hidden", {})
    return {
        name: value
        for name, value in shell.user_ns.items()
        if _isinstance(name, str) and not name.startswith("_") and name not in hidden
    }


def _paths() -> tuple:
    return (
        tuple(sys.path),
        tuple(_id(x) for x in sys.meta_path),
        tuple(_id(x) for x in sys.path_hooks),
    )


def _ipython(shell: Any) -> tuple:
    """Identities of what IPython calls for every later cell."""
    parts: list[Any] = [_id(sys.excepthook), _id(getattr(shell, "custom_exceptions", ()))]
    events = getattr(getattr(shell, "events", None), "callbacks", {})
    for name in _sorted(events):
        parts.append((name, tuple(_id(f) for f in events[name])))
    for attribute in ("input_transformers_post", "ast_transformers"):
        parts.append(tuple(_id(t) for t in getattr(shell, attribute, ()) or ()))
    manager = getattr(shell, "input_transformer_manager", None)
    for attribute in ("cleanup_transforms", "line_transforms"):
        parts.append(tuple(_id(t) for t in getattr(manager, attribute, ()) or ()))
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", {}) or {}
    for mime in _sorted(formatters):
        formatter = formatters[mime]
        printers = getattr(formatter, "type_printers", {}) or {}
        deferred = getattr(formatter, "deferred_printers", {}) or {}
        parts.append(
            (
                mime,
                _id(formatter),
                tuple(_id(v) for v in printers.values()),
                tuple(_id(v) for v in deferred.values()),
            )
        )
    magics = getattr(getattr(shell, "magics_manager", None), "magics", {}) or {}
    for kind in _sorted(magics):
        parts.append((kind, tuple((k, _id(v)) for k, v in magics[kind].items())))
    return tuple(parts)


def _module_candidates(shell: Any, source: str) -> list[Any]:
    """The modules a step could rebind attributes of without the static analysis knowing:
    those its names and dotted names reach (through the namespace or as loaded modules), and
    always ``builtins``, ``os`` and ``sys``. Attributes are read from module dictionaries only,
    so no lazy loader runs. (Before the step: the builtins are still the interpreter's.)"""
    import ast
    import builtins

    found = {_id(builtins): builtins, _id(os): os, _id(sys): sys}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _list(found.values())
    chains: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            chains.add(node.id)
        elif isinstance(node, ast.Attribute):
            parts = []
            current: Any = node
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                chains.add(".".join([current.id, *reversed(parts)]))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            chains.update(a.name for a in node.names)
            if isinstance(node, ast.ImportFrom) and node.module:
                chains.add(node.module)
    namespace = shell.user_ns
    for chain in chains:
        parts = chain.split(".")
        value = namespace.get(parts[0], _loaded.get(parts[0]))
        for index in range(_len(parts)):
            if index:
                loaded = _loaded.get(".".join(parts[: index + 1]))
                attributes = getattr(value, "__dict__", None)
                if loaded is None and isinstance(attributes, dict):
                    loaded = attributes.get(parts[index])
                value = loaded
            if _type(value).__name__ != "module":
                break
            found[_id(value)] = value
    return _list(found.values())


def _modules(candidates: list[Any]) -> dict[str, tuple[Any, dict[str, Any]]]:
    found = {}
    for module in candidates:
        try:
            found[module.__name__] = (module, _dict(_vars(module)))
        except (TypeError, AttributeError):
            continue
    return found


def _live_threads() -> frozenset[int]:
    import threading

    return frozenset(t.ident for t in threading.enumerate() if t.ident is not None)


def take(shell: Any, source: str) -> Snapshot:
    """The state before the step (``source``: its code as Python) runs."""
    return Snapshot(
        names={name: (_id(v), fingerprint(v)) for name, v in user_names(shell).items()},
        modules=_modules(_module_candidates(shell, source)),
        environ=dict(os.environ),
        paths=_paths(),
        cwd=os.getcwd(),
        ipython=_ipython(shell),
        threads=_live_threads(),
        loaded=frozenset(_loaded),
    )


def _line(name: str, value: Any) -> str:
    from ..context.summaries import summarize_value

    return f"{name} ({summarize_value(value, max_chars=140)})"


def compare(shell: Any, before: Snapshot) -> Changes:
    """What changed since ``before`` (see the module)."""
    out = Changes()
    now = user_names(shell)
    for name, value in now.items():
        old = before.names.get(name)
        if old is None:
            out.created.append(_line(name, value))
        elif old[0] != _id(value) or old[1] != fingerprint(value):
            out.changed.append(_line(name, value))
    out.deleted = [name for name in before.names if name not in now]
    for kind in ("created", "changed", "deleted"):
        lines = getattr(out, kind)
        if _len(lines) > MAX_VARIABLES:
            setattr(
                out, kind, [*lines[:MAX_VARIABLES], f"… and {_len(lines) - MAX_VARIABLES} more"]
            )
    return out


def _module_changes(before: Snapshot) -> list[str]:
    """``module.attribute`` for each attribute of a module loaded before the step that the
    step rebound, added or deleted (a submodule bound on import is not a change)."""
    changed: list[str] = []
    for name, (module, then) in before.modules.items():
        try:
            now = _vars(module)
        except TypeError:
            continue
        for key, value in now.items():
            if then.get(key, _MISSING) is not value and key not in _BENIGN_ATTRIBUTES:
                if _type(value).__name__ == "module":
                    continue
                changed.append(f"{name}.{key}")
        changed.extend(f"{name}.{key}" for key in then if key not in now)
    return changed


def session_changes(shell: Any, before: Snapshot) -> list[Attempt]:
    """Attempts on the session itself (see the module), the modules first: read with this
    module's own references, before any library code the step may have replaced runs."""
    found: list[Attempt] = []
    for target in _module_changes(before)[:10]:
        found.append(Attempt(INTERPRETER, target, f"tried to change {target} for later cells"))
    environ = dict(os.environ)
    for key in _sorted(set(environ) | set(before.environ)):
        if environ.get(key) != before.environ.get(key) and key not in LIBRARY_ENVIRONMENT:
            found.append(
                Attempt(ENVIRONMENT, key, f"tried to change the environment variable {key}")
            )
    if _paths() != before.paths:
        found.append(Attempt(INTERPRETER, "sys.path", "tried to change how modules are imported"))
    if os.getcwd() != before.cwd:
        found.append(
            Attempt(
                ENVIRONMENT, os.getcwd(), f"tried to change the working folder to {os.getcwd()}"
            )
        )
    if _ipython(shell) != before.ipython:
        found.append(
            Attempt(INTERPRETER, "IPython", "tried to change what IPython does for later cells")
        )
    threads = _live_threads() - before.threads
    if threads:
        found.append(
            Attempt(
                INTERPRETER, "", f"started {_len(threads)} background thread(s) that outlive it"
            )
        )
    native = [
        getattr(m, "__file__", "") or ""
        for name, m in _list(_loaded.items())
        if name not in before.loaded and m is not None
    ]
    found.extend(native_outside([p for p in native if p.endswith((".so", ".pyd", ".dylib"))]))
    return found
