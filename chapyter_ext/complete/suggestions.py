"""Inline completion suggests code or nothing.

:class:`SuggestionGuard` sits after the suggestion's cleaning and lets a line of it through
only once the line is complete and reads as code: it continues the cell without a syntax
error (the cell up to the cursor, the lines already let through and this one parse, or are
only unfinished: an open bracket, an indented block to come), it does not read as an English
sentence, and with the small-model profile the names it introduces exist. The first line that
fails ends the suggestion (a first line that fails: no suggestion at all). Comment lines pass
only when code follows them; with the small-model profile a comment at the end of a line
(``print(x)  # Output: 5``, made up) is cut. What is let through only ever grows.
"""

from __future__ import annotations

import builtins
import keyword
import re
import tokenize
from collections.abc import Iterable

from ..guards.names import KernelNames
from ..guards.repair import tokens_until_error
from ..parsing.syntax import parse_cell

__all__ = ["SuggestionGuard", "overlap", "reads_as_prose"]

# Syntax errors that only say the code is not finished yet.
_UNFINISHED = (
    "was never closed",
    "expected an indented block",
    "unexpected EOF",
    "unterminated triple-quoted",
)
_UNFINISHED_LAST_LINE = ("unterminated string", "expected ':'")
# English words that are not Python keywords: three words in a row with two of these read as a
# sentence ("You can use the", "This will print the").
_ENGLISH = frozenset(
    {"the", "a", "an", "to", "of", "you", "your", "this", "that", "can", "use", "will", "it"}
    | {"are", "be", "we", "should", "here", "following", "code", "function", "which", "its"}
    | {"there", "these", "has", "have", "was", "would", "could", "how", "what", "example"}
)
#: Characters a growing line must gain before it is judged (and shown) again.
_REJUDGE = 12
# A line that holds one of these is plainly code as it grows (prose is held until whole).
_CODE_MARK = re.compile(r"[()\[\]{}=.,+*/%<>]")
_SENTENCE_START = re.compile(r"^[A-Z][a-z']+(?: [a-z][a-z']*){2,}")
_STRING = re.compile(r"""(?:[rRbBuUfF]{0,2})("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)""")


def reads_as_prose(line: str) -> bool:
    """Whether ``line`` (outside its string literals) reads as an English sentence: a capital
    word and two more words, or three words in a row of which two are English, not Python."""
    text = _STRING.sub(" ", line.split("#", 1)[0] if "#" not in line[:1] else "").strip()
    if not text:
        return False
    if _SENTENCE_START.match(text) and not keyword.iskeyword(text.split()[0]):
        return True
    words = re.findall(r"[A-Za-z']+|[^\sA-Za-z']+", text)
    run = english = 0
    for word in words:
        if re.fullmatch(r"[A-Za-z']+", word):
            run += 1
            english += word.lower() in _ENGLISH
            if run >= 3 and english >= 2:
                return True
        else:
            run = english = 0
    return False


def _status(text: str) -> str:
    """'complete', 'unfinished', 'in-string' (unfinished, inside a string literal) or
    'invalid': ``text`` as the start of a cell."""
    try:
        parse_cell(text)
    except SyntaxError as err:
        message = err.msg or ""
        last = text.rstrip("\n").count("\n") + 1
        if "unterminated" in message and err.lineno == last:
            return "in-string"
        if any(part in message for part in _UNFINISHED):
            return "unfinished"
        if any(part in message for part in _UNFINISHED_LAST_LINE) and err.lineno == last:
            return "unfinished"
        return "invalid"
    except RecursionError:
        return "invalid"
    return "complete"


def _words_in(text: str) -> set[str]:
    return {t.string for t in tokens_until_error(text) if t.type == tokenize.NAME}


