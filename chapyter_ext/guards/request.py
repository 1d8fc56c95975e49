"""What a ``%%ai`` request asks for, and whether code does it: the variable the result goes
into ("... into total"), the variables and columns it names, the numbers and comparisons it
gives, descending order."""

from __future__ import annotations

import ast
import re

from .code_names import CodeNames, code_tree
from .names import KernelNames

__all__ = [
    "STOP_WORDS",
    "named_columns_problem",
    "named_variables",
    "request_problem",
    "requested_target",
]

# Words that are never a column's name in a request ("the mean of a into b").
STOP_WORDS = frozenset(
    {"a", "an", "the", "of", "in", "into", "to", "from", "with", "and", "or", "by", "is", "are"}
    | {"that", "which", "this", "at", "for", "on", "it", "its"}
)


_TARGET = re.compile(
    r"\b(?:into|called|named|(?:a|an|the)\s+(?:list|dictionary|dict|function|variable|set|tuple))"
    r"\s+`?([A-Za-z_]\w*)`?",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset({"a", "an", "the", "of", "that", "which", "with", "to", "for", "from"})


def named_variables(request: str, namespace: KernelNames) -> set[str]:
    """Existing variables (not modules, not hidden) the request mentions by name."""
    words = set(re.findall(r"[A-Za-z_]\w*", request))
    return {word for word in words if namespace.is_data(word)}


_COMPARISON = re.compile(r"(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)")
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w.])")
_FUNCTION = re.compile(r"\b(?:function|def|method)\b", re.IGNORECASE)
_DESCENDING = re.compile(r"\b(?:descending|largest first|highest first)\b", re.IGNORECASE)


def requested_target(request: str) -> str | None:
    """The variable the request asks the result to go into ("... into total"), if any."""
    for match in _TARGET.finditer(request):
        if match.group(1).lower() not in _NOT_NAMES:
            return match.group(1)
    return None


def named_columns_problem(
    request: str, names: CodeNames, named: set[str], namespace: KernelNames
) -> str | None:
    """The request names columns of the DataFrames it is about (those it names, else all):
    the code must use them."""
    words = set(re.findall(r"[A-Za-z_]\w*", request))
    frames = {name for name in named if namespace.columns(name) is not None} or {
        name
        for name in namespace.names()
        if not name.startswith("_") and namespace.columns(name) is not None
    }
    for frame in sorted(frames):
        for column in sorted(namespace.columns(frame) or ()):
            if column not in words or column in names.strings | names.attributes:
                continue
            article = column.lower() in STOP_WORDS
            near_operator = re.search(
                rf"(?:[-+*/<>=]\s*\b{re.escape(column)}\b|\b{re.escape(column)}\s*[-+*/<>=])",
                request,
            )
            if not article or near_operator:
                return f"it does not use the column {column!r}"
    return None


def request_problem(request: str, code: str, names: CodeNames, named: set[str]) -> str | None:
    target = requested_target(request)
    if target is not None and target not in names.defined:
        return f"it does not define {target}"
    if named and not (named & (names.read | names.defined)):
        return f"it does not use {', '.join(sorted(named))}"
    if names.functions and not _FUNCTION.search(request) and not names.calls & names.functions:
        return "it only defines a function, never called"
    words = {w.lower(): w for w in re.findall(r"[A-Za-z]\w*", request)}
    for text in sorted(names.strings):
        said = words.get(text.lower())
        if said is not None and said != text and said.islower():
            return f"it writes {text!r} where the request says {said!r}"
    numbers = {n.value for n in names.numbers}
    for match in _NUMBER.finditer(request):
        value = float(match.group(1))
        # "1 to 10" is range(1, 11) in Python.
        inclusive = match.start() >= 3 and request[: match.start()].rstrip().endswith(" to")
        if value not in numbers and not (inclusive and value + 1 in numbers):
            return f"it does not use the {match.group(1)} the request gives"
    flat = code.replace(" ", "")
    for op, number in _COMPARISON.findall(request):
        if f"{op}{number}" not in flat:
            return f"it does not test {op} {number}"
    if _DESCENDING.search(request) and not any(
        mark in flat for mark in ("ascending=False", "reverse=True", "[::-1]", "nlargest")
    ):
        return "it does not sort in descending order"
    return (
        _renames_problem(request, flat) or _made_up_number(request, names) or _counts(request, code)
    )


# "rename (the column) km (of trips) to distance"
_RENAME = re.compile(
    r"\brename\s+(?:the\s+)?(?:column\s+)?[`'\"]?(\w+)[`'\"]?(?:\s+(?:of|in)\s+\w+)?"
    r"\s+(?:to|as|into)\s+[`'\"]?(\w+)",
    re.IGNORECASE,
)
_COUNTING = re.compile(r"\b(?:how many|number|count|counts|size|length|len)\b", re.IGNORECASE)
_COUNTS = frozenset({"nunique", "count", "size", "shape"})
#: Significant digits past which a number the request does not give is made up.
_PRECISE = 5


def _renames_problem(request: str, flat: str) -> str | None:
    """A request to rename ``old`` to ``new``: the code maps the one to the other."""
    found = _RENAME.search(request)
    if found is None:
        return None
    old, new = found.groups()
    if re.search(rf"""['"]{re.escape(old)}['"]:['"]{re.escape(new)}['"]""", flat):
        return None
    return f"it does not rename {old!r} to {new!r}"


def _made_up_number(request: str, names: CodeNames) -> str | None:
    """A precise number (``60.3427198e-5``) the request does not give is made up."""
    given = {float(m.group(1)) for m in _NUMBER.finditer(request)}
    for node in names.numbers:
        value = node.value
        if not isinstance(value, (int, float)):
            continue
        digits = re.sub(r"e.*$", "", repr(abs(value))).replace(".", "").strip("0")
        if len(digits) >= _PRECISE and float(value) not in given:
            return f"it makes up the number {value!r}"
    return None


def _counts(request: str, code: str) -> str | None:
    """The result is a count (``len(...)``, ``.nunique()``, ...) where the request does not
    ask how many."""
    if _COUNTING.search(request):
        return None
    tree = code_tree(code)
    if tree is None or not tree.body:
        return None
    last = tree.body[-1]
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Name) and len(tree.body) > 1:
        last = tree.body[-2]  # the name shown after it
    value = last.value if isinstance(last, (ast.Assign, ast.Expr)) else None
    if isinstance(value, ast.Call):
        value = value.func
    counted = (isinstance(value, ast.Name) and value.id == "len") or (
        isinstance(value, ast.Attribute) and value.attr in _COUNTS
    )
    return "it counts, where the request does not ask how many" if counted else None
