"""Reads the agent's kernel tools evaluate IN THE KERNEL, silently (a ``user_expressions``
entry): each returns ``IPython.display.JSON({"text": ...})``, which the browser and the headless
driver read the same way (``op`` ``evaluate`` of :mod:`chapyter_ext.agent.tools`)."""

from __future__ import annotations

from typing import Any


def variables(shell: Any, budget: int) -> Any:
    """The user's variables, one line each: ``name (type): summary``."""
    from IPython.display import JSON

    from ..context import describe_variables

    items = describe_variables(shell.user_ns, shell.user_ns_hidden, budget=budget)
    lines = [
        f"{v['name']} ({v['type']})" + (f": {v['summary']}" if v["summary"] else "") for v in items
    ]
    return JSON({"text": "\n".join(lines) or "No variables."})


def expression(function: str, *args: Any) -> str:
    """The user expression that calls ``function`` of this module with ``get_ipython()`` and
    ``args`` (Python literals: numbers, strings)."""
    shown = "".join(f", {a!r}" for a in args)
    return (
        f"__import__('chapyter_ext.agent.kernel_reads', fromlist=[{function!r}])"
        f".{function}(get_ipython(){shown})"
    )