class SuggestionGuard:
    """Lets a growing suggestion through line by line (see the module's docstring).

    ``prefix`` and ``suffix``: the cell around the cursor; ``known``: more names the user has
    (the cells above); ``names``: the kernel's, checked with ``small``.
    """

    def __init__(
        self,
        prefix: str,
        suffix: str = "",
        *,
        names: KernelNames | None = None,
        small: bool = False,
        known: Iterable[str] = (),
    ) -> None:
        self._prefix = prefix
        status = _status(prefix)
        # A cell already broken before the cursor cannot tell a good line from a bad one.
        self._judge_syntax = status != "invalid"
        # Typing a comment or a string: prose is what is written there.
        self._free_text = status == "in-string" or prefix.rsplit("\n", 1)[-1].lstrip().startswith(
            "#"
        )
        self._names = names if small else None
        self._small = small
        self._known = _words_in(prefix) | _words_in(suffix) | set(known)
        self._suffix_line = suffix.split("\n", 1)[0]
        self._raw = ""
        self._taken = 0  # characters of _raw judged
        self._done_text = ""  # the lines judged whole and let through, with their newlines
        self._growing_text = ""  # the line still growing, as far as it passed
        self._judged = 0  # length of the growing line when it was last judged
        self._emitted = 0  # characters shown
        self._lines = 0  # lines judged (let through, held or dropped)
        self._held: list[tuple[int, str]] = []  # blank and comment lines waiting for code
        self.done = False

    @property
    def text(self) -> str:
        """What was let through so far."""
        return (self._done_text + self._growing_text)[: self._emitted]

    def push(self, piece: str) -> str:
        """More of the (cleaned) suggestion; what may be shown now."""
        if self.done:
            return ""
        self._raw += piece
        while not self.done and "\n" in self._raw[self._taken :]:
            end = self._raw.index("\n", self._taken)
            self._line(self._raw[self._taken : end], last=False)
            self._taken = end + 1
        if not self.done and not self._small and not self._free_text:
            # A capable model's line may show as it grows, once it plainly is code so far.
            self._growing(self._raw[self._taken :])
        return self._emit(final=False)

    def finish(self) -> str:
        """The suggestion is complete: what is left to show."""
        if self.done:
            return ""
        self._line(self._raw[self._taken :], last=True)
        self._taken = len(self._raw)
        # Cut short by a line that failed, the text after the cursor closes what it opened.
        whole = not self.done
        self.done = True
        return self._emit(final=whole)

    def _emit(self, *, final: bool) -> str:
        """What is new to show. Until the suggestion ends whole, a tail that the text after
        the cursor starts with (a ")") is held back: if a later line fails, the suggestion
        ends before it and that tail would be written twice."""
        accepted = self._done_text + self._growing_text
        if not final:
            accepted = accepted[: len(accepted) - overlap(accepted, self._suffix_line)]
        new = accepted[self._emitted :]
        self._emitted = max(self._emitted, len(accepted))
        return new

    def _growing(self, line: str) -> None:
        if not _CODE_MARK.search(line) or line.lstrip().startswith("#"):
            return
        # Judged again only once it grew by a few tokens: each judgement parses the cell.
        if self._growing_text and len(line) - self._judged < _REJUDGE:
            return
        self._judged = len(line)
        if self._passes(self._lines, line):
            self._growing_text = self._chunk(self._lines, line)

    def _line(self, line: str, *, last: bool) -> None:
        index = self._lines
        if self._free_text:
            self._let(index, line)
            return
        if not line.strip() or line.lstrip().startswith("#"):
            self._lines += 1
            if last:
                self.done = True  # blank lines or comments after the code: nothing more
            else:
                self._held.append((index, line))
            return
        if self._small:
            line = _without_comment(line)
        if not self._passes(index, line):
            self.done = True
            return
        if last:
            line = self._without_repeated_tail(index, line)
        self._let(index, line)

    def _without_repeated_tail(self, index: int, line: str) -> str:
        """The last line without a tail the text after the cursor repeats (a ``)`` it
        already has), when that tail is what breaks the cell."""
        k = overlap(line, self._suffix_line)
        if not k or not self._judge_syntax:
            return line
        head = self._prefix + self._done_text
        after = self._suffix_line
        if _status(head + self._chunk(index, line) + after) != "invalid":
            return line
        shorter = line[: len(line) - k].rstrip()
        return shorter if _status(head + self._chunk(index, shorter) + after) != "invalid" else line

    def _chunk(self, index: int, line: str) -> str:
        """The text that lets ``line`` (line ``index``) through, with the lines held for it:
        each line after the suggestion's first starts with its newline."""
        first = self._held[0][0] if self._held else index
        lines = [text for _, text in self._held] + [line]
        return ("\n" if first else "") + "\n".join(lines)

    def _let(self, index: int, line: str) -> None:
        """Line ``index`` is whole and passed."""
        self._done_text += self._chunk(index, line)
        self._growing_text = ""
        self._judged = 0
        self._held = []
        self._lines += 1

    def _passes(self, index: int, line: str) -> bool:
        if reads_as_prose(line):
            return False
        candidate = self._prefix + self._done_text + self._chunk(index, line)
        if self._judge_syntax and _status(candidate) == "invalid":
            return False
        if self._names is None:
            return True
        head = self._prefix.rsplit("\n", 1)[-1] if index == 0 else ""
        return self._names_exist(head, line)

    def _names_exist(self, head: str, line: str) -> bool:
        """Whether every name ``line`` reads (after ``head``, the cell's text before it on
        the same line) is one the user has, or one the line binds."""
        names = self._names
        assert names is not None
        tokens = [
            t
            for t in tokens_until_error(head + line)
            if t.type not in (tokenize.NL, tokenize.NEWLINE)
        ]
        words = [t.string for t in tokens]
        bound = set(self._known) | _words_in(self._done_text)
        for i, tok in enumerate(tokens):
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if tok.type == tokenize.NAME and (
                before in ("def", "class", "as", "for", "lambda", "import", "global")
                or (after == "=" and before != ".")
            ):
                bound.add(tok.string)
        for i, tok in enumerate(tokens):
            mine = tok.start[0] > 1 or tok.start[1] >= len(head)
            if not mine or tok.type != tokenize.NAME or keyword.iskeyword(tok.string):
                continue
            before = words[i - 1] if i else ""
            if before == ".":
                owner = tokens[i - 2] if i >= 2 else None
                named = owner is not None and owner.type == tokenize.NAME
                if named and not self._has_attribute(owner.string, tok.string):  # type: ignore[union-attr]
                    return False
                continue
            if (
                tok.string in bound
                or hasattr(builtins, tok.string)
                or (i + 1 < len(words) and words[i + 1] == "=" and before in ("(", ","))
            ):
                continue
            if tok.string not in names:
                return False
        return True

    def _has_attribute(self, owner: str, attr: str) -> bool:
        names = self._names
        assert names is not None
        if owner in self._known and not names.has(owner):
            return True  # the user's own name, not the kernel's yet: nothing to look into
        if attr in (names.columns(owner) or ()):
            return True
        thing = names.module(owner) if names.is_module(owner) else names.value_type(owner)
        return thing is None or hasattr(thing, attr)


def overlap(text: str, suffix: str) -> int:
    """The length of the longest tail of ``text`` that is a head of ``suffix``."""
    for k in range(min(len(text), len(suffix)), 0, -1):
        if suffix.startswith(text[-k:]):
            return k
    return 0


def _without_comment(line: str) -> str:
    """``line`` without a comment at its end (never one inside a string)."""
    for tok in tokens_until_error(line):
        if tok.type == tokenize.COMMENT:
            return line[: tok.start[1]].rstrip()
    return line
