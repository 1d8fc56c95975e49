"""Each variable's facts gathered once and cached (see :mod:`.facts` for what they are).

Facts are cached per variable name with a fingerprint that costs a few attribute reads (``id``,
shape, the pandas block manager's identity, a container's length and end items, an array's
first values), so a warm request does no work per variable but a dictionary look-up. A frame
changed in place without any of those changing (``df.iloc[0, 0] = 1``) keeps its old facts
until it is rebuilt; labels and shapes, which is what the facts are about, rarely change that
way. Tables' facts come from :mod:`.tables`, dicts' and lists' from :mod:`.containers`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from ..redact import REDACTED, Redactor, is_secret_name
from .containers import mapping_facts, sequence_facts
from .facts import VarFacts
from .summaries import default_chars, describe
from .tables import frame_facts, series_facts
from .text import pandas_types, type_label

__all__ = ["CACHE", "fingerprint", "module_aliases", "variable_facts"]


# ---------------------------------------------------------------------------------------------
# The cache


class _Cache:
    """Facts by variable name, valid while the value's fingerprint and the secrets are the same."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, object, VarFacts]] = {}
        self.secrets: tuple[str, ...] = ()

    def check(self, r: Redactor) -> None:
        """Start again when the secrets changed: a new secret may be in a cached text."""
        secrets = tuple(r.secrets)
        if secrets != self.secrets:
            self.entries.clear()
            self.secrets = secrets

    def get(self, name: str, value: object, r: Redactor, *, full: bool = True) -> VarFacts:
        """The facts of ``name``; with ``full=False`` a stub (its name only) unless cached.

        A stub has ``pending`` set: :meth:`resolve` turns it into the facts when it is shown.
        """
        fp = fingerprint(value)
        entry = self.entries.get(name)
        if entry is not None and entry[0] == id(value) and entry[1] == fp:
            if full and entry[2].pending is not None:
                pass  # a stub: build the facts below
            else:
                return entry[2]
        if full:
            facts = variable_facts(name, value, r)
        else:
            facts = VarFacts(name, type_label(value), "")
            facts.pending = value
        if len(self.entries) > 4096:
            self.entries.clear()
        self.entries[name] = (id(value), fp, facts)
        return facts

    def resolve(self, facts: VarFacts, r: Redactor) -> VarFacts:
        """The full facts for a stub (the facts themselves otherwise)."""
        if facts.pending is None:
            return facts
        return self.get(facts.name, facts.pending, r)

    def prune(self, names: set[str]) -> None:
        """Forget variables that are gone (keeps the cache as big as the namespace)."""
        if len(self.entries) > len(names) + 64:
            # list() copies the keys at once (under the GIL): the kernel's warm-up thread may
            # be filling the cache at the same time.
            for gone in [n for n in list(self.entries) if n not in names]:
                self.entries.pop(gone, None)


#: The one cache of the process (the kernel's, or the server's for ``build_context``).
CACHE = _Cache()

_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range, frozenset)


def fingerprint(value: object) -> object:
    """A few attribute reads that change when the value changes the way summaries notice."""
    t = type(value)
    if isinstance(value, _IMMUTABLE):
        return t
    try:
        mgr = getattr(value, "_mgr", None)
        if mgr is not None:  # pandas: a new block manager for new columns, dtypes, rows
            shape = getattr(value, "shape", None)
            columns = getattr(value, "columns", None)
            return (t, shape, id(mgr), id(columns), tuple(map(id, getattr(mgr, "blocks", ()))))
        if isinstance(value, (list, dict)):
            n = len(value)
            if not n:
                return (t, 0)
            if isinstance(value, dict):
                return (t, n, id(next(iter(value.values()))), id(next(reversed(value.values()))))
            return (t, n, id(value[0]), id(value[-1]))
        shape = getattr(value, "shape", None)
        if shape is not None and not callable(shape):
            flat = getattr(value, "flat", None)
            # numpy: the first values are shown, so an edit in place must be seen.
            probe = flat[:6].tobytes() if flat is not None and hasattr(value, "tobytes") else b""
            return (t, shape, str(getattr(value, "dtype", "")), probe)
        if isinstance(value, (tuple, set)):
            return (t, len(value))
        attrs = getattr(value, "__dict__", None) if type(value).__dictoffset__ else None
        if isinstance(attrs, dict):
            return (t, len(attrs), tuple(map(id, itertools.islice(attrs.values(), 8))))
    except Exception:  # an odd object: never cached
        return object()
    return t


# ---------------------------------------------------------------------------------------------
# Building facts


def variable_facts(name: str, value: object, r: Redactor) -> VarFacts:
    """The facts of one variable (uncached); never raises."""
    label = type_label(value)
    if is_secret_name(name):
        return VarFacts(name, label, REDACTED)
    try:
        pandas = pandas_types()
        if pandas is not None and isinstance(value, (pandas[0], pandas[1])):
            if isinstance(value, pandas[0]):
                return frame_facts(name, label, value, r)
            return series_facts(name, label, value, r)
        if isinstance(value, (Mapping, list, tuple)) and len(value):
            found = None
            if isinstance(value, Mapping):
                found = mapping_facts(name, label, value, r)
            elif not hasattr(value, "_fields"):
                found = sequence_facts(name, label, value, r)
            if found is not None:
                return found
    except Exception:  # any user object may fail in any way: the plain summary instead
        pass
    return VarFacts(name, label, describe(value, default_chars(value), r))


# ---------------------------------------------------------------------------------------------
# Imported modules


def module_aliases(user_ns: Mapping[str, Any], limit: int = 40) -> list[tuple[str, str]]:
    """``[(alias, module name)]`` for the modules bound in the namespace (``np`` -> numpy)."""
    import types

    out = []
    for name, value in list(user_ns.items()):
        if isinstance(value, types.ModuleType) and isinstance(name, str) and name[:1] != "_":
            out.append((name, getattr(value, "__name__", name)))
            if len(out) >= limit:
                break
    return out
