"""A model's answer to the code to run: :func:`extract_code` (fenced blocks read by
:mod:`.fences`, unfenced answers with their prose turned into comments), :class:`NoCodeError`
when there is none. Pure: IPython is imported only by the syntax check (:mod:`.syntax`)."""

from __future__ import annotations

import ast
import re

from .code_blocks import markdown_list
from .fences import (
    PYTHON_LANGS,
    SHELL_LANGS,
    fenced_blocks,
    strip_console_prompts,
    tidy,
    without_thinking,
)
from .syntax import CodeSyntaxError, check_syntax

__all__ = ["NoCodeError", "extract_code"]


def _preview(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class NoCodeError(ValueError):
    """The model's answer holds no code to run. ``str()`` is one line; ``answer`` is the text."""

    def __init__(self, answer: str, reason: str | None = None) -> None:
        self.answer = answer
        if reason is None:
            if answer.strip():
                reason = f"The model answered without any code: “{_preview(answer)}”"
            else:
                reason = "The model's answer was empty"
        super().__init__(f"{reason}. Rephrase the request or add detail.")


def _shell_to_ipython(code: str) -> str:
    """A shell block as IPython ``!`` lines (the kernel can run those)."""
    out = []
    for line in code.split("\n"):
        stripped = line.strip()
        if stripped.startswith("$ "):
            stripped = stripped[2:]
        if not stripped or stripped.startswith("#"):
            out.append(stripped)
        else:
            out.append(stripped if stripped.startswith(("!", "%")) else "!" + stripped)
    return "\n".join(out)


def _parses(code: str) -> bool:
    try:
        check_syntax(code)
    except CodeSyntaxError:
        return False
    return True


def _join(codes: list[str]) -> str:
    seen: list[str] = []
    for code in codes:
        code = tidy(code)
        # A model repeating the same block would otherwise run it twice.
        if code and code not in seen:
            seen.append(code)
    return "\n\n".join(seen)


def extract_code(answer: str) -> str:
    """The code to run from a model's answer; raises ``NoCodeError`` if there is none.

    - Fenced blocks (```` ``` ```` or ``~~~``, any indentation, a missing closing fence running
      to the end): those tagged python/py/ipython/… (console ``>>>`` prompts stripped) are joined
      with a blank line, identical repeats once; untagged blocks count when no block is tagged
      python (those that parse, or all if none does); shell blocks become ``!`` lines when there
      is nothing else; other languages (json, text, output) only when nothing else exists and
      they parse. Prose outside the fences is dropped, and so are ``<think>`` sections.
    - Without fences: an answer that parses as Python is code (a lone capitalised word such as
      "Sure" is not, nor lines of a Markdown list such as ``- 12.``). An answer mixing prose
      and code gets its prose lines turned into comments, if the result then parses; otherwise
      ``NoCodeError``.

    The code is kept exactly as written, except that blank lines at either end are dropped.
    """
    text = without_thinking(answer)
    if not text.strip():
        reason = "The model only reasoned (<think>…) and gave no answer" if answer.strip() else None
        raise NoCodeError(answer, reason)
    blocks, _ = fenced_blocks(text)
    if not blocks:
        return _unfenced(text, answer)

    python = [strip_console_prompts(b.code) for b in blocks if b.lang in PYTHON_LANGS]
    if python:
        code = _join(python)
    else:
        bare = [strip_console_prompts(b.code) for b in blocks if not b.lang]
        shell = [_shell_to_ipython(b.code) for b in blocks if b.lang in SHELL_LANGS]
        other = [b.code for b in blocks if b.lang and b.lang not in SHELL_LANGS]
        if bare:
            code = _join([c for c in bare if _parses(c)] or bare)
        elif shell:
            code = _join(shell)
        else:
            code = _join([c for c in other if _parses(c)])
            if not code:
                langs = ", ".join(sorted({b.lang for b in blocks}))
                raise NoCodeError(answer, f"The model answered with {langs} but no Python code")
    if not code:
        raise NoCodeError(answer)
    return code


_KEYWORD_START = re.compile(
    r"(?:def|class|for|while|if|elif|else|try|except|finally|with|return|import|from|raise|"
    r"assert|del|global|nonlocal|pass|break|continue|lambda|yield|async|await|print)\b"
)
_PROSE = re.compile(r"(?:[-*+]\s+|\d+[.)]\s+|#{1,6}\s+|>\s*)?[\"'“(*_`]*[A-Za-z]")


def _looks_like_prose(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "%", "!")) or _KEYWORD_START.match(stripped):
        return False
    if not _PROSE.match(stripped):
        return False
    # Two words in a row ("Here is", "This plots") or a sentence-like end: code has neither.
    return bool(re.search(r"[A-Za-z']{2,}\s+[A-Za-z']{2,}", stripped) or stripped[-1] in ".!?:")


def _syntax_error_plain(lines: list[str]) -> SyntaxError | None:
    """Parse as plain Python, with IPython's ``%``/``!`` lines masked.

    IPython's own transforms would read a prose line ending in "?" as a help request.
    """
    masked = [
        line[: len(line) - len(line.lstrip())] + "pass"
        if line.lstrip().startswith(("%", "!"))
        else line
        for line in lines
    ]
    try:
        ast.parse("\n".join(masked))
    except SyntaxError as err:
        return err
    except ValueError:
        return SyntaxError("null byte")
    return None


def _is_only_words(code: str) -> bool:
    """ "Sure", "Done", "'ok'": statements that are only capitalised names or strings."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return bool(tree.body) and all(
        isinstance(node, ast.Expr)
        and (
            (isinstance(node.value, ast.Name) and node.value.id[:1].isupper())
            or (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
        )
        for node in tree.body
    )


def _unfenced(text: str, answer: str) -> str:
    code = tidy(text)
    if markdown_list(code):
        # `- 12.` lines parse (negative numbers), indented or not: a list is not code.
        raise NoCodeError(answer)
    lines = code.split("\n")
    # Comment out, one at a time, the prose line the parser stumbles on; each line at most once.
    for commented in range(len(lines) + 1):
        err = _syntax_error_plain(lines)
        if err is None:
            break
        lineno = err.lineno or 0
        if not 1 <= lineno <= len(lines) or not _looks_like_prose(lines[lineno - 1]):
            if commented == 0 and not any(_looks_like_prose(line) for line in lines):
                # All code, and broken: return it so check_syntax reports the real error.
                return code
            raise NoCodeError(answer)
        line = lines[lineno - 1]
        indent = line[: len(line) - len(line.lstrip())]
        lines[lineno - 1] = f"{indent}# {line.strip()}"
    else:
        raise NoCodeError(answer)
    code = tidy("\n".join(lines))
    meaningful = [
        line for line in code.split("\n") if line.strip() and not line.lstrip().startswith("#")
    ]
    if not meaningful or _is_only_words(code) or markdown_list(code) or not _parses(code):
        raise NoCodeError(answer)
    return code
