"""The fenced-block protocol, for models without OpenAI tools: a reply holding a fenced python
block asks to run its first such block (the ``run_code`` tool); a reply without one is the
final answer.

Pure: no I/O, no IPython.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...prompts import _FENCE, _PYTHON_LANGS, _THINKING, _fenced_blocks, _strip_prompts, _tidy


def without_thinking(text: str) -> str:
    """A reply without its ``<think>`` sections, stripped: what the user reads as the answer."""
    return _THINKING.sub("", text.replace("\r\n", "\n")).strip()


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
    reply without ``<think>`` sections). Fences are read exactly as :mod:`chapyter_ext.prompts`
    reads them.
    """
    clean = _THINKING.sub("", text.replace("\r\n", "\n"))
    blocks, _ = _fenced_blocks(clean)
    chosen = next((b for b in blocks if b.lang in _PYTHON_LANGS or not b.lang), None)
    code = _tidy(_strip_prompts(chosen.code)) if chosen is not None else ""
    if not code.strip():
        return FencedStep(prose=clean.strip(), code=None)
    prose: list[str] = []
    for line in clean.split("\n"):
        m = _FENCE.match(line)
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            break
        prose.append(line)
    return FencedStep(prose="\n".join(prose).strip(), code=code)
