"""The fenced-block protocol, for models without OpenAI tools: a reply holding a fenced python
block asks to run its first such block (the ``run_code`` tool); a reply without one is the
final answer.

Pure: no I/O, no IPython.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...parsing.fences import (
    PYTHON_LANGS,
    fenced_blocks,
    is_fence,
    strip_console_prompts,
    tidy,
    without_thinking,
)


@dataclass(frozen=True)
class FencedStep:
    """A reply in the fenced protocol: the prose before the block and the code to run (None:
    the reply is the final answer)."""

    prose: str
    code: str | None


def fenced_step(text: str) -> FencedStep:
    """Read a reply under the fenced protocol.

    The first fenced block tagged python (``python``, ``py``, ``ipython``, ...) or untagged is
    the code to run (console ``>>>`` prompts stripped); the prose before its opening fence is
    kept. A reply without such a block is the final answer (``code`` None, ``prose`` the whole
    reply without ``<think>`` sections). Fences are read by :mod:`chapyter_ext.parsing.fences`.
    """
    clean = without_thinking(text)
    blocks, _ = fenced_blocks(clean)
    chosen = next((b for b in blocks if b.lang in PYTHON_LANGS or not b.lang), None)
    code = tidy(strip_console_prompts(chosen.code)) if chosen is not None else ""
    if not code.strip():
        return FencedStep(prose=clean.strip(), code=None)
    prose: list[str] = []
    for line in clean.split("\n"):
        if is_fence(line):
            break
        prose.append(line)
    return FencedStep(prose="\n".join(prose).strip(), code=code)
