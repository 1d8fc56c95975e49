"""Fix and Edit with AI for a small model (the bundled SmolLM2): a prompt of its own and the
grammar of its answer. Pure.

The full Fix prompt (:mod:`chapyter_ext.fix.request`) names cells by id, gives the traceback and the
kernel state in tagged blocks and asks for a ``Cell:`` line: a 135M model copies the ids into
its code and repeats the blocks. This one carries no id, hash or metadata: a short system
prompt, worked examples (code, error or instruction, corrected code) as earlier turns, then
the compact variables, the cell's code and the error's one line; the answer is one python
block of a few lines (a llama.cpp grammar), checked like every answer before it is offered
(:func:`chapyter_ext.guards.check_code`).
"""

from __future__ import annotations

from ..context.compact import NO_VARIABLES, compact_summary
from ..profile import failed_message

__all__ = [
    "SMALL_FIX_SYSTEM_PROMPT",
    "build_small_fix_messages",
    "fix_failed_message",
    "fix_grammar",
    "fix_max_tokens",
]

SMALL_FIX_SYSTEM_PROMPT = """\
You fix Python code in a Jupyter notebook. The variables listed exist: use them by name. \
Change only what the error needs. Answer with the corrected code in one ```python block."""

# (variables, code, error or instruction, the corrected code): the closest to the real turns.
_FIX_EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "- df (DataFrame): 4 rows × 2 columns\n    columns: df['x'] int64, df['y'] int64",
        "df['z'].sum()",
        "KeyError: 'z'",
        "df['y'].sum()",
    ),
    (
        "- name (str): 'Grace'",
        "n = len(nme)",
        "NameError: name 'nme' is not defined",
        "n = len(name)",
    ),
    (
        "- items (list): 4 items: [3, 1, 2, 5]",
        "print(items[4])",
        "IndexError: list index out of range",
        "print(items[3])",
    ),
    (
        "- total (float): 12.5",
        "print('total: ' + total)",
        'TypeError: can only concatenate str (not "float") to str',
        "print('total: ' + str(total))",
    ),
    (
        NO_VARIABLES,
        "print(max([4, 2, 9])",
        "SyntaxError: '(' was never closed",
        "print(max([4, 2, 9]))",
    ),
)
_EDIT_EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "- df (DataFrame): 4 rows × 2 columns\n    columns: df['x'] int64, df['y'] int64",
        "df['x'].sum()",
        "use the mean instead",
        "df['x'].mean()",
    ),
    ("- words (list): 5 items", "words.sort()", "sort in reverse", "words.sort(reverse=True)"),
)
#: Longest fixed cell the grammar allows, in lines.
MAX_LINES = 12


def _turn(variables: str | None, code: str, ask: str, *, edit: bool) -> str:
    what = f"Change: {ask}" if edit else f"Error: {ask}"
    return (
        f"Variables:\n{variables or NO_VARIABLES}\n\nCode:\n```python\n{code}\n```\n{what}\n\n"
        + ("Write the changed code." if edit else "Write the corrected code.")
    )


def build_small_fix_messages(
    code: str, ask: str, context: str | None, *, edit: bool = False
) -> list[dict[str, str]]:
    """The messages of a fix (``ask``: the error's one line, ``ename: evalue``) or an edit
    (``ask``: the instruction) of ``code`` for a small model, with the kernel summary
    ``context`` as its compact variables (no ids, no hashes, no cell history)."""
    messages = [{"role": "system", "content": SMALL_FIX_SYSTEM_PROMPT}]
    for variables, before, said, after in _EDIT_EXAMPLES if edit else _FIX_EXAMPLES:
        messages.append({"role": "user", "content": _turn(variables, before, said, edit=edit)})
        messages.append({"role": "assistant", "content": f"```python\n{after}\n```"})
    messages.append(
        {"role": "user", "content": _turn(compact_summary(context), code, ask, edit=edit)}
    )
    return messages


def fix_grammar(code: str) -> str:
    """A llama.cpp grammar for one python block of at most a couple of lines more than
    ``code`` has (up to :data:`MAX_LINES`), no comments (a small model rambles on in them)."""
    lines = min(MAX_LINES, max(2, code.count("\n") + 3))
    return (
        'root ::= "```python\\n" line' + " line?" * (lines - 1) + ' "```"\n'
        'line ::= [^`#\\n\\r] [^#\\n\\r]* "\\n"\n'
    )


def fix_max_tokens(code: str) -> int:
    """Tokens a corrected ``code`` may take: its own length and some room."""
    return min(512, 48 + len(code) // 2)


def fix_failed_message(problem: str = "", *, edit: bool = False) -> str:
    """The one line shown when no answer passed; ``problem``: the last one's."""
    return failed_message(problem, what="write this change" if edit else "write a fix for this")
