"""The parts of a known key: a run of its characters (its last 8, the key without ``sk-``)
is redacted too, found with a few ``str.find`` calls, never a regex."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .names import ABSOLUTE_PATH, REDACTED

# Longer verbatim secrets are still replaced when whole, but do not widen the clipping window.
MAX_MARGIN_SECRET = 4096

# A known key is redacted in part too ("…its last 8 characters", the key without "sk-"): any run
# of its characters past its public prefix that looks like key material (a digit, or both
# cases) and is at least ``_fragment_length`` long: 8, or an eighth of the key past 64
# characters (a 164-character sk-proj- key: 19; what such a run leaves hidden is still far
# beyond guessing, and a fixed 8 would need 2.4 times the needles). Only explicit secrets of
# 20+ characters without spaces that are not a path or URL. Found with needles, not by trying
# every position: pieces of the key every few characters past its prefix, spaced so that any
# such run holds one whole, are looked for with ``str.find`` (memchr-fast), and each hit is
# grown to the run the text and the key share.
_FRAGMENT = 8
_FRAGMENTED_FROM = 20
# "sk-", "sk-proj-", "sk-ant-api03-", "ghp_", "hf_", "xoxb-": published, not secret.
_PUBLIC_PREFIX = re.compile(r"(?:[a-z][a-z0-9]{0,5}[-_]){1,4}")


def _key_material(run: str) -> bool:
    """A digit, or upper and lower case: a word ("production") is no part of a key."""
    return any(c.isdigit() for c in run) or (run.lower() != run and run.upper() != run)


def key_core(secret: str) -> int:
    """Where the part of ``secret`` that is redacted in pieces starts; -1 for none."""
    if not _FRAGMENTED_FROM <= len(secret) <= MAX_MARGIN_SECRET:
        return -1
    if any(c.isspace() for c in secret) or "://" in secret or ABSOLUTE_PATH.fullmatch(secret):
        return -1
    prefix = _PUBLIC_PREFIX.match(secret)
    core = prefix.end() if prefix else 0
    return core if len(secret) - core >= _FRAGMENT and _key_material(secret[core:]) else -1


def _fragment_length(secret: str, core: int) -> int:
    return max(_FRAGMENT, (len(secret) - core) // 8)


def needles(secret: str, core: int) -> Iterator[tuple[str, int]]:
    """Pieces of ``secret`` (and where they start) such that every fragment holds one whole."""
    shortest = _fragment_length(secret, core)
    size = 4 if shortest < 12 else 8  # longer needles are found faster, but need more room
    step = shortest - size + 1
    for q in range(core, len(secret) - size + 1, step):
        yield secret[q : q + size], q


def _shared_run(text: str, at: int, size: int, secret: str, q: int, core: int):
    """The run around ``text[at:at+size] == secret[q:q+size]`` that both share, as ``(start,
    end)`` in ``text`` if it is a fragment of ``secret``, else None."""
    a, b, sa, sb = at, at + size, q, q + size
    while a and sa and text[a - 1] == secret[sa - 1]:
        a, sa = a - 1, sa - 1
    while b < len(text) and sb < len(secret) and text[b] == secret[sb]:
        b, sb = b + 1, sb + 1
    past = max(sa, core)  # the run's part past the public prefix
    if sb - past < _fragment_length(secret, core) or not _key_material(text[a + past - sa : b]):
        return None
    return a, b


def redact_fragments(
    text: str, pieces: dict[str, list[tuple[str, int, int]]], marker: str = REDACTED
) -> str:
    """``text`` with every fragment of a known key in it replaced by ``marker``; ``pieces``:
    each needle of :func:`needles`, with the keys it is a piece of (the key, where the piece
    starts, its core)."""
    runs: list[tuple[int, int]] = []
    for piece, where in pieces.items():
        at = text.find(piece)
        while at >= 0:
            for secret, q, core in where:
                run = _shared_run(text, at, len(piece), secret, q, core)
                if run is not None:
                    runs.append(run)
            at = text.find(piece, at + 1)
    if not runs:
        return text
    out: list[str] = []
    done = 0
    for a, b in sorted(runs):
        if b <= done:
            continue
        if a >= done:
            out += (text[done:a], marker)
        done = b
    out.append(text[done:])
    return "".join(out)
