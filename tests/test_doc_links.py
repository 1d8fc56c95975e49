"""Every relative link of the docs points at a file that exists and, with an #anchor, a heading.

The README links into ``docs/`` and the pages link to each other; a page renamed or a heading
reworded would otherwise leave a dead link that nothing notices.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "SECURITY.md", "BENCHMARKS.md")]
    + list((ROOT / "docs").glob("*.md"))
)

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ID = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a Markdown page, with GitHub's -1, -2 suffixes for repeated headings."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        found.update(HTML_ID.findall(line))
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The link targets of a page, outside code."""
    targets = []
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        targets.extend(LINK.findall(INLINE_CODE.sub("", line)))
    return targets


def dead_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist, one line each."""
    dead = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not dest.exists():
            dead.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
            dead.append(f"{target}: no heading #{anchor} in {dest.name}")
    return dead


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files_and_headings(page: Path) -> None:
    assert dead_links(page) == []


def test_the_checker_finds_a_dead_file_and_a_dead_anchor(tmp_path: Path) -> None:
    twice = "## A `code` heading, twice\n\n"
    (tmp_path / "other.md").write_text("# Other page\n\n" + twice + twice)
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#a-code-heading-twice-1) [ok](#page) [web](https://example.org/x#y)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere) `[in code](missing2.md)`\n\n"
        "```\n[in a fence](missing3.md)\n```\n"
    )
    assert [line.split(":")[0] for line in dead_links(page)] == ["missing.md", "other.md#nowhere"]


def test_the_readme_is_a_front_door() -> None:
    """The README stays short and keeps the two commands CI and newcomers run."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "the README is a front door: move details to docs/"
    assert "./scripts/start.sh" in text and "./scripts/test.sh" in text
    assert "docs/README.md" in text
