"""The keyword arguments a callable of the kernel accepts, read without calling anything: for
inline completion, which drops a suggestion whose call passes a keyword its callee does not
take (``sales.sort_values(by_region=...)``).

Run in the kernel as a silent user expression (``complete/kernelNames.ts``). A callee is a
dotted name (``sales.sort_values``, ``pd.read_csv``, ``sorted``): its first name is looked up
in the user's namespace (then the builtins), each attribute with
:func:`inspect.getattr_static`, so no property, ``__getattr__`` or accessor runs; a method is
bound only when it is a plain function or a builtin method (their ``__get__`` runs no user
code). Anything else, and any callable :func:`inspect.signature` cannot read, is unknown: the
suggestion is kept.
"""

from __future__ import annotations

import builtins
import inspect
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MAX_CALLEES", "accepted_keywords", "keywords_of"]

#: Callees answered per request, and the parameter names listed per callee.
MAX_CALLEES = 16
MAX_NAMES = 400
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,7}", re.ASCII)
# Descriptors whose __get__ only binds (C code or a plain function's): safe to bind.
_BINDABLE = (
    types.FunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    staticmethod,
    classmethod,
)
_MISSING = object()


def _resolve(namespace: Mapping[str, Any], callee: str) -> Any:
    """The object ``callee`` names, or ``_MISSING`` when it cannot be read statically."""
    first, *attrs = callee.split(".")
    if first in namespace:
        obj = namespace[first]
    elif first in vars(builtins):
        obj = vars(builtins)[first]
    else:
        return _MISSING
    for attr in attrs:
        try:
            raw = inspect.getattr_static(obj, attr)
        except AttributeError:
            return _MISSING
        if isinstance(obj, types.ModuleType) or _in_instance_dict(obj, attr):
            obj = raw  # a module's or an instance's own value: nothing to bind
        elif isinstance(raw, _BINDABLE):
            owner = obj if isinstance(obj, type) else type(obj)
            obj = raw.__get__(None if isinstance(obj, type) else obj, owner)
        elif isinstance(raw, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            return _MISSING  # reading it would run code, or give a value we cannot see
        elif hasattr(type(raw), "__get__"):
            return _MISSING  # a custom descriptor (an accessor): its __get__ is user code
        else:
            obj = raw
    return obj


def _in_instance_dict(obj: Any, attr: str) -> bool:
    if isinstance(obj, type):
        return False
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:
        return False
    return isinstance(own, dict) and attr in own


def keywords_of(target: Any) -> dict[str, Any] | None:
    """``{"any": True}`` when ``target`` takes any keyword (``**kwargs``), ``{"names": [...]}``
    the names it takes as keywords (positional-only ones are not), None when unknown."""
    if target is _MISSING or not callable(target):
        return None
    try:
        parameters = inspect.signature(target).parameters.values()
    except Exception:  # builtins without a text signature, odd callables
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return {"any": True}
    names = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    return {"names": names} if len(names) <= MAX_NAMES else None


def accepted_keywords(
    namespace: Mapping[str, Any], callees: Iterable[str]
) -> dict[str, dict[str, Any] | None]:
    """For each dotted ``callee`` (at most :data:`MAX_CALLEES`), what :func:`keywords_of`
    says of the object it names in ``namespace`` (None: unknown, or not a dotted name)."""
    found: dict[str, dict[str, Any] | None] = {}
    for callee in list(callees)[:MAX_CALLEES]:
        if not isinstance(callee, str) or not _DOTTED.fullmatch(callee):
            continue
        try:
            found[callee] = keywords_of(_resolve(namespace, callee))
        except Exception:  # a broken object must not cost the suggestion
            found[callee] = None
    return found
